//go:build !darwin

package tray

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"time"

	"fyne.io/systray"
	"github.com/godbus/dbus/v5"
)

// Run shows the tray icon and its menu until ctx ends. On Linux the tray is
// a StatusNotifierItem on the session bus (no GTK); with no session bus, or
// no tray host on it, the menu lives on unseen and the window keeps the
// toggle.
//
// fyne.io/systray keeps its state in package variables: run one tray per
// process.
func Run(ctx context.Context, opts Options) error {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	alert, err := alertIcon()
	if err != nil {
		log.Warn("tray: no alert icon; the pressure line still tells", "err", err)
		alert = icon
	}
	items := make(chan *systrayMenu, 1)
	done := make(chan error, 1)
	go func() {
		// systray.Run runs its event loop on this thread (Windows needs that;
		// on Linux it only waits for Quit).
		runtime.LockOSThread()
		done <- recoverTray("run", func() {
			systray.Run(func() { items <- newSystrayMenu(alert) }, nil)
		})
	}()
	var m *systrayMenu
	select {
	case m = <-items:
	case err := <-done:
		return err
	case <-ctx.Done():
		return quitTray(log, done)
	}
	c := newClicks()
	go forwardClicks(ctx, m.toggle.ClickedCh, c.toggle)
	go forwardClicks(ctx, m.open.ClickedCh, c.open)
	go forwardClicks(ctx, m.quit.ClickedCh, c.quit)
	go forwardClicks(ctx, m.restart.ClickedCh, c.restart)
	l := &loop{opts: opts, menu: m, log: log}
	l.run(ctx, c)
	return quitTray(log, done)
}

// forwardClicks passes an entry's clicks to the loop until ctx ends; a click
// while one is pending is the same click.
func forwardClicks(ctx context.Context, from <-chan struct{}, to chan<- struct{}) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-from:
			select {
			case to <- struct{}{}:
			default: // already pending
			}
		}
	}
}

// quitTray ends the tray loop. systray panics in Quit when it never reached
// a session bus (it closes a nil connection); that is not worth a crash.
func quitTray(log *slog.Logger, done <-chan error) error {
	if err := recoverTray("quit", systray.Quit); err != nil {
		log.Warn("tray", "err", err)
	}
	select {
	case err := <-done:
		if err != nil {
			log.Warn("tray", "err", err)
		}
	case <-time.After(5 * time.Second):
		return fmt.Errorf("tray did not stop within 5s")
	}
	return nil
}

func recoverTray(action string, f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("tray %s: %v", action, r)
		}
	}()
	f()
	return nil
}

// systrayMenu is the menu on fyne.io/systray.
type systrayMenu struct {
	status, pressure, toggle, open, restart, quit *systray.MenuItem
	line, pressureLine, restartLabel              string
	on, known                                     bool
	alertIcon                                     []byte // icon with the dot
	alert                                         bool   // alertIcon is shown
}

// newSystrayMenu builds the menu; systray calls it once its loop is ready.
// alert is the icon shown from Layer 2 on.
func newSystrayMenu(alert []byte) *systrayMenu {
	systray.SetIcon(icon)
	systray.SetTitle("Longhaul")
	systray.SetTooltip("Longhaul")
	m := &systrayMenu{alertIcon: alert}
	m.status = systray.AddMenuItem("Longhaul", "")
	m.status.Disable()
	m.pressure = systray.AddMenuItem("", "The busiest session's context pressure")
	m.pressure.Disable()
	systray.AddSeparator()
	m.toggle = systray.AddMenuItemCheckbox(labelProxy, "Start or stop the local proxy", false)
	m.open = systray.AddMenuItem(labelOpen, "Show the Longhaul window")
	m.restart = systray.AddMenuItem(labelRestart, "Start the installed update")
	m.restart.Hide()
	systray.AddSeparator()
	m.quit = systray.AddMenuItem(labelQuit, "Stop the proxy and quit Longhaul")
	return m
}

func (m *systrayMenu) setStatus(line string) {
	if line == m.line {
		return
	}
	m.line = line
	m.status.SetTitle(line)
	systray.SetTooltip("Longhaul — " + line)
}

func (m *systrayMenu) setPressure(line string, alert bool) {
	if line != m.pressureLine {
		m.pressureLine = line
		m.pressure.SetTitle(line)
	}
	if alert != m.alert {
		m.alert = alert
		if alert {
			systray.SetIcon(m.alertIcon)
		} else {
			systray.SetIcon(icon)
		}
	}
}

func (m *systrayMenu) setLabels(t text) {
	m.toggle.SetTitle(t.Proxy)
	m.open.SetTitle(t.Open)
	m.quit.SetTitle(t.Quit)
}

func (m *systrayMenu) setRestart(label string) {
	if label == m.restartLabel {
		return
	}
	m.restartLabel = label
	if label == "" {
		m.restart.Hide()
		return
	}
	m.restart.SetTitle(label)
	m.restart.Show()
}

func (m *systrayMenu) setProxy(on bool) {
	if m.known && on == m.on {
		return
	}
	m.known, m.on = true, on
	if on {
		m.toggle.Check()
	} else {
		m.toggle.Uncheck()
	}
}

// HostPresent reports whether a tray host shows tray icons, so closing
// the window can hide it (to the tray) rather than quit: on Linux a
// StatusNotifierWatcher on the session bus (stock GNOME has none without an
// extension), on Windows always.
func HostPresent() bool {
	if runtime.GOOS == "windows" {
		return true
	}
	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		return false
	}
	defer conn.Close() //nolint:errcheck // a private, read-only connection
	var owned bool
	if err := conn.BusObject().Call("org.freedesktop.DBus.NameHasOwner", 0, "org.kde.StatusNotifierWatcher").Store(&owned); err != nil {
		return false
	}
	return owned
}
