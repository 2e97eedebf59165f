package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"longhaul/app/internal/wait"
	"longhaul/app/recorder"
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
	// Wired as main wires them: the recorder observes the proxy, the app drives both.
	rec := recorder.New(st, recorder.Options{})
	srv, err := proxy.New(proxy.Config{}, proxy.Options{Observer: rec})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	a := New(Deps{Store: st, Proxy: srv, Recorder: rec, Version: "test", Overrides: Overrides{Port: port}})
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
	if _, err := st.SetSetting(ctx, "proxy.memory_budget_bytes", "268435456"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.AddAccount(ctx, store.Account{Label: "a", BaseURL: "https://api.anthropic.com", Secret: "sk-ant-xxxxxxxxxxxxxxxx", Enabled: true}); err != nil {
		t.Fatal(err)
	}
	if err := a.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	cfg := a.proxy.Config()
	if cfg.MaxBodyBytes != 4096 || cfg.MaxAttempts != 5 || cfg.MemoryBudgetBytes != 256<<20 || cfg.Port != a.overrides.Port {
		t.Errorf("proxy config = %+v; want body 4096, attempts 5, memory budget 256 MiB, port override %d", cfg, a.overrides.Port)
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
	wait.Until(t, "Run applies a change made through another connection", func() bool { return a.proxy.Config().MaxBodyBytes == 2048 })
	cancel()
	wait.Receive(t, "Run returns after its context was cancelled", done)
}

// TestRevokedAccountIsPersistedAndComesBackWhenReEnabled follows a revoked key the way main
// wires it: the proxy tells the Revocations sink (built before it), the App persists the
// disable with the upstream's reason and pushes the accounts again, and a later re-enable in
// the store brings the account back.
func TestRevokedAccountIsPersistedAndComesBackWhenReEnabled(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "longhaul.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	up := proxytest.NewUpstream()
	defer up.Close()
	up.SetDefault(proxytest.Unauthorized())
	revoked := NewRevocations()
	srv, err := proxy.New(proxy.Config{}, proxy.Options{OnAccountRevoked: revoked.Revoke})
	if err != nil {
		t.Fatal(err)
	}
	a := New(Deps{Store: st, Proxy: srv, Revocations: revoked})
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
	var stored store.Account
	wait.Until(t, "the revoked account disabled in the store with the upstream's reason", func() bool {
		stored, err = st.Account(ctx, acct.ID)
		return err == nil && !stored.Enabled && strings.Contains(stored.DisabledReason, "invalid x-api-key")
	})
	wait.Until(t, "the proxy's accounts pushed again from the store", func() bool {
		accts := a.proxy.Pool().Accounts()
		return len(accts) == 1 && !accts[0].Enabled
	})
	if got := call(); got != 503 {
		t.Errorf("call after revocation = %d; want 503 (no usable account)", got)
	}
	up.SetDefault(proxytest.Reply{Message: proxytest.TextMessage("", "ok")})
	if err := st.SetAccountEnabled(ctx, acct.ID, true, ""); err != nil { // the user re-enables it
		t.Fatal(err)
	}
	wait.Until(t, "the re-enabled account used again", func() bool { return call() == 200 })
}

// TestStoreBodiesOffKeepsNoBodies: history.store_bodies reaches both the proxy (it stops
// capturing) and the recorder (it stores none).
func TestStoreBodiesOffKeepsNoBodies(t *testing.T) {
	a, st := newTestApp(t)
	ctx := context.Background()
	up := proxytest.NewUpstream()
	defer up.Close()
	if _, err := st.AddAccount(ctx, store.Account{Label: "work", BaseURL: up.URL, Secret: "sk-ant-api03-bodies-off-000000000000", Enabled: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.SetSetting(ctx, "history.store_bodies", "false"); err != nil {
		t.Fatal(err)
	}
	if err := a.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	if a.proxy.Config().CaptureBodies {
		t.Fatal("proxy still captures bodies with history.store_bodies off")
	}
	front := httptest.NewServer(a.proxy.Handler())
	defer front.Close()
	for _, stream := range []string{"false", "true"} {
		r, err := http.Post(front.URL+"/v1/messages", "application/json", strings.NewReader(`{"model":"claude-sonnet-4-5","max_tokens":8,"stream":`+stream+`,"messages":[{"role":"user","content":"hi"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, r.Body)
		r.Body.Close()
		var e store.Exchange
		wait.Until(t, "the exchange recorded as finished", func() bool {
			if err := a.recorder.Flush(ctx); err != nil { // Run is not running: the test writes
				t.Fatal(err)
			}
			e, err = st.Exchange(ctx, r.Header.Get("Longhaul-Request-Id"))
			return err == nil && e.State == "finished"
		})
		if e.HasBodies || e.Bodies != nil {
			t.Errorf("stream=%s: bodies = %+v; want none with history.store_bodies off", stream, e.Bodies)
		}
	}
}

// TestRequestCountsReachTheUIAfterTraffic: with no traffic the app does not look at the
// request count (it sleeps on the proxy's NextRequest), and after a request the UI hears the
// new count, once the second that gathers a burst has passed.
func TestRequestCountsReachTheUIAfterTraffic(t *testing.T) {
	a, _ := newTestApp(t)
	if _, err := a.SetProxyEnabled(context.Background(), true); err != nil {
		t.Fatal(err)
	}
	events, unsubscribe := a.events.Subscribe()
	defer unsubscribe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { a.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	for turn := int64(1); turn <= 2; turn++ {
		resp, err := http.Get(a.Status().BaseURL + "/v1/models")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		for {
			e, ok := wait.Receive(t, fmt.Sprintf("a status with %d requests", turn), events)
			if !ok {
				t.Fatal("feed closed")
			}
			var st ProxyStatus
			if e.Name == EventProxyStatus && json.Unmarshal(e.Data, &st) == nil && st.Requests == turn {
				break
			}
		}
	}
}
