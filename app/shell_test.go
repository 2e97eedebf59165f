package app

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"longhaul/app/internal/wait"
)

// The tray sees the app as it is: the proxy's state, and app.language as
// soon as a settings change has been applied; its toggle turns the proxy off
// and on, and it hears about every such change.
func TestTrayFollowsTheApp(t *testing.T) {
	a, st := newTestApp(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := a.SetProxyEnabled(ctx, true); err != nil {
		t.Fatal(err)
	}
	opts := a.trayOptions(nil, nil)
	var changes atomic.Int64
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	wg.Go(func() { opts.Changes(ctx, func() { changes.Add(1) }) })
	wait.Until(t, "a change at subscription (the feed replays the latest status)", func() bool { return changes.Load() > 0 })

	if s := opts.State(ctx); !s.Running || s.Address != a.Status().Address || s.Language != "en" || s.Update != "" {
		t.Errorf("tray state = %+v; want running on %s, English, no update", s, a.Status().Address)
	}
	seen := changes.Load()
	if err := opts.SetProxy(ctx, false); err != nil {
		t.Fatal(err)
	}
	if s := opts.State(ctx); s.Running {
		t.Errorf("tray state after the toggle = %+v; want stopped", s)
	}
	wait.Until(t, "a change after the toggle", func() bool { return changes.Load() > seen })

	seen = changes.Load()
	if _, err := st.SetSetting(ctx, "app.language", "zh-CN"); err != nil {
		t.Fatal(err)
	}
	if err := a.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	wait.Until(t, "a change after the settings change", func() bool { return changes.Load() > seen })
	if s := opts.State(ctx); s.Language != "zh-CN" {
		t.Errorf("tray language = %q; want zh-CN", s.Language)
	}
}

// The window hears the live feed's events, decoded.
func TestWindowHearsTheFeed(t *testing.T) {
	a, _ := newTestApp(t)
	ctx, cancel := context.WithCancel(context.Background())
	type event struct {
		name string
		data any
	}
	events := make(chan event, 16)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	wg.Go(func() {
		a.forwardEvents(ctx, func(name string, data any) {
			select {
			case events <- event{name, data}:
			default:
			}
		})
	})
	if _, err := a.SetProxyEnabled(ctx, true); err != nil {
		t.Fatal(err)
	}
	for {
		e, _ := wait.Receive(t, "the proxy's status as an event", events)
		if m, ok := e.data.(map[string]any); ok && e.name == EventProxyStatus && m["running"] == true {
			return
		}
	}
}
