package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/signal"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/wailsapp/wails/v2"
	"github.com/wailsapp/wails/v2/pkg/options"
	"github.com/wailsapp/wails/v2/pkg/options/assetserver"
	wailsruntime "github.com/wailsapp/wails/v2/pkg/runtime"

	"longhaul/store"
)

// CanShowWindow reports whether this binary and session can open a window:
// the binary must be built with the desktop tag, and on Linux a display must
// exist (GTK panics without one).
func CanShowWindow() (bool, string) {
	if !desktopBuild {
		return false, "this binary was built without the desktop tag"
	}
	if runtime.GOOS == "linux" && os.Getenv("DISPLAY") == "" && os.Getenv("WAYLAND_DISPLAY") == "" {
		return false, "no display (DISPLAY and WAYLAND_DISPLAY are unset)"
	}
	return true, ""
}

// applyAppSettings follows the app.* settings that belong to the desktop
// shell; Reload calls it (with the app's lock held) whenever settings change.
func (a *App) applyAppSettings(s store.AppSettings) {
	if err := a.autostart.apply(s.Autostart); err != nil {
		a.log.Warn("autostart not applied", "err", err)
	}
	a.updates.setEnabled(s.CheckUpdates)
}

// UpdateStatus reports self-update's state.
func (a *App) UpdateStatus() UpdateStatus { return a.updates.Status() }

// CheckForUpdates checks now and installs a newer release ("check now").
func (a *App) CheckForUpdates(ctx context.Context) (UpdateStatus, error) {
	return a.updates.Check(ctx)
}

// desktopWindow is the window's lifecycle: shown once positioned, hidden to
// the tray on close, geometry remembered, focused by a second launch.
type desktopWindow struct {
	app    *App
	hidden bool // start hidden (--minimized, app.start_minimized)

	mu        sync.Mutex
	ctx       context.Context // the Wails context, once started
	geometry  windowGeometry  // where the window is (last known)
	restore   bool            // geometry is known: saved by an earlier run, or since
	concealed bool            // hidden (started hidden, or closed to the tray)
	shown     sync.Once
	quitting  atomic.Bool // Quit from the tray, a signal: close for real
}

func (w *desktopWindow) context() context.Context {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ctx == nil {
		return context.Background()
	}
	return w.ctx
}

// place puts the window where it was, if that is on a screen.
func (w *desktopWindow) place(ctx context.Context) {
	w.mu.Lock()
	g, known := w.geometry, w.restore
	w.mu.Unlock()
	if !known {
		return
	}
	screens, err := wailsruntime.ScreenGetAll(ctx)
	for _, s := range screens {
		if err == nil && (s.IsCurrent || s.IsPrimary) && g.onScreen(s.Size.Width, s.Size.Height) {
			wailsruntime.WindowSetPosition(ctx, g.X, g.Y)
			break
		}
	}
	if g.Maximised {
		wailsruntime.WindowMaximise(ctx)
	}
}

// domReady positions the window where it was and shows it, unless it starts hidden.
func (w *desktopWindow) domReady(ctx context.Context) {
	w.shown.Do(func() {
		w.place(ctx)
		w.mu.Lock()
		hidden := w.hidden
		w.mu.Unlock()
		if !hidden {
			w.setConcealed(false)
			wailsruntime.WindowShow(ctx)
		}
	})
}

func (w *desktopWindow) setConcealed(v bool) (was bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	was, w.concealed = w.concealed, v
	return was
}

// started returns the Wails context, or nil before OnStartup (the Wails
// runtime ends the process when called without one).
func (w *desktopWindow) started() context.Context {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.ctx
}

// show brings the window to the front (tray "Open window", a second launch),
// where it was when it was hidden.
func (w *desktopWindow) show() {
	ctx := w.started()
	if ctx == nil {
		w.mu.Lock()
		w.hidden = false // not started yet: DOM ready will show it
		w.mu.Unlock()
		return
	}
	w.shown.Do(func() {}) // shown now: a late DOM ready must not hide or move it
	wasHidden := w.setConcealed(false)
	wailsruntime.WindowUnminimise(ctx)
	wailsruntime.WindowShow(ctx)
	if wasHidden {
		w.place(ctx) // a re-shown window may come back centred
	}
}

// quit closes for real (tray "Quit", a signal), remembering where the window was.
func (w *desktopWindow) quit() {
	w.quitting.Store(true)
	ctx := w.started()
	if ctx == nil {
		return // not started: beforeClose sees quitting
	}
	w.saveGeometry(ctx)
	wailsruntime.Quit(ctx)
}

// beforeClose saves the geometry and hides the window to the tray, when a
// tray host shows the icon to bring it back; otherwise the app quits.
func (w *desktopWindow) beforeClose(ctx context.Context) (prevent bool) {
	w.saveGeometry(ctx)
	if w.quitting.Load() || !TrayHostPresent() {
		return false
	}
	w.setConcealed(true)
	wailsruntime.WindowHide(ctx)
	return true
}

