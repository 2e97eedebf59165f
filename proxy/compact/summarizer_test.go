package compact

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"longhaul/proxy/proxytest"
)

func TestHTTPSummarizer(t *testing.T) {
	up := proxytest.NewUpstream()
	defer up.Close()
	up.Enqueue(proxytest.Reply{Message: proxytest.TextMessage("claude-haiku-4-5", "<conversation_summary><current_work>tests</current_work></conversation_summary>")})
	s := &HTTPSummarizer{BaseURL: up.URL, APIKey: "sk-test", Model: "claude-haiku-4-5"}
	r := mustParse(t, session(3, `,{"role":"user","content":"继续"}`))
	got, err := s.Summarize(context.Background(), History{Messages: r.Messages, LatestSignature: "sig2"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "<current_work>tests</current_work>") {
		t.Errorf("Summarize = %q", got)
	}
	rec := up.LastRequest()
	if rec.Path != "/v1/messages" || rec.Header.Get("x-api-key") != "sk-test" || rec.Header.Get("anthropic-version") == "" {
		t.Errorf("request = %s %s, headers %v", rec.Method, rec.Path, rec.Header)
	}
	var call summaryCall
	if err := json.Unmarshal(rec.Body, &call); err != nil {
		t.Fatal(err)
	}
	tr := call.Messages[0].Content
	if call.Model != "claude-haiku-4-5" || !strings.Contains(tr, `<tool_use name="Read">`) || !strings.Contains(tr, "继续") || !strings.Contains(tr, "sig2") {
		t.Errorf("summary call = model %q, transcript:\n%s", call.Model, tr)
	}
	if strings.Contains(tr, "thinking about round") {
		t.Errorf("transcript carries thinking text")
	}
}

func TestHTTPSummarizerError(t *testing.T) {
	up := proxytest.NewUpstream()
	defer up.Close()
	up.Enqueue(proxytest.Overloaded())
	s := &HTTPSummarizer{BaseURL: up.URL, Model: "m"}
	_, err := s.Summarize(context.Background(), History{})
	if err == nil || !strings.Contains(err.Error(), "529") || !strings.Contains(err.Error(), "overloaded_error") {
		t.Errorf("Summarize error = %v; want the HTTP 529 overloaded_error", err)
	}
}

func TestPipelineWithHTTPSummarizer(t *testing.T) {
	up := proxytest.NewUpstream()
	defer up.Close()
	up.SetDefault(proxytest.Reply{Message: proxytest.TextMessage("m", "<conversation_summary>ok</conversation_summary>")})
	body := proxytest.ClaudeCodeRequest(800<<10, true)
	p := NewPipeline(Options{Limits: NewLimits(nil, 20_000), Summarizer: &HTTPSummarizer{BaseURL: up.URL, Model: "m"}})
	for range 3 {
		res, err := p.Run(context.Background(), Input{Body: body, Session: "sess"})
		if err != nil {
			t.Fatal(err)
		}
		checkValid(t, body, res.Body)
	}
	if n := len(up.Requests()); n != 1 {
		t.Errorf("summary model called %d times for 3 identical requests; want 1", n)
	}
}
