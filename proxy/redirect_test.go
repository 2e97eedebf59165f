package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"longhaul/proxy/pool"
	"longhaul/proxy/proxytest"
)

// querySecret is what a redirect's Location carries in its query: a key, as Gemini's ?key=
// would be. It must reach neither the client nor the record.
const querySecret = "AIza-redirect-query-secret-0042"

// redirectPair is the scripted upstream that answers every request with a redirect to a
// second server, and that second server, which counts what reaches it.
type redirectPair struct {
	redirecting *httptest.Server
	hits        atomic.Int64 // requests the redirecting upstream got
	elsewhere   *httptest.Server
	followed    atomic.Int64 // requests that reached the redirect's target
}

func newRedirectPair(tb testing.TB, status int) *redirectPair {
	tb.Helper()
	p := &redirectPair{}
	p.elsewhere = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.followed.Add(1)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"stolen":true}`)
	}))
	p.redirecting = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.hits.Add(1)
		w.Header().Set("Location", p.elsewhere.URL+r.URL.Path+"?key="+querySecret)
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(status)
		fmt.Fprint(w, `<a href="elsewhere">Moved</a>`)
	}))
	tb.Cleanup(func() {
		p.redirecting.Close()
		p.elsewhere.Close()
	})
	return p
}

// baseURL is the redirecting upstream as an account of kind would name it.
func (p *redirectPair) baseURL(kind string) string {
	if kind == pool.KindOpenAI || kind == pool.KindOpenAIResponses {
		return p.redirecting.URL + "/v1"
	}
	return p.redirecting.URL
}

// errorMessage reads the message of an error body in any of the client protocols' shapes:
// Anthropic's {"type":"error","error":{"type":"api_error",…}}, OpenAI's {"error":{"message",
// "type"}}, Gemini's {"error":{"code":502,"status",…}}; it fails the test when body is not in
// the shape of protocol.
func errorMessage(tb testing.TB, protocol, body string) string {
	tb.Helper()
	var e struct {
		Type  string `json:"type"`
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
			Code    any    `json:"code"`
			Status  string `json:"status"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &e); err != nil || e.Error.Message == "" {
		tb.Fatalf("error body %q: %v; want an error with a message", body, err)
	}
	var ok bool
	switch protocol {
	case ProtocolAnthropic:
		ok = e.Type == "error" && e.Error.Type == "api_error"
	case ProtocolOpenAIChat:
		ok = e.Type == "" && e.Error.Type != "" && e.Error.Status == ""
	case ProtocolGemini:
		ok = e.Type == "" && e.Error.Code == float64(http.StatusBadGateway) && e.Error.Status != ""
	}
	if !ok {
		tb.Fatalf("error body %s is not in %s's shape", body, protocol)
	}
	return e.Error.Message
}

// An upstream's 3xx is never followed (the account's key and the prompt would go to its
// Location) nor relayed (the client would follow it with its own key and the prompt): the
// client gets a 502 in its own protocol naming the redirect's status and target host, and
// nothing reaches the target.
func TestUpstreamRedirectIsNeitherFollowedNorRelayed(t *testing.T) {
	routes := []struct {
		name, protocol, kind string
		path                 func(stream bool) string
		body                 func(stream bool) string
	}{
		{"messages on an anthropic account", ProtocolAnthropic, pool.KindAnthropic,
			func(bool) string { return "/v1/messages" },
			func(stream bool) string {
				return fmt.Sprintf(`{"model":"claude-sonnet-4-5","max_tokens":64,"stream":%t,"messages":[{"role":"user","content":"hi"}]}`, stream)
			}},
		{"chat completions on a chat account", ProtocolOpenAIChat, pool.KindOpenAI,
			func(bool) string { return "/v1/chat/completions" },
			func(stream bool) string {
				return fmt.Sprintf(`{"model":"gpt-4o","stream":%t,"messages":[{"role":"user","content":"hi"}]}`, stream)
			}},
		{"gemini on a gemini account", ProtocolGemini, pool.KindGemini,
			func(stream bool) string {
				if stream {
					return "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
				}
				return "/v1beta/models/gemini-2.5-pro:generateContent"
			},
			func(bool) string { return `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}` }},
		{"messages translated for a gemini account", ProtocolAnthropic, pool.KindGemini,
			func(bool) string { return "/v1/messages" },
			func(stream bool) string {
				return fmt.Sprintf(`{"model":"gemini-2.5-pro","max_tokens":64,"stream":%t,"messages":[{"role":"user","content":"hi"}]}`, stream)
			}},
	}
	for _, status := range []int{http.StatusMovedPermanently, http.StatusFound, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		for _, route := range routes {
			for _, stream := range []bool{false, true} {
				t.Run(fmt.Sprintf("%d %s stream=%t", status, route.name, stream), func(t *testing.T) {
					p := newRedirectPair(t, status)
					f := newFixture(t, Config{}, pool.Account{ID: 1, Label: "moved", Kind: route.kind, BaseURL: p.baseURL(route.kind), Secret: "sk-redirected-account-key-0001", Enabled: true})
					resp := f.post(t, route.path(stream), route.body(stream), "Content-Type", "application/json")
					body := readAll(t, resp.Body)
					if resp.StatusCode != http.StatusBadGateway {
						t.Fatalf("status %d %s; want 502", resp.StatusCode, body)
					}
					if loc := resp.Header.Get("Location"); loc != "" {
						t.Errorf("Location %q relayed to the client", loc)
					}
					msg := errorMessage(t, route.protocol, body)
					target, err := url.Parse(p.elsewhere.URL)
					if err != nil {
						t.Fatal(err)
					}
					if !strings.Contains(msg, fmt.Sprintf("redirected (%d", status)) || !strings.Contains(msg, target.Host) {
						t.Errorf("message %q; want the redirect's status %d and its target host %s", msg, status, target.Host)
					}
					if strings.Contains(body, querySecret) || strings.Contains(body, "?key=") {
						t.Errorf("body %q names the redirect's query", body)
					}
					if n := p.followed.Load(); n != 0 {
						t.Errorf("the redirect's target got %d requests; want none", n)
					}
					if n := p.hits.Load(); n != 1 {
						t.Errorf("the redirecting upstream got %d requests; want 1 (one account, one attempt)", n)
					}
					ex := f.obs.last(t)
					if ex.Status != http.StatusBadGateway || len(ex.Attempts) != 1 || ex.Attempts[0].Status != status ||
						!strings.Contains(ex.Attempts[0].Error, target.Host) || strings.Contains(ex.ErrorMessage+ex.Attempts[0].Error, querySecret) {
						t.Errorf("exchange status %d attempts %+v message %q; want 502 after one %d attempt naming %s, no query",
							ex.Status, ex.Attempts, ex.ErrorMessage, status, target.Host)
					}
				})
			}
		}
	}
}

