// Package desktop is the app's window: a Wails window on the UI's assets,
// shown once it is where it was last time, hidden to the tray on close when a
// tray shows the icon, one per data directory (a second launch shows the
// first). What the page calls and hears, and the tray next to it, come from
// the caller: this package knows nothing of the app behind them.
package desktop

import (
	"context"
	"io/fs"
	"log/slog"
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
)

// CanShowWindow reports whether this binary and session can open a window,
// and why not: the binary must be built with the desktop tag, and on Linux a
// display must exist (GTK panics without one).
func CanShowWindow() (bool, string) {
	if !desktopBuild {
		return false, "this binary was built without the desktop tag"
	}
	if runtime.GOOS == "linux" && os.Getenv("DISPLAY") == "" && os.Getenv("WAYLAND_DISPLAY") == "" {
		return false, "no display (DISPLAY and WAYLAND_DISPLAY are unset)"
	}
	return true, ""
}

// Options configure the window.
type Options struct {
	// Assets is the UI (frontend/dist). Required.
	Assets fs.FS
	// DataDir holds window.json (the remembered geometry) and keys the
	// single-instance lock: one window per data directory.
	DataDir string
	// StartHidden keeps the window in the tray until opened (--minimized,
	// app.start_minimized).
	StartHidden bool
	// ErrorFormatter turns a bound method's error into what the page receives.
	// Nil: the error's text.
	ErrorFormatter func(error) any
	// Events sends the app's events to the page: it calls emit for each until
	// ctx ends (the window closes). Nil: the page hears nothing.
	Events func(ctx context.Context, emit func(name string, data any))
	// Tray runs the tray until ctx ends; its "Open window" and "Quit" call show
	// and quit. It starts with the window. Nil: no tray.
	Tray func(ctx context.Context, show, quit func()) error
	// CloseToTray reports whether a tray host shows the tray icon, so closing
	// the window hides it there instead of quitting. Nil: closing quits.
	CloseToTray func() bool
	Logger      *slog.Logger // nil: discard
}

// Window is the window's lifecycle. It is not bound: nothing here is
// callable from the page.
type Window struct {
	opts Options
	log  *slog.Logger

	mu        sync.Mutex
	ctx       context.Context // the Wails context, once started
	hidden    bool            // start hidden
	geometry  geometry        // where the window is (last known)
	restore   bool            // geometry is known: saved by an earlier run, or since
	concealed bool            // hidden (started hidden, or closed to the tray)
	shown     sync.Once
	quitting  atomic.Bool // Quit from the tray, a signal, a restart: close for real
}

// New prepares the window; Run opens it.
func New(opts Options) *Window {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	w := &Window{opts: opts, log: log, hidden: opts.StartHidden, concealed: true}
	w.geometry, w.restore = readGeometry(opts.DataDir)
	if !w.restore {
		w.geometry = geometry{Width: defaultWidth, Height: defaultHeight}
	}
	return w
}

// Context is the window's context, for the calls the page makes into bound
// objects: the one Wails started the window with, Background before that.
func (w *Window) Context() context.Context {
	if ctx := w.started(); ctx != nil {
		return ctx
	}
	return context.Background()
}

// started returns the Wails context, or nil before OnStartup (the Wails
// runtime ends the process when called without one).
func (w *Window) started() context.Context {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.ctx
}

// Run opens the window on bind (the objects whose exported methods the page
// calls: every one of them becomes callable from JavaScript) and blocks until
// the window closes for good.
func (w *Window) Run(bind []any) error {
	var (
		stop func()
		wg   sync.WaitGroup
	)
	return wails.Run(&options.App{
		Title:     "Longhaul",
		Width:     w.geometry.Width,
		Height:    w.geometry.Height,
		MinWidth:  minWidth,
		MinHeight: minHeight,
		// Hidden until the page is ready and the window is where it was last time.
		StartHidden:    true,
		AssetServer:    &assetserver.Options{Assets: w.opts.Assets},
		ErrorFormatter: w.opts.ErrorFormatter,
		SingleInstanceLock: &options.SingleInstanceLock{
			UniqueId:               instanceID(w.opts.DataDir),
			OnSecondInstanceLaunch: func(options.SecondInstanceData) { w.Show() },
		},
		OnStartup: func(ctx context.Context) {
			w.mu.Lock()
			w.ctx = ctx
			w.mu.Unlock()
			ctx, cancel := context.WithCancel(ctx)
			stop = cancel
			w.startCompanions(ctx, &wg)
		},
		OnDomReady:    w.domReady,
		OnBeforeClose: w.beforeClose,
		OnShutdown: func(context.Context) {
			if stop != nil {
				stop()
			}
			wg.Wait()
		},
		Bind: bind,
	})
}

