package proxy

// Long tool loops through a translating seam, under a small context window, as agents run
// them: every round must be accepted by an upstream that checks what the real one checks.

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"longhaul/proxy/gemini"
	"longhaul/proxy/pool"
	"longhaul/proxy/proxytest"
)

// TestAnthropicClientToolLoopOnGeminiKeepsThoughtSignatures runs 30 rounds of an Anthropic
// client's tool loop against a Gemini upstream that refuses a current-turn function call
// without a signature it issued (as the real API does). The Messages shape has no place for
// Gemini's thought signatures, so every round depends on the proxy restoring them; the small
// window makes compaction trim old rounds on the way.
func TestAnthropicClientToolLoopOnGeminiKeepsThoughtSignatures(t *testing.T) {
	cfg := Config{Compaction: CompactionConfig{ContextLimits: map[string]int{"gemini-*": 24000}}}
	s := newSeam(t, cfg, pool.KindGemini)
	tools := `[{"name":"read_file","description":"Read a file","input_schema":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}]`
	messages := []string{`{"role":"user","content":"Read every file of the project, one by one."}`}
	compacted := 0
	for round := range 30 {
		s.gemini.Enqueue(proxytest.GeminiCalls(proxytest.GeminiCall("read_file", map[string]string{"path": fmt.Sprintf("f%d.go", round)})))
		req := `{"model":"gemini-2.5-pro","max_tokens":2048,"thinking":{"type":"enabled","budget_tokens":1024},"tools":` + tools +
			`,"messages":[` + strings.Join(messages, ",") + `]}`
		resp, body := s.post(t, "/v1/messages", req, "Content-Type", "application/json")
		if resp.StatusCode != 200 {
			t.Fatalf("round %d: status %d: %s (upstream rejections: %d)", round, resp.StatusCode, body, s.gemini.Rejected())
		}
		var reply struct {
			Content []json.RawMessage `json:"content"`
		}
		if err := json.Unmarshal([]byte(body), &reply); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		var id string
		for _, b := range reply.Content {
			var blk struct{ Type, ID string }
			json.Unmarshal(b, &blk) //nolint:errcheck // checked below
			if blk.Type == "tool_use" {
				id = blk.ID
			}
		}
		if id == "" {
			t.Fatalf("round %d: no tool_use in %s", round, body)
		}
		content, _ := json.Marshal(reply.Content)
		result, _ := json.Marshal(strings.Repeat(fmt.Sprintf("// file %d: func f() {}\n", round), 120))
		messages = append(messages, `{"role":"assistant","content":`+string(content)+`}`,
			`{"role":"user","content":[{"type":"tool_result","tool_use_id":"`+id+`","content":`+string(result)+`}]}`)
		if ex := s.obs.last(t); len(ex.Compaction) > 0 {
			compacted++
		}
	}
	if n := s.gemini.Rejected(); n != 0 {
		t.Errorf("upstream refused %d requests; want 0", n)
	}
	if compacted == 0 {
		t.Errorf("no round was compacted; the window is meant to force it")
	}
	// The last request's current turn carries a signature the upstream issued, not the
	// validator-skipping placeholder.
	recs := s.gemini.Requests()
	var last gemini.Request
	if err := json.Unmarshal(recs[len(recs)-1].Body, &last); err != nil {
		t.Fatal(err)
	}
	var sig string
	for _, c := range last.Contents {
		for _, p := range c.Parts {
			if p.FunctionCall != nil && p.ThoughtSignature != "" {
				sig = p.ThoughtSignature
			}
		}
	}
	if !s.gemini.Issued(sig) {
		t.Errorf("the last function call went up with signature %q; want one the upstream issued", sig)
	}
}

