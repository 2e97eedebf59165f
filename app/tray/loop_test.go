package tray

import (
	"context"
	"log/slog"
	"sync"
	"testing"

	"longhaul/app/internal/wait"
)

// fakeMenu records what the loop draws.
type fakeMenu struct {
	mu                    sync.Mutex
	status, restart, open string
	pressure              string
	on, alert             bool
	relabels              int
}

func (m *fakeMenu) setStatus(line string)   { m.mu.Lock(); m.status = line; m.mu.Unlock() }
func (m *fakeMenu) setProxy(on bool)        { m.mu.Lock(); m.on = on; m.mu.Unlock() }
func (m *fakeMenu) setRestart(label string) { m.mu.Lock(); m.restart = label; m.mu.Unlock() }
func (m *fakeMenu) setLabels(t text)        { m.mu.Lock(); m.open = t.Open; m.relabels++; m.mu.Unlock() }
func (m *fakeMenu) setPressure(line string, alert bool) {
	m.mu.Lock()
	m.pressure, m.alert = line, alert
	m.mu.Unlock()
}

func (m *fakeMenu) get() fakeMenu {
	m.mu.Lock()
	defer m.mu.Unlock()
	return fakeMenu{status: m.status, restart: m.restart, open: m.open, pressure: m.pressure, on: m.on, alert: m.alert, relabels: m.relabels}
}

// The loop draws State when told of a change, flips the proxy from what
// State says, relabels only when the language changes, and acts on clicks.
func TestLoopFollowsStateAndClicks(t *testing.T) {
	var (
		mu sync.Mutex
		st = State{Running: true, Address: "127.0.0.1:8045", Language: "en"}
	)
	state := func(context.Context) State { mu.Lock(); defer mu.Unlock(); return st }
	changed := make(chan struct{}, 1)
	set := func(f func(*State)) {
		mu.Lock()
		f(&st)
		mu.Unlock()
		changed <- struct{}{}
	}
	shown := make(chan struct{}, 1)
	m := &fakeMenu{}
	l := &loop{menu: m, log: slog.New(slog.DiscardHandler), opts: Options{
		State: state,
		Changes: func(ctx context.Context, f func()) {
			for {
				select {
				case <-ctx.Done():
					return
				case <-changed:
					f()
				}
			}
		},
		SetProxy: func(_ context.Context, on bool) error {
			set(func(st *State) { st.Running = on })
			return nil
		},
		ShowWindow: func() { shown <- struct{}{} },
	}}
	ctx, cancel := context.WithCancel(context.Background())
	c := newClicks()
	done := make(chan struct{})
	go func() { l.run(ctx, c); close(done) }()
	defer func() { cancel(); <-done }()

	wait.Until(t, "the first drawing", func() bool { return m.get().on && m.get().open == "Open window" })
	c.toggle <- struct{}{}
	wait.Until(t, "the proxy off after the toggle", func() bool { return !m.get().on })
	c.toggle <- struct{}{}
	wait.Until(t, "the proxy on after the second toggle", func() bool { return m.get().on })
	if got := m.get().pressure; got != "No active session" {
		t.Errorf("pressure line with no session = %q; want \"No active session\"", got)
	}
	set(func(st *State) {
		st.Pressure = Pressure{Session: "s1", Ratio: 0.62, NextLayer: 3, NextThreshold: 0.7}
	})
	wait.Until(t, "the pressure line and the alert icon", func() bool {
		return m.get().pressure == "Context 62% · next: Layer 3 at 70%" && m.get().alert
	})
	set(func(st *State) { st.Update = "9.9.9" })
	wait.Until(t, "the restart entry", func() bool { return m.get().restart == "Restart to update (version 9.9.9)" })
	set(func(st *State) { st.Language = "zh-CN" })
	wait.Until(t, "Chinese labels", func() bool { return m.get().open == "打开窗口" })
	if n := m.get().relabels; n != 2 {
		t.Errorf("%d relabels; want 2 (at start, and for the new language)", n)
	}
	c.open <- struct{}{}
	wait.Receive(t, "Open window", shown)
}
