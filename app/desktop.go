package app

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"runtime"
	"sync"

	"github.com/wailsapp/wails/v2"
	"github.com/wailsapp/wails/v2/pkg/options"
	"github.com/wailsapp/wails/v2/pkg/options/assetserver"
	wailsruntime "github.com/wailsapp/wails/v2/pkg/runtime"
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

// RunDesktop shows the window and blocks until it is closed.
func (a *App) RunDesktop(assets fs.FS, startHidden bool) error {
	var (
		mu     sync.Mutex
		winCtx = context.Background()
		stop   func()
		wg     sync.WaitGroup
	)
	system := NewSystem(a, func() context.Context { mu.Lock(); defer mu.Unlock(); return winCtx })
	return wails.Run(&options.App{
		Title:       "Longhaul",
		Width:       1100,
		Height:      760,
		MinWidth:    720,
		MinHeight:   520,
		StartHidden: startHidden,
		AssetServer: &assetserver.Options{Assets: assets},
		OnStartup: func(ctx context.Context) {
			mu.Lock()
			winCtx = ctx
			mu.Unlock()
			ctx, cancel := context.WithCancel(ctx)
			stop = cancel
			wg.Go(func() { forwardEvents(ctx, a.events) })
		},
		OnShutdown: func(context.Context) {
			if stop != nil {
				stop()
			}
			wg.Wait()
		},
		Bind: []any{system},
	})
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