// saveGeometry remembers the window's size and position (not while it is
// hidden: the last shown geometry stands).
func (w *desktopWindow) saveGeometry(ctx context.Context) {
	w.mu.Lock()
	concealed, last := w.concealed, w.geometry
	w.mu.Unlock()
	if concealed {
		return
	}
	g := windowGeometry{Maximised: wailsruntime.WindowIsMaximised(ctx)}
	if g.Maximised {
		g = last // keep the size to return to
		g.Maximised = true
	} else {
		g.Width, g.Height = wailsruntime.WindowGetSize(ctx)
		g.X, g.Y = wailsruntime.WindowGetPosition(ctx)
	}
	if g.Width < minWindowWidth || g.Height < minWindowHeight {
		return // not a size to restore (not realised)
	}
	w.mu.Lock()
	w.geometry, w.restore = g, true
	w.mu.Unlock()
	if err := saveWindowGeometry(w.app.dataDir, g); err != nil {
		w.app.log.Warn("window geometry not saved", "err", err)
	}
}

// RunDesktop shows the window and the tray and blocks until the app quits.
// startHidden (--minimized, used by autostart) or app.start_minimized keeps
// the window in the tray until opened.
func (a *App) RunDesktop(assets fs.FS, startHidden bool) error {
	if s, err := a.store.Settings(context.Background()); err == nil && s.App.StartMinimized {
		startHidden = true
	}
	w := &desktopWindow{app: a, hidden: startHidden, concealed: true}
	w.geometry, w.restore = loadWindowGeometry(a.dataDir)
	if !w.restore {
		w.geometry = windowGeometry{Width: defaultWindowWidth, Height: defaultWindowHeight}
	}
	var (
		stop func()
		wg   sync.WaitGroup
	)
	system := NewSystem(a, w.context)
	a.updates.setQuitHook(w.quit)
	err := wails.Run(&options.App{
		Title:     "Longhaul",
		Width:     w.geometry.Width,
		Height:    w.geometry.Height,
		MinWidth:  minWindowWidth,
		MinHeight: minWindowHeight,
		// Hidden until the page is ready and the window is where it was last time.
		StartHidden: true,
		AssetServer: &assetserver.Options{Assets: assets},
		// Validation errors reach the page as {message, fields}, as over the door.
		ErrorFormatter: BoundError,
		SingleInstanceLock: &options.SingleInstanceLock{
			UniqueId:               instanceID(a.dataDir),
			OnSecondInstanceLaunch: func(options.SecondInstanceData) { w.show() },
		},
		OnStartup: func(ctx context.Context) {
			w.mu.Lock()
			w.ctx = ctx
			w.mu.Unlock()
			ctx, cancel := context.WithCancel(ctx)
			stop = cancel
			wg.Go(func() { forwardEvents(ctx, a.events) })
			// Ctrl-C, SIGTERM (logout, kill) quit, never hide to the tray: Wails
			// turns them into the same close request as the window's close button.
			signals := make(chan os.Signal, 1)
			signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
			wg.Go(func() {
				defer signal.Stop(signals)
				select {
				case <-ctx.Done():
				case <-signals:
					w.quit()
				}
			})
			wg.Go(func() {
				err := a.RunTray(ctx, TrayActions{ShowWindow: w.show, Quit: w.quit})
				if err != nil && err != errTrayUnsupported {
					a.log.Warn("tray", "err", err)
				}
			})
		},
		OnDomReady:    w.domReady,
		OnBeforeClose: w.beforeClose,
		OnShutdown: func(context.Context) {
			if stop != nil {
				stop()
			}
			wg.Wait()
		},
		Bind: []any{system},
	})
	a.updates.setQuitHook(nil)
	if err == nil && a.updates.restart.Load() {
		// The new process waits for this one to exit (WaitForPredecessor).
		exe, exeErr := a.updates.executable()
		if exeErr != nil {
			return fmt.Errorf("restart: %w", exeErr)
		}
		return spawnRestart(exe, os.Args[1:])
	}
	return err
}

// forwardEvents relays hub events to the window until ctx ends.
func forwardEvents(ctx context.Context, hub *Hub) {
	for {
		events, unsubscribe := hub.Subscribe()
		for open := true; open; {
			select {
			case <-ctx.Done():
				unsubscribe()
				return
			case m, ok := <-events:
				if !ok {
					open = false // fell behind: subscribe again
					break
				}
				var v any
				if json.Unmarshal(m.Data, &v) == nil {
					wailsruntime.EventsEmit(ctx, m.Name, v)
				}
			}
		}
		unsubscribe()
	}
}
