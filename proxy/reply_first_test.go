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

// heldObserver holds the end of every exchange until release is closed (or the hang guard
// passes, which it records): it stands for whatever the proxy notes after a reply.
type heldObserver struct {
	release  chan struct{}
	timedOut atomic.Bool
}

func (o *heldObserver) Observe(ex Exchange) {
	if ex.State != ExchangeFinished {
		return
	}
	select {
	case <-o.release:
	case <-time.After(waitLimit):
		o.timedOut.Store(true)
	}
}

// TestClientHasItsReplyBeforeTheProxyNotesIt: a non-stream reply reaches the client whole
// while the proxy's bookkeeping after it (reading it back for the record, the observer) is
// still running: the client holds the whole reply before the held observer lets the handler
// end. Relayed as it came, relayed from another protocol's upstream, and translated.
func TestClientHasItsReplyBeforeTheProxyNotesIt(t *testing.T) {
	messages := proxytest.NewUpstream()
	defer messages.Close()
	messages.SetDefault(proxytest.Reply{Message: proxytest.TextMessage(proxytest.DefaultModel, "Done.")})
	chat := proxytest.NewChatUpstream()
	defer chat.Close()
	chat.SetDefault(proxytest.ChatReply{Completion: proxytest.ChatText("Done.")})
	chatBody := `{"model":"gpt-4.1","messages":[{"role":"user","content":"hi"}]}`
	for _, tc := range []struct {
		name, path, body string
		account          pool.Account
	}{
		{"messages, relayed", "/v1/messages", `{"model":"claude-sonnet-4-5","max_tokens":64,"messages":[{"role":"user","content":"hi"}]}`, pool.Account{ID: 1, Label: "a", Kind: pool.KindAnthropic, BaseURL: messages.URL, Secret: "sk-ant-upstream-secret-0001", Enabled: true}},
		{"chat, relayed from an OpenAI account", "/v1/chat/completions", chatBody, pool.Account{ID: 2, Label: "o", Kind: pool.KindOpenAI, BaseURL: chat.URL + "/v1", Secret: "sk-openai-secret-0001", Enabled: true}},
		{"chat, translated from an Anthropic account", "/v1/chat/completions", chatBody, pool.Account{ID: 3, Label: "a", Kind: pool.KindAnthropic, BaseURL: messages.URL, Secret: "sk-ant-upstream-secret-0001", Enabled: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obs := &heldObserver{release: make(chan struct{})}
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
			close(obs.release)
			if err != nil || resp.StatusCode != http.StatusOK || !strings.Contains(string(reply), "Done.") {
				t.Fatalf("reply: status %d, %v, %s", resp.StatusCode, err, reply)
			}
			if obs.timedOut.Load() {
				t.Fatal("the client got its reply only after the proxy's bookkeeping ended")
			}
		})
	}
}
