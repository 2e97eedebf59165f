package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"sync"
	"sync/atomic"

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
	app      *App
	hidden   bool // start hidden (--minimized, app.start_minimized)
	geometry windowGeometry
	restore  bool // geometry was saved by an earlier run

	mu       sync.Mutex
	ctx      context.Context // the Wails context, once started
	shown    sync.Once
	quitting atomic.Bool // Quit from the tray: close for real
}

func (w *desktopWindow) context() context.Context {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ctx == nil {
		return context.Background()
	}
	return w.ctx
}

// domReady positions the window where it was and shows it, unless it starts hidden.
func (w *desktopWindow) domReady(ctx context.Context) {
	w.shown.Do(func() {
		if w.restore {
			screens, err := wailsruntime.ScreenGetAll(ctx)
			for _, s := range screens {
				if err == nil && (s.IsCurrent || s.IsPrimary) && w.geometry.onScreen(s.Size.Width, s.Size.Height) {
					wailsruntime.WindowSetPosition(ctx, w.geometry.X, w.geometry.Y)
					break
				}
			}
			if w.geometry.Maximised {
				wailsruntime.WindowMaximise(ctx)
			}
		}
		if !w.hidden {
			wailsruntime.WindowShow(ctx)
		}
	})
}

// show brings the window to the front (tray "Open window", a second launch).
func (w *desktopWindow) show() {
	ctx := w.context()
	w.shown.Do(func() {}) // shown now: a late DOM ready must not hide or move it
	wailsruntime.WindowUnminimise(ctx)
	wailsruntime.WindowShow(ctx)
}

// quit closes for real (tray "Quit"), remembering where the window was.
func (w *desktopWindow) quit() {
	w.quitting.Store(true)
	ctx := w.context()
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
	wailsruntime.WindowHide(ctx)
	return true
}

func (w *desktopWindow) saveGeometry(ctx context.Context) {
	g := windowGeometry{Maximised: wailsruntime.WindowIsMaximised(ctx)}
	if g.Maximised {
		g = w.geometry // keep the size to return to
		g.Maximised = true
	} else {
		g.Width, g.Height = wailsruntime.WindowGetSize(ctx)
		g.X, g.Y = wailsruntime.WindowGetPosition(ctx)
	}
	if g.Width < minWindowWidth || g.Height < minWindowHeight {
		return // not a size to restore (hidden or not realised)
	}
	w.geometry = g
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
	w := &desktopWindow{app: a, hidden: startHidden}
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
