package app

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"longhaul/proxy"
	"longhaul/proxy/proxytest"
	"longhaul/store"
)

func newTestApp(t *testing.T) (*App, *store.Store) {
	t.Helper()
	a, st, _ := newTestAppAt(t)
	return a, st
}

func newTestAppAt(t *testing.T) (*App, *store.Store, string) {
	t.Helper()
	ctx := context.Background()
	dbPath := filepath.Join(t.TempDir(), "longhaul.db")
	st, err := store.Open(ctx, dbPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	srv, err := proxy.New(proxy.Config{}, proxy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	a := New(Deps{Store: st, Proxy: srv, Version: "test", Overrides: Overrides{Port: port}})
	if err := a.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Stop(context.Background()) })
	return a, st, dbPath
}

func TestReloadPushesSettingsAndAccounts(t *testing.T) {
	a, st := newTestApp(t)
	ctx := context.Background()
	if _, err := st.SetSetting(ctx, "proxy.max_body_bytes", "4096"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.SetSetting(ctx, "proxy.rotation.max_attempts", "5"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.AddAccount(ctx, store.Account{Label: "a", BaseURL: "https://api.anthropic.com", Secret: "sk-ant-xxxxxxxxxxxxxxxx", Enabled: true}); err != nil {
		t.Fatal(err)
	}
	if err := a.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	cfg := a.proxy.Config()
	if cfg.MaxBodyBytes != 4096 || cfg.MaxAttempts != 5 || cfg.Port != a.overrides.Port {
		t.Errorf("proxy config = %+v; want body 4096, attempts 5, port override %d", cfg, a.overrides.Port)
	}
	if accts := a.proxy.Pool().Accounts(); len(accts) != 1 || accts[0].Label != "a" {
		t.Errorf("proxy accounts = %+v", accts)
	}
}

func TestRunAppliesDatabaseChanges(t *testing.T) {
	a, _, dbPath := newTestAppAt(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { a.Run(ctx); close(done) }()
	// A second connection, like the CLI in another process.
	other, err := store.Open(context.Background(), dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.SetSetting(context.Background(), "proxy.max_body_bytes", "2048"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for a.proxy.Config().MaxBodyBytes != 2048 {
		if time.Now().After(deadline) {
			t.Fatal("Run did not apply a change made through another connection")
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after its context was cancelled")
	}
}

func TestDoorStatusToggleAndEvents(t *testing.T) {
	a, _ := newTestApp(t)
	if _, err := a.SetProxyEnabled(context.Background(), true); err != nil {
		t.Fatal(err)
	}
	door := httptest.NewServer(a.Door(fstest.MapFS{"index.html": {Data: []byte("<h1>Longhaul</h1>")}}))
	defer door.Close()

	resp, err := http.Get(door.URL + "/longhaul/v1/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	events := bufio.NewReader(resp.Body)
	nextStatus := func() ProxyStatus {
		t.Helper()
		for {
			line, err := events.ReadString('\n')
			if err != nil {
				t.Fatalf("event stream: %v", err)
			}
			if data, ok := strings.CutPrefix(line, "data: "); ok {
				var st ProxyStatus
				if err := json.Unmarshal([]byte(data), &st); err != nil {
					t.Fatal(err)
				}
				return st
			}
		}
	}
	if st := nextStatus(); !st.Running {
		t.Errorf("first event = %+v; want the current (running) status", st)
	}

	r, err := http.Post(door.URL+"/longhaul/v1/proxy", "application/json", strings.NewReader(`{"enabled":false}`))
	if err != nil {
		t.Fatal(err)
	}
	var st ProxyStatus
	json.NewDecoder(r.Body).Decode(&st)
	r.Body.Close()
	if r.StatusCode != 200 || st.Running || a.proxy.Running() {
		t.Errorf("toggle off = %d %+v; proxy running %t", r.StatusCode, st, a.proxy.Running())
	}
	if st := nextStatus(); st.Running {
		t.Errorf("event after toggle off = %+v; want stopped", st)
	}
	if _, err := net.DialTimeout("tcp", st.Address, time.Second); err == nil {
		t.Error("proxy port still accepts connections after toggle off")
	}

	r, _ = http.Get(door.URL + "/")
	if r.StatusCode != 200 {
		t.Errorf("GET / = %d; want the UI", r.StatusCode)
	}
	r.Body.Close()
}

func TestDoorRefusesForeignHostsAndOrigins(t *testing.T) {
	a, _ := newTestApp(t)
	door := httptest.NewServer(a.Door(fstest.MapFS{}))
	defer door.Close()
	tests := []struct {
		name, host, origin, body string
		want                     int
	}{
		{"bad body", "", "", `{}`, 400},
		{"rebound host", "attacker.example", "", `{"enabled":true}`, 403},
		{"cross-origin post", "", "https://attacker.example", `{"enabled":true}`, 403},
		{"same-origin post", "", "SAME", `{"enabled":true}`, 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, door.URL+"/longhaul/v1/proxy", strings.NewReader(tt.body))
			if tt.host != "" {
				req.Host = tt.host
			}
			if tt.origin == "SAME" {
				req.Header.Set("Origin", door.URL)
			} else if tt.origin != "" {
				req.Header.Set("Origin", tt.origin)
			}
			r, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			r.Body.Close()
			if r.StatusCode != tt.want {
				t.Errorf("status = %d; want %d", r.StatusCode, tt.want)
			}
		})
	}
}

func TestHubDropsSlowSubscriberWithoutBlocking(t *testing.T) {
	h := NewHub()
	slow, _ := h.Subscribe()
	fast, unsubscribe := h.Subscribe()
	defer unsubscribe()
	done := make(chan struct{})
	go func() {
		for i := range 1000 {
			h.Publish("n", i)
		}
		close(done)
	}()
	go func() {
		for range fast {
		}
	}()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		t.Fatal("Publish blocked on a subscriber that never reads")
	}
	n := 0
	for range slow {
		n++
	}
	if n == 0 || n >= 1000 {
		t.Errorf("slow subscriber got %d events before being dropped; want its buffer's worth", n)
	}
	late, stop := h.Subscribe()
	defer stop()
	if m := <-late; string(m.Data) != "999" {
		t.Errorf("new subscriber starts with %s; want the latest event (999)", m.Data)
	}
}

func TestAccountsViewMasksSecretsAndShowsLiveState(t *testing.T) {
	a, st := newTestApp(t)
	ctx := context.Background()
	added, err := st.AddAccount(ctx, store.Account{Label: "work", BaseURL: "https://api.anthropic.com", Secret: "sk-ant-api03-very-secret-key-WXYZ", Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	a.proxy.Pool().Report(added.ID, "claude-sonnet-4-5", proxy.Outcome{Kind: proxy.OutcomeRateLimited, RetryAfter: time.Minute,
		Header: http.Header{"Anthropic-Ratelimit-Requests-Remaining": {"0"}}}, time.Now())
	door := httptest.NewServer(a.Door(fstest.MapFS{}))
	defer door.Close()
	r, err := http.Get(door.URL + "/longhaul/v1/accounts")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if strings.Contains(string(raw), "very-secret") {
		t.Fatalf("accounts view leaks the secret: %s", raw)
	}
	var views []AccountView
	if err := json.Unmarshal(raw, &views); err != nil || len(views) != 1 {
		t.Fatalf("accounts = %s (%v)", raw, err)
	}
	v := views[0]
	if v.Key != "sk-…WXYZ" || v.CoolingUntil["claude-sonnet-4-5"].IsZero() || v.RateLimit["Anthropic-Ratelimit-Requests-Remaining"] != "0" || v.Errors != 1 {
		t.Errorf("view = %+v; want masked key, cooldown, quota header and one error", v)
	}
}

func TestRevokedAccountIsPersistedAndComesBackWhenReEnabled(t *testing.T) {
	ctx := context.Background()
	dbPath := filepath.Join(t.TempDir(), "longhaul.db")
	st, err := store.Open(ctx, dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	up := proxytest.NewUpstream()
	defer up.Close()
	up.SetDefault(proxytest.Unauthorized())
	var a *App
	srv, err := proxy.New(proxy.Config{}, proxy.Options{OnAccountRevoked: func(id int64, reason string) { a.AccountRevoked(id, reason) }})
	if err != nil {
		t.Fatal(err)
	}
	a = New(Deps{Store: st, Proxy: srv})
	acct, err := st.AddAccount(ctx, store.Account{Label: "k", BaseURL: up.URL, Secret: "sk-ant-revoked-000000", Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { a.Run(runCtx); close(done) }()
	defer func() { cancel(); <-done }()

	front := httptest.NewServer(srv.Handler())
	defer front.Close()
	call := func() int {
		r, err := http.Post(front.URL+"/v1/messages", "application/json", strings.NewReader(`{"model":"m","max_tokens":1,"messages":[]}`))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, r.Body)
		r.Body.Close()
		return r.StatusCode
	}
	if got := call(); got != 401 {
		t.Fatalf("first call = %d; want the upstream's 401 passed on", got)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		stored, err := st.Account(ctx, acct.ID)
		if err == nil && !stored.Enabled && strings.Contains(stored.DisabledReason, "invalid x-api-key") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("account not disabled in the store: %+v %v", stored, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := call(); got != 503 {
		t.Errorf("call after revocation = %d; want 503 (no usable account)", got)
	}
	up.SetDefault(proxytest.Reply{Message: proxytest.TextMessage("", "ok")})
	if err := st.SetAccountEnabled(ctx, acct.ID, true, ""); err != nil { // the user re-enables it
		t.Fatal(err)
	}
	deadline = time.Now().Add(5 * time.Second)
	for call() != 200 {
		if time.Now().After(deadline) {
			t.Fatal("re-enabled account not used again")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
