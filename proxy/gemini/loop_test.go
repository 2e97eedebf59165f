package gemini_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"longhaul/proxy/anthropic"
	"longhaul/proxy/gemini"
	"longhaul/proxy/proxytest"
	"longhaul/proxy/sigcache"
	"longhaul/proxy/sse"
)

const loopModel = "gemini-3-pro-preview"

// loopTools are two of Claude Code's tool definitions, as an Anthropic
// client sends them.
const loopTools = `[
 {"name":"Bash","description":"Run a shell command","input_schema":{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","additionalProperties":false,
   "properties":{"command":{"type":"string"},"timeout":{"type":"number"},"run_in_background":{"type":"boolean"}},"required":["command"]}},
 {"name":"Read","description":"Read a file","input_schema":{"type":"object","additionalProperties":false,
   "properties":{"file_path":{"type":"string"},"offset":{"type":"number"},"limit":{"type":"number"}},"required":["file_path"]}}
]`

type loopClient struct {
	t        *testing.T
	up       *proxytest.GeminiUpstream
	cache    *sigcache.Cache
	session  string
	messages []json.RawMessage
}

func (c *loopClient) request() []byte {
	c.t.Helper()
	msgs, err := json.Marshal(c.messages)
	if err != nil {
		c.t.Fatal(err)
	}
	return []byte(`{"model":"claude-sonnet-4-5","max_tokens":32000,"thinking":{"type":"adaptive"},"tools":` + loopTools + `,"messages":` + string(msgs) + `}`)
}

// How a round reaches the upstream.
const (
	nonStream = iota
	sseStream
	arrayStream
)

// post sends the Messages request to the Gemini upstream, translated, and
// returns the Anthropic-shaped reply (assembled from the stream for the
// stream forms).
func (c *loopClient) post(form int) (reply []byte, status int) {
	c.t.Helper()
	body, err := gemini.RequestFromAnthropic(c.request(), gemini.RequestOptions{
		Signature: func(key string) (string, bool) { return c.cache.RecoverForTool(key, gemini.Family) },
	})
	if err != nil {
		c.t.Fatalf("RequestFromAnthropic: %v", err)
	}
	url := c.up.URL + "/v1beta/models/" + loopModel + ":generateContent"
	switch form {
	case sseStream:
		url = c.up.URL + "/v1beta/models/" + loopModel + ":streamGenerateContent?alt=sse"
	case arrayStream:
		url = c.up.URL + "/v1beta/models/" + loopModel + ":streamGenerateContent"
	}
	resp, err := http.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	onSig := func(key, sig string) { c.cache.Record(c.session, gemini.Family, sig, key) }
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		c.t.Logf("upstream %d: %s", resp.StatusCode, b)
		return b, resp.StatusCode
	}
	if form == nonStream {
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			c.t.Fatal(err)
		}
		out, err := gemini.ReplyToAnthropic(b, gemini.ReplyOptions{Model: loopModel, OnSignature: onSig})
		if err != nil {
			c.t.Fatalf("ReplyToAnthropic: %v", err)
		}
		return out, resp.StatusCode
	}
	tr := gemini.NewStreamToAnthropic(gemini.ReplyOptions{Model: loopModel, OnSignature: onSig})
	rb := anthropic.NewReplyBuilder(1 << 20)
	emit := func(name string, data []byte) error { rb.Add(name, data); return nil }
	next := gemini.NewArrayReader(resp.Body).Next
	if form == sseStream {
		rd := sse.NewReader(resp.Body, 0)
		next = func() (json.RawMessage, error) {
			for {
				ev, err := rd.Next()
				if err != nil || len(ev.Data) > 0 {
					return ev.Data, err
				}
			}
		}
	}
	for {
		chunk, err := next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			c.t.Fatal(err)
		}
		if err := tr.Event("", chunk, emit); err != nil {
			c.t.Fatalf("StreamToAnthropic.Event: %v", err)
		}
	}
	if err := tr.End(emit); err != nil {
		c.t.Fatalf("StreamToAnthropic.End: %v", err)
	}
	out, truncated := rb.Bytes()
	if out == nil || truncated {
		c.t.Fatalf("stream assembled no message (truncated %v)", truncated)
	}
	return out, http.StatusOK
}

type loopReply struct {
	StopReason string            `json:"stop_reason"`
	Content    []json.RawMessage `json:"content"`
}

