package compact

import (
	"context"
	"encoding/json"
	"fmt"
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

// A history longer than the summary model can read is cut: the first message (the task) and
// the latest, in order, within the bound, whatever one message holds.
func TestSummaryTranscriptIsBounded(t *testing.T) {
	var msgs []string
	for i := range 2000 {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		msgs = append(msgs, fmt.Sprintf(`{"role":%q,"content":"message %d %s"}`, role, i, strings.Repeat("x", 100)))
	}
	huge := `{"role":"user","content":"` + strings.Repeat("y", 1<<20) + `"}`
	for _, tc := range []struct {
		name   string
		msgs   []string
		budget int
	}{
		{"many messages", msgs, 32 << 10},
		{"one huge message last", append(msgs[:10:10], huge), 32 << 10},
		{"one huge message first", append([]string{huge}, msgs[:10]...), 32 << 10},
		{"everything fits", msgs[:20], 32 << 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := mustParse(t, []byte(`{"model":"m","messages":[`+strings.Join(tc.msgs, ",")+`]}`))
			s := &HTTPSummarizer{MaxTranscriptBytes: tc.budget}
			tr := s.transcript(History{Messages: r.Messages})
			if len(tr) > tc.budget+1024 {
				t.Errorf("transcript of %d bytes; want at most about %d", len(tr), tc.budget)
			}
			first, last := r.Messages[0].Text(), r.Messages[len(r.Messages)-1].Text()
			if !strings.Contains(tr, first[:min(len(first), 100)]) || !strings.Contains(tr, last[:min(len(last), 100)]) {
				t.Errorf("transcript lacks the first or the last message:\n%.500s", tr)
			}
			cut := strings.Contains(tr, "left out")
			if wantCut := tc.name == "many messages" || tc.name == "one huge message last"; cut != wantCut {
				t.Errorf("transcript says messages were left out: %v; want %v", cut, wantCut)
			}
			prev := -1
			for i := range len(tc.msgs) {
				if at := strings.Index(tr, fmt.Sprintf("message %d ", i)); at >= 0 {
					if at < prev {
						t.Fatalf("message %d is out of order in the transcript", i)
					}
					prev = at
				}
			}
		})
	}
}