// A redirect is the account's failure, not the request's: another account takes the request,
// and the redirecting one cools down like an overloaded one, so the next requests do not pay
// its round trip.
func TestUpstreamRedirectRotatesAndCoolsTheAccount(t *testing.T) {
	p := newRedirectPair(t, http.StatusTemporaryRedirect)
	f := newFixture(t, Config{})
	f.srv.SetAccounts([]pool.Account{
		{ID: 1, Label: "moved", BaseURL: p.redirecting.URL, Secret: "sk-redirected-account-key-0001", Enabled: true},
		{ID: 2, Label: "good", BaseURL: f.up.URL, Secret: "sk-good-account-key-0002", Enabled: true},
	})
	f.up.SetDefault(proxytest.Reply{Message: proxytest.TextMessage("", "from good")})
	const requests = 4 // round-robin picks each account at least once in two
	for i := range requests {
		resp := f.post(t, "/v1/messages", streamRequest("claude-sonnet-4-5"))
		if body := readAll(t, resp.Body); resp.StatusCode != http.StatusOK || !strings.Contains(body, "message_stop") {
			t.Fatalf("request %d: status %d %q; want 200 from the good account", i, resp.StatusCode, body)
		}
		f.obs.last(t)
	}
	if n := len(f.up.Requests()); n != requests {
		t.Errorf("the good account got %d requests; want all %d", n, requests)
	}
	if n := p.hits.Load(); n != 1 {
		t.Errorf("the redirecting account got %d requests; want 1 (cooling down after the first)", n)
	}
	if n := p.followed.Load(); n != 0 {
		t.Errorf("the redirect's target got %d requests; want none", n)
	}
	if _, err := f.srv.Pool().Pick(pool.Pick{Model: "claude-sonnet-4-5", Only: 1}, time.Now()); err == nil {
		t.Error("Pick(Only: the redirecting account) succeeded; want it cooling down")
	}
}

// The proxy's own replay of a recorded request takes the same path: a redirect is refused.
func TestReplayNeverFollowsAnUpstreamRedirect(t *testing.T) {
	p := newRedirectPair(t, http.StatusPermanentRedirect)
	f := newFixture(t, Config{}, pool.Account{ID: 1, Label: "moved", BaseURL: p.redirecting.URL, Secret: "sk-redirected-account-key-0001", Enabled: true})
	rec := httptest.NewRecorder()
	_, status, err := f.srv.Replay(context.Background(), Replay{Path: "/v1/messages", Body: []byte(streamRequest("claude-sonnet-4-5"))}, rec)
	if err != nil || status != http.StatusBadGateway || rec.Header().Get("Location") != "" {
		t.Errorf("Replay = %d, %v, Location %q; want 502 and no Location", status, err, rec.Header().Get("Location"))
	}
	if n := p.followed.Load(); n != 0 {
		t.Errorf("the redirect's target got %d requests; want none", n)
	}
}
