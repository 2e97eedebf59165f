package app

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"

	"longhaul/app/desktop"
	"longhaul/app/recorder"
	"longhaul/app/tray"
	"longhaul/app/update"
	"longhaul/store"
)

// This file wires the desktop shell (app/desktop, app/tray, app/autostart,
// app/update) to the app: those packages know nothing of App, so what they
// show and do is handed to them here.

// applyAppSettings follows the app.* settings that belong to the desktop
// shell; Reload calls it (with the app's lock held) whenever settings change.
func (a *App) applyAppSettings(s store.AppSettings) {
	if err := a.autostart.Apply(s.Autostart); err != nil {
		a.log.Warn("autostart not applied", "err", err)
	}
	a.updates.SetEnabled(s.CheckUpdates)
}

// RunDesktop shows the window and the tray and blocks until the app quits
// (or, after "restart to update", until the new binary has been started).
// startHidden (--minimized, used by autostart) or app.start_minimized keeps
// the window in the tray until opened.
func (a *App) RunDesktop(assets fs.FS, startHidden bool) error {
	if s, err := a.store.Settings(context.Background()); err == nil && s.App.StartMinimized {
		startHidden = true
	}
	w := desktop.New(desktop.Options{
		Assets:         assets,
		DataDir:        a.dataDir,
		StartHidden:    startHidden,
		ErrorFormatter: BoundError,
		Events:         a.forwardEvents,
		Tray: func(ctx context.Context, show, quit func()) error {
			err := tray.Run(ctx, a.trayOptions(show, quit))
			if errors.Is(err, tray.ErrUnsupported) {
				return nil // macOS: the window keeps the proxy toggle
			}
			return err
		},
		CloseToTray: tray.HostPresent,
		Logger:      a.log,
	})
	a.updates.SetQuit(w.Quit)
	err := w.Run(a.Facades(w.Context).Bindings())
	a.updates.SetQuit(nil)
	if err != nil {
		return err
	}
	return a.updates.FinishRestart(os.Args[1:])
}

// follow calls f with each event of the live feed until ctx ends. A
// subscriber that fell behind subscribes again; the feed replays the latest
// event of each name, so it is current again at once. subscribed, if not
// nil, runs after each subscription and before its events: a follower that
// keeps more than the latest events (the tray's session pressures) reloads
// what it may have missed there.
func (a *App) follow(ctx context.Context, subscribed func(), f func(recorder.Event)) {
	for {
		events, unsubscribe := a.events.Subscribe()
		if subscribed != nil {
			subscribed()
		}
		for open := true; open; {
			select {
			case <-ctx.Done():
				unsubscribe()
				return
			case e, ok := <-events:
				if !ok {
					open = false
					break
				}
				f(e)
			}
		}
		unsubscribe()
	}
}

// forwardEvents relays the live feed to the window until ctx ends.
func (a *App) forwardEvents(ctx context.Context, emit func(name string, data any)) {
	a.follow(ctx, nil, func(e recorder.Event) {
		var v any
		if json.Unmarshal(e.Data, &v) == nil {
			emit(e.Name, v)
		}
	})
}

// trayOptions are what the tray shows and does; show and quit are the
// window's.
func (a *App) trayOptions(show, quit func()) tray.Options {
	pressures := newSessionPressures()
	return tray.Options{
		State: func(ctx context.Context) tray.State { return a.trayState(ctx, pressures) },
		Changes: func(ctx context.Context, changed func()) {
			// The status event also follows every settings change (Reload
			// publishes it), which is how a new app.language reaches the tray.
			// History batches carry every finished exchange: the pressure line
			// follows them.
			a.follow(ctx, func() {
				if err := pressures.load(ctx, a.store, a.now()); err != nil && ctx.Err() == nil {
					a.log.Warn("tray: session pressures", "err", err)
				}
				changed()
			}, func(e recorder.Event) {
				switch e.Name {
				case EventProxyStatus, EventUpdateStatus:
					changed()
				case EventHistoryExchanges:
					if ok, err := pressures.observe(e.Data); err != nil {
						a.log.Warn("tray: session pressures", "err", err)
					} else if ok {
						changed()
					}
				}
			})
		},
		SetProxy: func(ctx context.Context, on bool) error {
			_, err := a.SetProxyEnabled(ctx, on)
			return err
		},
		Restart:    a.updates.Restart,
		ShowWindow: show,
		Quit:       quit,
		Logger:     a.log,
	}
}

// trayState is the tray's view of the app; pressures are the sessions the
// tray's Changes keeps.
func (a *App) trayState(ctx context.Context, pressures *sessionPressures) tray.State {
	st := a.Status()
	sessions := 0 // sessions bound to an account (used within the affinity window, an hour)
	for _, acc := range a.proxy.Pool().Status(a.now()) {
		sessions += acc.SessionsBound
	}
	language := "en"
	if s, err := a.store.Settings(ctx); err == nil {
		language = s.App.Language
	}
	installed := ""
	if u := a.updates.Status(); u.State == update.Ready {
		installed = u.Latest
	}
	return tray.State{
		Running: st.Running, Address: st.Address, Error: st.Error, Requests: st.Requests,
		Sessions: sessions, Language: language, Update: installed,
		Pressure: trayPressure(pressures.busiest(a.proxy.Config(), a.now())),
	}
}
