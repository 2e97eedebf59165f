package app

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"longhaul/app/internal/wait"
	"longhaul/app/tray"
	"longhaul/proxy"
	"longhaul/proxy/proxytest"
	"longhaul/store"
)

func TestBusiestSession(t *testing.T) {
	now := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	for _, tc := range []struct {
		name   string
		ps     []Pressure
		want   string // session; "": none
		wantOK bool
	}{
		{"no session", nil, "", false},
		{"one active session", []Pressure{{Session: "a", Ratio: 0.2, At: ago(time.Minute)}}, "a", true},
		{"a session quiet for longer than the window is not active",
			[]Pressure{{Session: "a", Ratio: 0.9, At: ago(trayPressureWindow + time.Second)}}, "", false},
		{"a session at the edge of the window still is",
			[]Pressure{{Session: "a", Ratio: 0.2, At: ago(trayPressureWindow)}}, "a", true},
		{"the highest pressure wins", []Pressure{
			{Session: "a", Ratio: 0.3, At: ago(time.Second)},
			{Session: "b", Ratio: 0.62, At: ago(5 * time.Minute)},
			{Session: "c", Ratio: 0.41, At: ago(time.Minute)},
		}, "b", true},
		{"an active session wins over a busier quiet one", []Pressure{
			{Session: "quiet", Ratio: 0.8, At: ago(time.Hour)},
			{Session: "active", Ratio: 0.1, At: ago(time.Minute)},
		}, "active", true},
		{"a tie goes to the most recent request", []Pressure{
			{Session: "older", Ratio: 0.5, At: ago(2 * time.Minute)},
			{Session: "newer", Ratio: 0.5, At: ago(time.Minute)},
		}, "newer", true},
		{"a full tie goes to the lower session id, whatever the order", []Pressure{
			{Session: "b", Ratio: 0.5, At: ago(time.Minute)},
			{Session: "a", Ratio: 0.5, At: ago(time.Minute)},
		}, "a", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := busiestSession(tc.ps, now)
			if ok != tc.wantOK || got.Session != tc.want {
				t.Errorf("busiestSession(%+v) = %q, %v; want %q, %v", tc.ps, got.Session, ok, tc.want, tc.wantOK)
			}
		})
	}
}

// finishedExchange is a session's /v1/messages request as the live feed carries it when it
// finished: tokens of a limit.
func finishedExchange(id, session string, start time.Time, tokens, limit int) store.Exchange {
	return store.Exchange{
		ID: id, State: "finished", Route: "messages", SessionID: session, Model: "claude-sonnet-4-5",
		Start: start, End: start.Add(time.Second), Status: 200,
		ContextLimit: limit, TokensBefore: tokens, TokensAfter: tokens,
		PressureBefore: float64(tokens) / float64(limit), PressureAfter: float64(tokens) / float64(limit),
	}
}

// The pressures follow the live batches: each session's latest finished /v1/messages
// request counts; a request in flight, another route, a replay or an older record does not.
func TestSessionPressuresFollowTheLiveBatches(t *testing.T) {
	now := time.Now()
	batch := func(es ...store.Exchange) []byte { return store.AppendExchangesJSON(nil, es) }
	s := newSessionPressures()
	cfg := proxy.Config{}
	observe := func(what string, es ...store.Exchange) bool {
		t.Helper()
		changed, err := s.observe(batch(es...))
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return changed
	}
	busiest := func() (string, float64) {
		p, ok := s.busiest(cfg, now)
		if !ok {
			return "", 0
		}
		return p.Session, p.Ratio
	}

	if !observe("first request", finishedExchange("1", "a", now.Add(-time.Minute), 30_000, 100_000)) {
		t.Errorf("a session's first request changed nothing")
	}
	if id, r := busiest(); id != "a" || r != 0.3 {
		t.Errorf("busiest = %q at %v; want a at 0.3", id, r)
	}

	started := finishedExchange("2", "b", now, 90_000, 100_000)
	started.State = "started"
	count := finishedExchange("3", "b", now, 90_000, 100_000)
	count.Route = "count_tokens"
	replay := finishedExchange("4", "b", now, 90_000, 100_000)
	replay.ReplayOf = "1"
	older := finishedExchange("5", "a", now.Add(-2*time.Minute), 90_000, 100_000)
	if observe("requests that do not count", started, count, replay, older) {
		t.Errorf("a started request, count_tokens, a replay or an older record changed the pressures")
	}
	if id, r := busiest(); id != "a" || r != 0.3 {
		t.Errorf("busiest after records that do not count = %q at %v; want a at 0.3", id, r)
	}

	if !observe("a second session, busier", finishedExchange("6", "b", now, 62_000, 100_000)) {
		t.Errorf("a second session changed nothing")
	}
	if id, r := busiest(); id != "b" || r != 0.62 {
		t.Errorf("busiest = %q at %v; want b at 0.62", id, r)
	}
	p, _ := s.busiest(cfg, now)
	if tp := trayPressure(p, true); tp != (tray.Pressure{Session: "b", Ratio: 0.62, NextLayer: 3, NextThreshold: 0.7}) {
		t.Errorf("tray pressure = %+v; want b at 0.62, Layer 3 next at 0.7", tp)
	}
	if _, err := s.observe([]byte(`{"not":"a batch"}`)); err == nil {
		t.Errorf("a batch that is not an array of exchanges was read without an error")
	}
	if _, ok := s.busiest(cfg, now.Add(trayPressureWindow+time.Minute)); ok {
		t.Errorf("sessions quiet for longer than the window still count")
	}
}