// TestChatClientToolLoopUnderASmallWindow is the OpenAI analogue of the session test: 40
// rounds of a Chat client's tool loop (assistant tool_calls, then tool messages) on a Chat
// upstream that refuses unanswered calls, under a window small enough that compaction must
// trim old rounds; every round is accepted and what goes up shrinks.
func TestChatClientToolLoopUnderASmallWindow(t *testing.T) {
	cfg := Config{Compaction: CompactionConfig{ContextLimits: map[string]int{"gpt-*": 20000}}}
	s := newSeam(t, cfg, pool.KindOpenAI)
	tools := `[{"type":"function","function":{"name":"run","parameters":{"type":"object","properties":{"cmd":{"type":"string"}},"required":["cmd"]}}}]`
	messages := []string{`{"role":"system","content":"You are a coding agent."}`, `{"role":"user","content":"Run the test suite until it passes."}`}
	var layers = map[string]int{}
	var largest, last int
	for round := range 40 {
		id := fmt.Sprintf("call_%02d", round)
		call := proxytest.ChatCalls(proxytest.ChatToolCall{ID: id, Name: "run", Args: `{"cmd":"go test ./..."}`})
		// The scripted usage is a fixed small count; none at all leaves the estimator to judge
		// the window (a fixed count would teach it the requests are tiny).
		call.Usage = proxytest.ChatUsage{}
		s.chat.Enqueue(proxytest.ChatReply{Completion: call})
		req := `{"model":"gpt-4.1","tools":` + tools + `,"messages":[` + strings.Join(messages, ",") + `]}`
		resp, body := s.post(t, "/v1/chat/completions", req, "Content-Type", "application/json")
		if resp.StatusCode != 200 {
			t.Fatalf("round %d: status %d: %s (upstream rejections %d)", round, resp.StatusCode, body, s.chat.Rejected())
		}
		var c struct {
			Choices []struct {
				Message json.RawMessage `json:"message"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(body), &c); err != nil || len(c.Choices) != 1 || !strings.Contains(string(c.Choices[0].Message), id) {
			t.Fatalf("round %d: no tool call %s in %s", round, id, body)
		}
		output, _ := json.Marshal(strings.Repeat(fmt.Sprintf("--- FAIL: TestRound%d (0.00s)\n    store_test.go:42: got 1, want 2\n", round), 40))
		messages = append(messages, string(c.Choices[0].Message), `{"role":"tool","tool_call_id":"`+id+`","content":`+string(output)+`}`)
		for _, st := range s.obs.last(t).Compaction {
			layers[st.Layer]++
		}
		recs := s.chat.Requests()
		last = len(recs[len(recs)-1].Body)
		largest = max(largest, last)
	}
	if n := s.chat.Rejected(); n != 0 {
		t.Errorf("upstream refused %d requests; want 0", n)
	}
	if layers["Layer-1"] == 0 {
		t.Errorf("compaction steps %v; want Layer-1 to have trimmed old rounds", layers)
	}
	sent := 0
	for _, m := range messages {
		sent += len(m)
	}
	if last >= sent {
		t.Errorf("the last request went up with %d bytes, the conversation is %d; want it compacted", last, sent)
	}
}

// TestGeminiClientToolLoopOnGeminiUnderASmallWindow: a Gemini client's function-calling loop
// (model functionCall turns with their thought signatures, then functionResponse turns) on a
// strict Gemini upstream; compaction trims old rounds through the Messages shape and the
// signatures the client sent come back from its own request.
func TestGeminiClientToolLoopOnGeminiUnderASmallWindow(t *testing.T) {
	cfg := Config{Compaction: CompactionConfig{ContextLimits: map[string]int{"gemini-*": 20000}}}
	s := newSeam(t, cfg, pool.KindGemini)
	tools := `[{"functionDeclarations":[{"name":"read_file","description":"Read a file","parameters":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}]}]`
	contents := []string{`{"role":"user","parts":[{"text":"Read every file of the project."}]}`}
	layers := map[string]int{}
	for round := range 30 {
		s.gemini.Enqueue(proxytest.GeminiCalls(proxytest.GeminiCall("read_file", map[string]string{"path": fmt.Sprintf("f%d.go", round)})))
		req := `{"tools":` + tools + `,"contents":[` + strings.Join(contents, ",") + `]}`
		resp, body := s.post(t, "/v1beta/models/gemini-2.5-pro:generateContent", req, "Content-Type", "application/json")
		if resp.StatusCode != 200 {
			t.Fatalf("round %d: status %d: %s (upstream rejections %d)", round, resp.StatusCode, body, s.gemini.Rejected())
		}
		var r gemini.Response
		if err := json.Unmarshal([]byte(body), &r); err != nil || len(r.Candidates) == 0 || r.Candidates[0].Content == nil {
			t.Fatalf("round %d: %v %s", round, err, body)
		}
		turn, _ := json.Marshal(r.Candidates[0].Content)
		result, _ := json.Marshal(map[string]any{"content": strings.Repeat(fmt.Sprintf("// file %d\n", round), 300)})
		contents = append(contents, string(turn),
			`{"role":"user","parts":[{"functionResponse":{"name":"read_file","response":`+string(result)+`}}]}`)
		for _, st := range s.obs.last(t).Compaction {
			layers[st.Layer]++
		}
	}
	if n := s.gemini.Rejected(); n != 0 {
		t.Errorf("upstream refused %d requests; want 0", n)
	}
	if layers["Layer-1"] == 0 {
		t.Errorf("compaction steps %v; want Layer-1 to have trimmed old rounds", layers)
	}
}
