package proxy

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"longhaul/proxy/compact"
	"longhaul/proxy/pool"
	"longhaul/proxy/proxytest"
)

// An upstream whose window is smaller than every configured one refuses a long request once:
// the proxy learns the window, compacts the request to it and retries, the client never sees
// the refusal, and the session's next request is compacted for that window from the start.
func TestUpstreamWindowIsLearnedFromItsRefusal(t *testing.T) {
	f := newRotationFixture(t, 1, Config{})
	const window = 60_000
	body := string(proxytest.ClaudeCodeRequest(600<<10, false))
	tooLong := proxytest.Reply{Status: 400, Body: fmt.Appendf(nil,
		`{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 171000 tokens > %d maximum"}}`, window)}
	f.ups[0].Enqueue(tooLong)
	// Claude Code sends the 1M beta on every request.
	resp, err := http.DefaultClient.Do(mustRequest(t, f.front.URL+"/v1/messages", body, "Anthropic-Beta", "context-1m-2025-08-07"))
	if err != nil {
		t.Fatal(err)
	}
	got := readAll(t, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d %s; want the retry's answer", resp.StatusCode, got)
	}
	var ex Exchange
	waitFor(t, "the client's exchange", func() bool {
		ex = f.obs.last(t)
		return ex.Route == "messages"
	})
	if ex.ContextLimit != window || ex.ContextLimitSource != compact.WindowLearned {
		t.Errorf("context limit %d (%s); want the learned %d", ex.ContextLimit, ex.ContextLimitSource, window)
	}
	if len(ex.Attempts) != 2 || ex.Attempts[0].Status != 400 || ex.Attempts[1].Status != 200 ||
		ex.Attempts[0].AccountID != ex.Attempts[1].AccountID {
		t.Errorf("attempts %+v; want a refusal then the same account's answer", ex.Attempts)
	}
	if ex.TokensAfter > window {
		t.Errorf("forwarded about %d tokens on retry; want at most the learned %d", ex.TokensAfter, window)
	}
	if n := len(ex.ForwardedBody); n == 0 || n >= len(body) {
		t.Errorf("the retry sent %d bytes; want it compacted below the %d received", n, len(body))
	}
	if lw := f.srv.LearnedWindows(); len(lw) != 1 || lw[0].Tokens != window || lw[0].AccountID != 1 {
		t.Errorf("learned windows %+v; want account 1's %d", lw, window)
	}

	// The next request of the session is compacted for the learned window before it is sent.
	before := len(f.ups[0].Requests())
	resp2, err := http.DefaultClient.Do(mustRequest(t, f.front.URL+"/v1/messages", body, "Anthropic-Beta", "context-1m-2025-08-07"))
	if err != nil {
		t.Fatal(err)
	}
	readAll(t, resp2.Body)
	resp2.Body.Close()
	ex2 := f.obs.last(t)
	if resp2.StatusCode != 200 || ex2.ContextLimit != window || len(ex2.Attempts) != 1 {
		t.Errorf("next request: status %d, limit %d, %d attempts; want one attempt compacted for %d",
			resp2.StatusCode, ex2.ContextLimit, len(ex2.Attempts), window)
	}
	if n := len(f.ups[0].Requests()) - before; n < 1 {
		t.Errorf("upstream got %d requests", n)
	}
}

// A refusal that names no window still teaches one: a tenth below what was sent.
func TestTooLongWithoutNumbers(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   string
		window int
		ok     bool
	}{
		{"anthropic", 400, `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 205000 tokens > 200000 maximum"}}`, 200000, true},
		{"gemini", 400, `{"type":"error","error":{"type":"invalid_request_error","message":"The input token count (1234567) exceeds the maximum number of tokens allowed (1048576)."}}`, 1048576, true},
		{"openai words only", 400, `{"type":"error","error":{"type":"invalid_request_error","message":"Your input exceeds the context window of this model."}}`, 0, true},
		{"another 400", 400, `{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: must be positive"}}`, 0, false},
		{"a 500 never", 500, `{"type":"error","error":{"type":"api_error","message":"prompt is too long: 1 tokens > 0 maximum"}}`, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &upstreamFailure{status: tt.status, body: []byte(tt.body), up: upstreamFor(pool.KindAnthropic)}
			w, ok := f.tooLong()
			if w != tt.window || ok != tt.ok {
				t.Errorf("tooLong = %d, %v; want %d, %v", w, ok, tt.window, tt.ok)
			}
		})
	}
}

func mustRequest(t *testing.T, url, body string, header ...string) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return req
}

// A refusal that names no window teaches a tenth below what was sent, and the retry fits it.
func TestWindowLearnedFromARefusalWithoutNumbers(t *testing.T) {
	f := newRotationFixture(t, 1, Config{})
	body := string(proxytest.ClaudeCodeRequest(400<<10, false))
	f.ups[0].Enqueue(proxytest.Reply{Status: 400, Body: []byte(
		`{"type":"error","error":{"type":"invalid_request_error","message":"Your input exceeds the context window of this model."}}`)})
	resp, err := http.DefaultClient.Do(mustRequest(t, f.front.URL+"/v1/messages", body))
	if err != nil {
		t.Fatal(err)
	}
	readAll(t, resp.Body)
	resp.Body.Close()
	lw := f.srv.LearnedWindows()
	if resp.StatusCode != 200 || len(lw) != 1 {
		t.Fatalf("status %d, learned %+v; want the retry's 200 and one window", resp.StatusCode, lw)
	}
	// About 400 KB at ~4 bytes a token, less a tenth: far below the 200k default, well above nothing.
	if lw[0].Tokens < minLearnedWindow || lw[0].Tokens > 100_000 {
		t.Errorf("learned %d tokens from a refusal of a ~100k-token request; want about 90k", lw[0].Tokens)
	}
	if ex := f.obs.last(t); ex.ContextLimit != lw[0].Tokens || ex.ContextLimitSource != compact.WindowLearned {
		t.Errorf("the retry was compacted for %d (%s); want the learned %d", ex.ContextLimit, ex.ContextLimitSource, lw[0].Tokens)
	}
}
