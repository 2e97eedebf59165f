package proxy

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"longhaul/proxy/pool"
	"longhaul/proxy/proxytest"
)

// orderObserver, at an exchange's end, waits for the client to have its whole reply (or for
// a moment to pass) and records which came first.
type orderObserver struct {
	clientDone   chan struct{}
	replyFirst   atomic.Bool
	observedOnce atomic.Bool
}

func (o *orderObserver) Observe(ex Exchange) {
	if ex.State != ExchangeFinished {
		return
	}
	o.observedOnce.Store(true)
	select {
	case <-o.clientDone:
		o.replyFirst.Store(true)
	case <-time.After(200 * time.Millisecond):
	}
}

// TestReplyEndsAfterTheProxyNotedIt: a client has its whole short non-stream reply only once
// the proxy has done what the reply teaches it (the exchange's end, the signature cache, the
// Responses conversation, the pool's report), so a client that sends its next request the moment
// it has the reply finds them in place, and tests can read them at once. Flushing every reply
// before that work was tried and taken out for this reason (it made tests that read the
// observer right after a reply flaky); here it would reach the client while the observer still
// waits. (A relayed reply over 512 bytes goes out as it is copied, whatever the proxy does:
// net/http's ReadFrom sends what follows its first 512 bytes straight to the socket. A client's
// next request on the same connection is read only once the handler has returned.)
func TestReplyEndsAfterTheProxyNotedIt(t *testing.T) {
	messages := proxytest.NewUpstream()
	defer messages.Close()
	messages.SetDefault(proxytest.Reply{Message: proxytest.TextMessage(proxytest.DefaultModel, "Done.")})
	const chatBody = `{"model":"gpt-4.1","messages":[{"role":"user","content":"hi"}]}`
	for _, tc := range []struct {
		name, path, body string
		account          pool.Account
	}{
		{"messages, relayed", "/v1/messages", `{"model":"claude-sonnet-4-5","max_tokens":64,"messages":[{"role":"user","content":"hi"}]}`,
			pool.Account{ID: 1, Label: "a", Kind: pool.KindAnthropic, BaseURL: messages.URL, Secret: "sk-ant-upstream-secret-0001", Enabled: true}},
		{"chat, translated from an Anthropic account", "/v1/chat/completions", chatBody,
			pool.Account{ID: 3, Label: "a", Kind: pool.KindAnthropic, BaseURL: messages.URL, Secret: "sk-ant-upstream-secret-0001", Enabled: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obs := &orderObserver{clientDone: make(chan struct{})}
			srv, err := New(Config{}, Options{Observer: obs})
			if err != nil {
				t.Fatal(err)
			}
			srv.SetAccounts([]pool.Account{tc.account})
			front := httptest.NewServer(srv.Handler())
			defer front.Close()
			req, err := http.NewRequest(http.MethodPost, front.URL+tc.path, strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Anthropic-Version", "2023-06-01")
			resp, err := front.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			reply, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			close(obs.clientDone)
			if err != nil || resp.StatusCode != http.StatusOK || !strings.Contains(string(reply), "Done.") {
				t.Fatalf("reply: status %d, %v, %s", resp.StatusCode, err, reply)
			}
			if !obs.observedOnce.Load() || obs.replyFirst.Load() {
				t.Fatalf("the client had its reply before the proxy noted the exchange's end (observed %t)", obs.observedOnce.Load())
			}
		})
	}
}