// postAs sends a small /v1/messages request of session through front; the upstream's reply
// reports promptTokens, the size the proxy records for a request it did not need to estimate.
func postAs(t *testing.T, front string, up *proxytest.Upstream, session string, promptTokens int) {
	t.Helper()
	msg := proxytest.TextMessage("", "ok")
	msg.Usage.InputTokens = promptTokens
	up.SetDefault(proxytest.Reply{Message: msg})
	body := fmt.Sprintf(`{"model":"claude-sonnet-4-5","max_tokens":8,"metadata":{"user_id":"user_3f2a_account_9c1e_session_%s"},"messages":[{"role":"user","content":"hi"}]}`, session)
	r, err := http.Post(front+"/v1/messages", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, r.Body) //nolint:errcheck // the status says
	r.Body.Close()
	if r.StatusCode != http.StatusOK {
		t.Fatalf("POST /v1/messages as %s = %d", session, r.StatusCode)
	}
}

// The tray's pressure line follows real requests through the proxy: the busiest session's
// pressure as each exchange finishes, Layer 2 and above as an alert; a tray started later
// finds it in the history.
func TestTrayShowsTheBusiestSessionsPressure(t *testing.T) {
	a, st := newTestApp(t)
	ctx, cancel := context.WithCancel(context.Background())
	up := proxytest.NewUpstream()
	defer up.Close()
	if _, err := st.AddAccount(ctx, store.Account{Label: "work", BaseURL: up.URL, Secret: "sk-ant-api03-tray-pressure-00000000000", Enabled: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.SetSetting(ctx, "proxy.context_limits.claude-*", "100000"); err != nil {
		t.Fatal(err)
	}
	if err := a.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	front := httptest.NewServer(a.proxy.Handler())
	defer front.Close()
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	wg.Go(func() { a.Run(ctx) }) // the recorder: history and its live batches

	opts := a.trayOptions(nil, nil)
	var changes atomic.Int64
	wg.Go(func() { opts.Changes(ctx, func() { changes.Add(1) }) })
	wait.Until(t, "the tray subscribed", func() bool { return changes.Load() > 0 })
	if p := opts.State(ctx).Pressure; p != (tray.Pressure{}) {
		t.Fatalf("pressure before any request = %+v; want none", p)
	}

	const first, second = "6d0b8f3e-1111-4222-8333-944455556666", "0b7e2c1a-2222-4333-8444-a55566667777"
	pressureIs := func(what string, want tray.Pressure) {
		t.Helper()
		var got tray.Pressure
		wait.Until(t, what, func() bool {
			got = opts.State(ctx).Pressure
			return got == want
		})
	}
	postAs(t, front.URL, up, first, 30_000)
	pressureIs("the first session at 30%", tray.Pressure{Session: first, Ratio: 0.3, NextLayer: 1, NextThreshold: 0.4})
	postAs(t, front.URL, up, second, 45_000)
	pressureIs("the second session, busier, at 45%", tray.Pressure{Session: second, Ratio: 0.45, NextLayer: 2, NextThreshold: 0.55})
	seen := changes.Load()
	postAs(t, front.URL, up, first, 60_000)
	pressureIs("the first session again, past Layer 2", tray.Pressure{Session: first, Ratio: 0.6, NextLayer: 3, NextThreshold: 0.7})
	if changes.Load() == seen {
		t.Errorf("the tray was not told of the finished exchange")
	}

	// A tray started now (the app restarted) reads the same from the history.
	if err := a.recorder.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	later := a.trayOptions(nil, nil)
	loaded := make(chan struct{}, 1)
	wg.Go(func() {
		later.Changes(ctx, func() {
			select {
			case loaded <- struct{}{}:
			default:
			}
		})
	})
	wait.Receive(t, "the later tray's first change", loaded)
	if p := later.State(ctx).Pressure; p.Session != first || p.Ratio != 0.6 {
		t.Errorf("a tray started later shows %+v; want the first session at 0.6 from the history", p)
	}
}