// startCompanions starts what lives as long as the window: the events to the
// page, the signal watch, the tray.
func (w *Window) startCompanions(ctx context.Context, wg *sync.WaitGroup) {
	if w.opts.Events != nil {
		wg.Go(func() {
			w.opts.Events(ctx, func(name string, data any) { wailsruntime.EventsEmit(ctx, name, data) })
		})
	}
	// Ctrl-C, SIGTERM (logout, kill) quit, never hide to the tray: Wails
	// turns them into the same close request as the window's close button.
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	wg.Go(func() {
		defer signal.Stop(signals)
		select {
		case <-ctx.Done():
		case <-signals:
			w.quitOnSignal()
		}
	})
	if w.opts.Tray != nil {
		wg.Go(func() {
			if err := w.opts.Tray(ctx, w.Show, w.Quit); err != nil {
				w.log.Warn("tray", "err", err)
			}
		})
	}
}

// place puts the window where it was, if that is on a screen.
func (w *Window) place(ctx context.Context) {
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
func (w *Window) domReady(ctx context.Context) {
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

func (w *Window) setConcealed(v bool) (was bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	was, w.concealed = w.concealed, v
	return was
}

// Show brings the window to the front (the tray's "Open window", a second
// launch), where it was when it was hidden.
func (w *Window) Show() {
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

// Quit closes the window for real (the tray's "Quit", a signal, a restart),
// remembering where it was; Run returns.
func (w *Window) Quit() {
	w.quitting.Store(true)
	ctx := w.started()
	if ctx == nil {
		return // not started: beforeClose sees quitting
	}
	w.saveGeometry(ctx)
	wailsruntime.Quit(ctx)
}

// quitOnSignal is Quit for a signal, which Wails also handles (it asks the window to close,
// running beforeClose, and may end the main loop at once). It saves no geometry itself:
// beforeClose does, while the main loop still runs. Saving here could wait on the main thread
// while the main thread, shutting down, waits for this goroutine: the window would never exit.
func (w *Window) quitOnSignal() {
	w.quitting.Store(true)
	if ctx := w.started(); ctx != nil {
		wailsruntime.Quit(ctx) // returns at once: the close runs on Wails' own goroutine
	}
}

// beforeClose saves the geometry and hides the window to the tray, when a
// tray host shows the icon to bring it back; otherwise the app quits.
func (w *Window) beforeClose(ctx context.Context) (prevent bool) {
	w.saveGeometry(ctx)
	if w.quitting.Load() || w.opts.CloseToTray == nil || !w.opts.CloseToTray() {
		return false
	}
	w.setConcealed(true)
	wailsruntime.WindowHide(ctx)
	return true
}

// saveGeometry remembers the window's size and position (not while it is
// hidden: the last shown geometry stands).
func (w *Window) saveGeometry(ctx context.Context) {
	w.mu.Lock()
	concealed, last := w.concealed, w.geometry
	w.mu.Unlock()
	if concealed {
		return
	}
	g := geometry{Maximised: wailsruntime.WindowIsMaximised(ctx)}
	if g.Maximised {
		g = last // keep the size to return to
		g.Maximised = true
	} else {
		g.Width, g.Height = wailsruntime.WindowGetSize(ctx)
		g.X, g.Y = wailsruntime.WindowGetPosition(ctx)
	}
	if g.Width < minWidth || g.Height < minHeight {
		return // not a size to restore (not realised)
	}
	w.mu.Lock()
	w.geometry, w.restore = g, true
	w.mu.Unlock()
	if err := writeGeometry(w.opts.DataDir, g); err != nil {
		w.log.Warn("window geometry not saved", "err", err)
	}
}
