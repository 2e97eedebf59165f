package proxy

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"longhaul/proxy/pool"
	"longhaul/proxy/proxytest"
)

// A request refused before its body was read is answered at once and its connection closed,
// whatever the body does next: here every body deadline is an hour away, so a server that
// waited for the body (as net/http does by default, for up to 256 KiB) would trip waitClosed's
// hang guard instead.
func TestRefusalsDoNotWaitForTheBody(t *testing.T) {
	const key = "lh-body-refusal-key-0001"
	srv, err := New(Config{ClientKey: key, MaxBodyBytes: 1 << 20}, Options{UI: &uiStub{}, Timeouts: Timeouts{BodyRead: time.Hour, BodyIdle: time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	addr := startListening(t, srv)
	for _, tc := range []struct {
		name, head, sent, want string
	}{
		{"declared past proxy.max_body_bytes", "POST /v1/messages HTTP/1.1\r\nX-Api-Key: " + key + "\r\nContent-Length: 314572800", `{"model":"claude-son`, "413"},
		{"declared just past proxy.max_body_bytes", "POST /v1/messages HTTP/1.1\r\nX-Api-Key: " + key + "\r\nContent-Length: 1048577", `{"model":`, "413"},
		{"no key, large body", "POST /v1/messages HTTP/1.1\r\nContent-Length: 314572800", `{"model":`, "401"},
		{"no key, small body", "POST /v1/messages HTTP/1.1\r\nContent-Length: 1000", `{"model":`, "401"},
		{"wrong key, small body", "POST /v1/chat/completions HTTP/1.1\r\nAuthorization: Bearer lh-not-the-key-000000\r\nContent-Length: 1000", `{"model":`, "401"},
		{"UI write, no key", "PUT /longhaul/v1/settings HTTP/1.1\r\nContent-Length: 100", `{"values":`, "401"},
		{"UI write past its limit", "PUT /longhaul/v1/settings HTTP/1.1\r\nX-Api-Key: " + key + "\r\nContent-Length: 2097152", `{"values":`, "413"},
		{"UI login past its limit", "POST /longhaul/v1/login HTTP/1.1\r\nContent-Length: 2097152", `{"key":`, "413"},
		{"UI write as text/plain", "POST /longhaul/v1/proxy HTTP/1.1\r\nX-Api-Key: " + key + "\r\nContent-Length: 1000", `{"enabled":`, "415"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			ct := "application/json"
			if strings.Contains(tc.name, "text/plain") {
				ct = "text/plain"
			}
			fmt.Fprintf(c, "%s\r\nHost: 127.0.0.1\r\nContent-Type: %s\r\n\r\n%s", tc.head, ct, tc.sent)
			// The client sends nothing more and keeps the connection open.
			got := waitClosed(t, c)
			if !strings.HasPrefix(got, "HTTP/1.1 "+tc.want) || !strings.Contains(got, "Connection: close") {
				t.Errorf("answered %.120q; want %s with Connection: close, then the connection closed", got, tc.want)
			}
		})
	}
}

// A request the memory budget refuses before its body is read (budget.go) is answered at once
// too, whatever the body does next.
func TestBudgetRefusalDoesNotWaitForTheBody(t *testing.T) {
	const key = "lh-budget-refusal-key-01"
	srv, err := New(Config{ClientKey: key, MaxBodyBytes: 32 << 20, MemoryBudgetBytes: 16 << 20},
		Options{Timeouts: Timeouts{BodyRead: time.Hour, BodyIdle: time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	addr := startListening(t, srv)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// 5 MiB is within proxy.max_body_bytes, but reckoned at 4x it is more than the budget.
	fmt.Fprintf(c, "POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Api-Key: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{\"model\":", key, 5<<20)
	got := waitClosed(t, c)
	if !strings.HasPrefix(got, "HTTP/1.1 413") || !strings.Contains(got, "proxy.memory_budget_bytes") || !strings.Contains(got, "Connection: close") {
		t.Errorf("answered %.300q; want 413 naming proxy.memory_budget_bytes, with Connection: close, then the connection closed", got)
	}
}

// A body that stops arriving is cut after Timeouts.BodyIdle, long before its whole deadline
// (BodyRead); one that keeps arriving, however slowly, is not.
func TestStalledBodyIsCutAfterTheIdleTimeout(t *testing.T) {
	const key = "lh-body-idle-key-00001"
	up := proxytest.NewUpstream()
	defer up.Close()
	up.SetDefault(proxytest.Reply{Message: proxytest.TextMessage("", "ok")})
	// The UI reads its body, as the real one does.
	readingUI := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		io.WriteString(w, "read") //nolint:errcheck // the client is gone
	})
	srv, err := New(Config{ClientKey: key}, Options{UI: readingUI, Timeouts: Timeouts{BodyRead: time.Hour, BodyIdle: time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	srv.SetAccounts([]pool.Account{{ID: 1, Label: "up", BaseURL: up.URL, Secret: "sk-ant-upstream-idle-0001", Enabled: true}})
	addr := startListening(t, srv)
	for _, tc := range []struct{ name, path, sent string }{
		{"proxy API", "/v1/messages", `{"model":"claude-sonnet-4-5",`},
		{"UI write", "/longhaul/v1/settings", `{"values":`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Api-Key: %s\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n%s", tc.path, key, tc.sent)
			if got := waitClosed(t, c); got != "" && !strings.HasPrefix(got, "HTTP/1.1 4") {
				t.Errorf("a stalled body answered %.120q; want the connection closed (or a 4xx)", got)
			}
		})
	}

	// A body that trickles in, a byte every 50 ms for three times BodyIdle, is read whole.
	body := `{"model":"claude-sonnet-4-5","max_tokens":8,"messages":[{"role":"user","content":"` + strings.Repeat("a", 10) + `"}]}`
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Api-Key: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n", key, len(body))
	deadline := time.Now().Add(3 * time.Second)
	for i := 0; i < len(body); i++ {
		if _, err := c.Write([]byte{body[i]}); err != nil {
			t.Fatalf("the server cut a body that kept arriving, after %d bytes: %v", i, err)
		}
		if time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond) // the client's pace, not a measure
		}
	}
	c.SetReadDeadline(time.Now().Add(waitLimit)) //nolint:errcheck // a hang guard
	got, _ := io.ReadAll(c)
	if !strings.HasPrefix(string(got), "HTTP/1.1 200") {
		t.Errorf("a body that kept arriving answered %.200q; want 200", got)
	}
}
