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