// TestToolLoopKeepsSignaturesWhenClientDropsThem runs a 30-round
// function-calling loop of an Anthropic client against the strict Gemini
// upstream, the rounds taking turns at non-stream, SSE and array streams.
// The client sends back no Gemini signature: it drops the thinking blocks of
// half its turns and keeps the others as it got them (unsigned). The
// signatures reported by the reply translation and restored by
// RequestFromAnthropic must keep the upstream from ever answering 400.
func TestToolLoopKeepsSignaturesWhenClientDropsThem(t *testing.T) {
	up := proxytest.NewGeminiUpstream()
	defer up.Close()
	c := &loopClient{t: t, up: up, cache: sigcache.New(sigcache.Options{}), session: "s1",
		messages: []json.RawMessage{json.RawMessage(`{"role":"user","content":"List the repository and read the README."}`)}}

	const rounds = 30
	for i := 0; i < rounds; i++ {
		up.Enqueue(proxytest.GeminiCalls(proxytest.GeminiCall("Bash", map[string]any{"command": fmt.Sprintf("ls step%d", i)})))
	}
	up.Enqueue(proxytest.GeminiText("All done."))

	for i := 0; i <= rounds; i++ {
		raw, status := c.post(i % 3)
		if status != http.StatusOK {
			t.Fatalf("round %d: upstream answered %d", i, status)
		}
		var r loopReply
		if err := json.Unmarshal(raw, &r); err != nil {
			t.Fatalf("round %d: reply %s: %v", i, raw, err)
		}
		if i == rounds {
			if r.StopReason != "end_turn" {
				t.Fatalf("last round stop_reason = %q; want end_turn", r.StopReason)
			}
			break
		}
		if r.StopReason != "tool_use" {
			t.Fatalf("round %d stop_reason = %q; want tool_use (%s)", i, r.StopReason, raw)
		}
		var kept []json.RawMessage
		var results []string
		sawThinking := false
		for _, b := range r.Content {
			var blk struct {
				Type, ID string
			}
			json.Unmarshal(b, &blk) //nolint:errcheck // the reply was parsed above
			switch blk.Type {
			case "thinking":
				sawThinking = true
				if i%2 == 1 { // some clients send thinking back as they got it, others drop it
					kept = append(kept, b)
				}
			case "tool_use":
				kept = append(kept, b)
				results = append(results, fmt.Sprintf(`{"type":"tool_result","tool_use_id":%q,"content":"output %d"}`, blk.ID, i))
			default:
				kept = append(kept, b)
			}
		}
		if !sawThinking {
			t.Errorf("round %d: the reply carried no thinking block", i)
		}
		am, _ := json.Marshal(map[string]any{"role": "assistant", "content": kept})
		c.messages = append(c.messages, am, json.RawMessage(`{"role":"user","content":[`+strings.Join(results, ",")+`]}`))
	}
	if n := up.Rejected(); n != 0 {
		t.Fatalf("upstream rejected %d requests; want 0", n)
	}

	for i, r := range up.Requests() {
		if bytes.Contains(r.Body, []byte("Let me use a tool.")) {
			t.Errorf("request %d carried thinking back to Gemini", i)
		}
	}

	// Every function call of the last request went back with the very
	// signature the upstream issued for it, not the placeholder.
	reqs := up.Requests()
	var last gemini.Request
	if err := json.Unmarshal(reqs[len(reqs)-1].Body, &last); err != nil {
		t.Fatal(err)
	}
	restored := 0
	for _, content := range last.Contents {
		for _, p := range content.Parts {
			if p.FunctionCall != nil {
				if !up.Issued(p.ThoughtSignature) {
					t.Errorf("call %s went back with signature %q, not one the upstream issued", p.FunctionCall.Args, p.ThoughtSignature)
				}
				restored++
			}
		}
	}
	if restored != rounds {
		t.Errorf("last request has %d function calls with issued signatures; want %d", restored, rounds)
	}
	if got := c.cache.Stats().ToolRecoveries; got < rounds {
		t.Errorf("signature cache counted %d tool recoveries; want at least %d", got, rounds)
	}

	// The checks are real: the same history with the signatures stripped is
	// refused, and so is one with a signature the upstream never issued.
	body, err := gemini.RequestFromAnthropic(c.request(), gemini.RequestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	stripped := bytes.ReplaceAll(body, []byte(`"thoughtSignature":"`+gemini.SkipSignatureValidator+`"`), []byte(`"thought":false`))
	for name, b := range map[string][]byte{
		"missing": stripped,
		"foreign": bytes.ReplaceAll(body, []byte(gemini.SkipSignatureValidator), []byte("c2lnbmVkIGJ5IHNvbWVvbmUgZWxzZQ==")),
	} {
		resp, err := http.Post(up.URL+"/v1beta/models/"+loopModel+":generateContent", "application/json", bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		msg, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(msg), "INVALID_ARGUMENT") {
			t.Errorf("%s signature: upstream answered %d %s; want 400 INVALID_ARGUMENT", name, resp.StatusCode, msg)
		}
	}
}
