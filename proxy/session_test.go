package proxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"longhaul/proxy/pool"
	"longhaul/proxy/proxytest"
	"longhaul/proxy/sse"
)

// sessionUpstream plays an Anthropic API with a real context limit: it counts
// every request's tokens with its own tokenizer (not Longhaul's estimator),
// refuses one over the limit as the real API does, issues a fresh thinking
// signature and tool call per turn, checks that every signature it is sent is
// one it issued, and answers Layer-3 summary calls.
type sessionUpstream struct {
	limit int

	mu           sync.Mutex
	issued       map[string]bool
	forwarded    [][]byte // main requests as received, in order
	tokens       []int
	summaryCalls int
	violations   []string
}

func (u *sessionUpstream) violate(format string, args ...any) {
	u.violations = append(u.violations, fmt.Sprintf(format, args...))
}

func (u *sessionUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	var req struct {
		Model    string            `json:"model"`
		System   json.RawMessage   `json:"system"`
		Messages []json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if bytes.Contains(req.System, []byte("conversation_summary")) {
		u.summaryCalls++
		summary := fmt.Sprintf("<conversation_summary><primary_request_and_intent>refactor the store</primary_request_and_intent>"+
			"<current_work>summary %d of %d messages</current_work></conversation_summary>", u.summaryCalls, len(req.Messages))
		w.Header().Set("Content-Type", "application/json")
		w.Write(proxytest.TextMessage(req.Model, summary).JSON())
		return
	}
	n := len(u.forwarded)
	u.forwarded = append(u.forwarded, body)
	tokens := upstreamTokens(body)
	u.tokens = append(u.tokens, tokens)
	if tokens > u.limit {
		u.violate("request %d reached the upstream with %d tokens > limit %d", n, tokens, u.limit)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: %d tokens > %d maximum"}}`, tokens, u.limit)
		return
	}
	for _, m := range req.Messages {
		var msg struct {
			Content json.RawMessage `json:"content"`
		}
		json.Unmarshal(m, &msg)
		var blocks []struct{ Type, Signature string }
		json.Unmarshal(msg.Content, &blocks)
		for _, b := range blocks {
			if b.Type == "thinking" && !u.issued[b.Signature] {
				u.violate("request %d carries thinking signature %q the upstream never issued", n, b.Signature)
			}
		}
	}
	sig := fmt.Sprintf("EqSig%03d%s", n, strings.Repeat("Zm9vYmFy", 20))
	u.issued[sig] = true
	msg := &proxytest.Message{
		Model: req.Model,
		Content: []proxytest.Block{
			proxytest.Thinking(fmt.Sprintf("Turn %d. The previous output looks right; next I read file %d to check the callers before editing.", n, n), sig),
			proxytest.ToolUse(fmt.Sprintf("toolu_%04d", n), "Read", map[string]any{"path": fmt.Sprintf("/src/store/file_%d.go", n)}),
		},
		Usage: proxytest.Usage{InputTokens: tokens, OutputTokens: 60},
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Write(msg.SSE())
}

// upstreamTokens is the scripted upstream's tokenizer: every string value of
// the prompt (keys and signatures aside), ~3.6 ASCII characters per token and
// 0.7 tokens per other character, plus 3 per message. It is deliberately not
// the estimator's formula, so calibration has something to learn.
func upstreamTokens(body []byte) int {
	var v map[string]any
	json.Unmarshal(body, &v)
	var ascii, other, msgs int
	var walk func(key string, x any)
	walk = func(key string, x any) {
		switch t := x.(type) {
		case string:
			if key == "signature" {
				return
			}
			n := utf8.RuneCountInString(t)
			a := 0
			for i := 0; i < len(t); i++ {
				if t[i] < utf8.RuneSelf {
					a++
				}
			}
			ascii += a
			other += n - a
		case []any:
			for _, e := range t {
				walk(key, e)
			}
		case map[string]any:
			for k, e := range t {
				walk(k, e)
			}
		}
	}
	walk("", v["system"])
	walk("", v["tools"])
	if m, ok := v["messages"].([]any); ok {
		msgs = len(m)
		walk("", m)
	}
	return int(float64(ascii)/3.6+float64(other)*0.7) + 3*msgs
}

// sessionClient keeps a conversation the way a coding agent does: it resends
// the whole history every turn and appends the reply and a tool result.
type sessionClient struct {
	messages []json.RawMessage
}

func (c *sessionClient) body() []byte {
	tools := `[{"name":"Read","description":"Reads a file from the workspace.","input_schema":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}]`
	return []byte(`{"model":"claude-sonnet-4-5","max_tokens":8000,"stream":true,` +
		`"thinking":{"type":"enabled","budget_tokens":4000},` +
		`"metadata":{"user_id":"user_ab12_account_cd34_session_5e6f7a8b-0000-4000-8000-00000000beef"},` +
		`"system":[{"type":"text","text":"You are a coding agent working in a Go repository.","cache_control":{"type":"ephemeral"}}],` +
		`"tools":` + tools + `,"messages":[` + string(bytes.Join(c.messagesBytes(), []byte(","))) + `]}`)
}

func (c *sessionClient) messagesBytes() [][]byte {
	out := make([][]byte, len(c.messages))
	for i, m := range c.messages {
		out[i] = m
	}
	return out
}

// readReply rebuilds the assistant turn from the stream, as a client does.
func readReply(tb testing.TB, r io.Reader) []map[string]any {
	tb.Helper()
	rd := sse.NewReader(r, 0)
	var blocks []map[string]any
	partial := map[int]*strings.Builder{}
	for {
		ev, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			tb.Fatalf("read reply: %v", err)
		}
		var v struct {
			Index int            `json:"index"`
			Block map[string]any `json:"content_block"`
			Delta struct {
				Type, Thinking, Signature, Text, PartialJSON string
			} `json:"delta"`
		}
		json.Unmarshal(ev.Data, &v)
		var raw struct {
			Delta struct {
				PartialJSON string `json:"partial_json"`
			} `json:"delta"`
		}
		json.Unmarshal(ev.Data, &raw)
		switch ev.Name {
		case "content_block_start":
			blocks = append(blocks, v.Block)
			partial[v.Index] = &strings.Builder{}
		case "content_block_delta":
			b := blocks[v.Index]
			switch v.Delta.Type {
			case "thinking_delta":
				b["thinking"] = b["thinking"].(string) + v.Delta.Thinking
			case "signature_delta":
				b["signature"] = v.Delta.Signature
			case "text_delta":
				b["text"] = b["text"].(string) + v.Delta.Text
			case "input_json_delta":
				partial[v.Index].WriteString(raw.Delta.PartialJSON)
			}
		case "content_block_stop":
			if b := blocks[v.Index]; b["type"] == "tool_use" && partial[v.Index].Len() > 0 {
				var in any
				json.Unmarshal([]byte(partial[v.Index].String()), &in)
				b["input"] = in
			}
		case "error":
			tb.Fatalf("in-band error: %s", ev.Data)
		}
	}
	return blocks
}

func mustJSON(tb testing.TB, v any) json.RawMessage {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// toolOutput is a deterministic tool result of about n characters: Go code
// with a little CJK, like a real file read.
func toolOutput(turn, n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "%4d\tfunc step%d_%d(ctx context.Context) error { return nil } // 检查 turn %d\n", i, turn, i, turn)
	}
	return b.String()
}

