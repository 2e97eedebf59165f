package proxy

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"longhaul/proxy/pool"
	"longhaul/proxy/proxytest"
)

// A Layer-3 summary call is sent with the account's key; an upstream that answers it with a
// redirect must not get that key carried to another origin.
func TestLayer3SummaryNeverFollowsARedirect(t *testing.T) {
	var elsewhere atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
		w.WriteHeader(http.StatusOK)
	}))
	defer other.Close()

	f, _ := newCompactionFixture(t, CompactionConfig{ContextLimits: map[string]int{"*": 2000}, SummaryModel: "claude-haiku-4-5"})
	f.up.Enqueue(proxytest.Reply{Status: http.StatusTemporaryRedirect, Header: http.Header{"Location": {other.URL + "/v1/messages"}}, Body: []byte(`{}`)})
	resp := f.post(t, "/v1/messages", chatHistory(12, 2000))
	readAll(t, resp.Body)
	if n := elsewhere.Load(); n != 0 {
		t.Fatalf("the redirect target got %d requests; a summary call must never follow a redirect with the key", n)
	}
	if resp.StatusCode == http.StatusOK {
		t.Errorf("status 200; a summary that came back as a redirect must fail the Layer-3 step")
	}
}

// The same through an account of another protocol, whose summary call the proxy translates
// and sends itself (sendTranslated): the redirect is the summary attempt's failure, named by
// status and target host, and nothing reaches the target.
func TestLayer3SummaryOnAnotherProtocolNeverFollowsARedirect(t *testing.T) {
	p := newRedirectPair(t, http.StatusTemporaryRedirect)
	f, _ := newCompactionFixture(t, CompactionConfig{ContextLimits: map[string]int{"*": 2000}, SummaryModel: "gpt-4o-mini"})
	f.srv.SetAccounts([]pool.Account{{ID: 1, Label: "moved", Kind: pool.KindOpenAI, BaseURL: p.baseURL(pool.KindOpenAI), Secret: "sk-redirected-chat-key-0001", Enabled: true}})
	resp := f.post(t, "/v1/messages", chatHistory(12, 2000))
	readAll(t, resp.Body)
	if n := p.followed.Load(); n != 0 {
		t.Fatalf("the redirect target got %d requests; a summary call must never follow a redirect with the key", n)
	}
	if resp.StatusCode == http.StatusOK {
		t.Errorf("status 200; a summary that came back as a redirect must fail the Layer-3 step")
	}
	waitFor(t, "the summary exchange", func() bool {
		f.obs.mu.Lock()
		defer f.obs.mu.Unlock()
		for _, ex := range f.obs.finished {
			if ex.Route == "summary" && len(ex.Attempts) == 1 && ex.Attempts[0].Status == http.StatusTemporaryRedirect &&
				strings.Contains(ex.Attempts[0].Error, strings.TrimPrefix(p.elsewhere.URL, "http://")) && !strings.Contains(ex.Attempts[0].Error, querySecret) {
				return true
			}
		}
		return false
	})
}