// TestSessionCompactsThroughTheProxy drives 60 turns of a growing tool-loop
// session through the real proxy against an upstream with a 20,000-token
// window: the middle turns read huge files, forcing Layer 3.
func TestSessionCompactsThroughTheProxy(t *testing.T) {
	const limit, turns = 20_000, 60
	up := &sessionUpstream{limit: limit, issued: map[string]bool{}}
	upstream := httptest.NewServer(up)
	defer upstream.Close()
	obs := newRecorder()
	srv, err := New(Config{Compaction: CompactionConfig{ContextLimits: map[string]int{"claude-*": limit}}}, Options{Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	srv.SetAccounts([]pool.Account{{ID: 1, Label: "main", BaseURL: upstream.URL, Secret: "sk-ant-session-test-0001", Enabled: true}})
	front := httptest.NewServer(srv.Handler())
	defer front.Close()

	c := &sessionClient{messages: []json.RawMessage{mustJSON(t, map[string]any{"role": "user", "content": "Refactor the store package and fix the failing tests."})}}
	for turn := range turns {
		resp, err := front.Client().Post(front.URL+"/v1/messages", "application/json", bytes.NewReader(c.body()))
		if err != nil {
			t.Fatalf("turn %d: %v", turn, err)
		}
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("turn %d: status %d: %s", turn, resp.StatusCode, readAll(t, resp.Body))
		}
		blocks := readReply(t, resp.Body)
		resp.Body.Close()
		if len(blocks) != 2 || blocks[0]["type"] != "thinking" || blocks[1]["type"] != "tool_use" {
			t.Fatalf("turn %d: reply blocks = %v", turn, blocks)
		}
		// Every seventh turn the client keeps the thinking but drops its
		// signature (some clients do): the proxy must restore it.
		if turn%7 == 3 {
			delete(blocks[0], "signature")
		}
		size := 3000
		if turn >= 30 && turn < 45 {
			size = 12000 // a stretch of huge file reads
		}
		c.messages = append(c.messages,
			mustJSON(t, map[string]any{"role": "assistant", "content": blocks}),
			mustJSON(t, map[string]any{"role": "user", "content": []any{map[string]any{
				"type": "tool_result", "tool_use_id": blocks[1]["id"], "content": toolOutput(turn, size)}}}))
	}

	up.mu.Lock()
	defer up.mu.Unlock()
	for _, v := range up.violations {
		t.Error(v)
	}
	if len(up.forwarded) != turns {
		t.Fatalf("upstream saw %d main requests; want %d", len(up.forwarded), turns)
	}
	obs.mu.Lock()
	var exs, summaries []Exchange
	for _, ex := range obs.finished {
		if ex.Route == "summary" {
			summaries = append(summaries, ex)
		} else {
			exs = append(exs, ex)
		}
	}
	obs.mu.Unlock()
	if len(exs) != turns {
		t.Fatalf("%d exchanges finished; want %d", len(exs), turns)
	}
	// Every summary call is recorded as a child of the request it compacted, with its tokens.
	ids := map[string]bool{}
	for _, ex := range exs {
		ids[ex.ID] = true
	}
	if len(summaries) == 0 {
		t.Error("no summary call was recorded")
	}
	for _, sum := range summaries {
		if !ids[sum.ParentID] || sum.Status != 200 || sum.Usage.InputTokens == 0 || len(sum.Attempts) == 0 {
			t.Errorf("summary exchange %s: parent %q, status %d, usage %+v, attempts %d; want a child of a main request with its tokens",
				sum.ID, sum.ParentID, sum.Status, sum.Usage, len(sum.Attempts))
		}
	}

	var l1, l3, l3Hits, recovered, breaks int
	prevL1 := -1
	prevL3 := false
	for i, ex := range exs {
		recovered += ex.SignatureRecoveries
		l1Items, hasL3, newSummary, hasL2 := -1, false, false, false
		for _, st := range ex.Compaction {
			switch st.Layer {
			case "Layer-1":
				l1Items = st.Items
				l1++
			case "Layer-2":
				hasL2 = true
			case "Layer-3":
				hasL3 = true
				l3++
				if st.CacheHit {
					l3Hits++
				} else {
					newSummary = true
				}
			}
		}
		if ex.TokensAfter > limit {
			t.Errorf("turn %d: forwarded estimate %d over the limit %d", i, ex.TokensAfter, limit)
		}
		if i > 0 {
			prev, cur := messagesOf(t, up.forwarded[i-1]), messagesOf(t, up.forwarded[i])
			if !isPrefix(prev, cur) {
				breaks++
				moved := newSummary || (hasL3 && !prevL3) || hasL2 || (l1Items >= 0 && l1Items != prevL1)
				if !moved {
					t.Errorf("turn %d: forwarded prefix changed but no compaction boundary moved (steps %+v)", i, ex.Compaction)
				}
			}
		}
		prevL1, prevL3 = l1Items, hasL3
	}
	t.Logf("60 turns: Layer-1 ran %d times, Layer-3 %d (%d from cache), summary calls %d, prefix breaks %d, signatures recovered %d; upstream tokens first/peak %d/%d",
		l1, l3, l3Hits, up.summaryCalls, breaks, recovered, up.tokens[0], maxInt(up.tokens))
	if l1 == 0 || l3 == 0 {
		t.Errorf("Layer-1 ran %d times and Layer-3 %d; the session should need both", l1, l3)
	}
	if up.summaryCalls == 0 || up.summaryCalls > 8 || up.summaryCalls >= l3 {
		t.Errorf("summary model called %d times for %d Layer-3 requests; want a bounded number, fewer than the requests", up.summaryCalls, l3)
	}
	if breaks > turns/3 {
		t.Errorf("the forwarded prefix changed on %d of %d turns; boundaries should move in steps", breaks, turns)
	}
	if recovered == 0 {
		t.Error("no signature was recovered from the cache, though the client dropped some")
	}
}

func messagesOf(tb testing.TB, body []byte) []json.RawMessage {
	tb.Helper()
	var v struct {
		Messages []json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(body, &v); err != nil {
		tb.Fatalf("forwarded body: %v", err)
	}
	return v.Messages
}

func isPrefix(prev, cur []json.RawMessage) bool {
	if len(prev) > len(cur) {
		return false
	}
	for i := range prev {
		if !bytes.Equal(prev[i], cur[i]) {
			return false
		}
	}
	return true
}

func maxInt(xs []int) int {
	m := 0
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}
