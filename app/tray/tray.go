// Package tray is the tray icon and its menu: a status line (where the proxy
// listens, requests today, active sessions), a pressure line (the busiest
// session's context pressure and next compaction layer; from Layer 2 on the
// icon has an amber dot), the proxy toggle, "Restart to update" once an
// update is installed, "Open window" and "Quit". It knows nothing of the
// app: what it shows and what its entries do come in Options.
package tray

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"
)

// State is what the menu shows.
type State struct {
	Running  bool   // the proxy serves
	Address  string // where it listens (or would)
	Error    string // why it is not running although it should be; "": none
	Requests int64  // requests since the app started; the tray counts them per day
	Sessions int    // active sessions
	Language string // app.language; one the tray does not speak reads English
	Update   string // version of an installed update waiting for a restart; "": none
	Pressure Pressure
}

// Pressure is the context pressure of the busiest session (which one is the
// app's choice), as the pressure line and the icon show it.
type Pressure struct {
	Session string // "": no session active lately; the rest is then zero
	// Ratio is the session's latest request's size over the model's context
	// window, as the compaction thresholds see it.
	Ratio float64
	// NextLayer is the next compaction layer (1–3) and NextThreshold the
	// ratio it starts at; 0: the ratio has reached every layer's threshold.
	NextLayer     int
	NextThreshold float64
}

// alert reports whether the session is at Layer 2 or above (its ratio
// reached the Layer-2 threshold): the icon then changes. The thresholds never
// fall from layer to layer (settings validation refuses that), so that is a
// next layer past 2, or none left.
func (p Pressure) alert() bool {
	return p.Session != "" && (p.NextLayer == 0 || p.NextLayer > 2)
}

// Options are what the tray shows and what its entries do. Only State is
// required; a nil func makes its entry do nothing.
type Options struct {
	// State reports what the menu shows. The tray asks when Changes says so,
	// and every few seconds (active sessions change without telling anyone).
	State func(ctx context.Context) State
	// Changes calls changed whenever State may have changed (the proxy turned
	// on or off from anywhere, a setting, an installed update) until ctx ends.
	// Nil: the menu refreshes every few seconds only.
	Changes func(ctx context.Context, changed func())
	// SetProxy starts or stops the proxy (the toggle). Stopping may wait for
	// streams in flight; the menu stays live meanwhile.
	SetProxy func(ctx context.Context, on bool) error
	// Restart starts the installed update ("Restart to update").
	Restart func() error
	// ShowWindow is "Open window"; Quit is "Quit".
	ShowWindow, Quit func()
	Logger           *slog.Logger // nil: discard
}

// ErrUnsupported: no tray on this platform (macOS until the tray can start
// on the main thread; the window keeps the proxy toggle).
var ErrUnsupported = errors.New("no tray on this platform")

// refresh is how often the status line refreshes without a change (it counts
// active sessions, which publish no event).
const refresh = 5 * time.Second

// menu is the platform tray as the loop drives it (systray.go).
type menu interface {
	setStatus(line string)
	setPressure(line string, alert bool) // alert: the icon with the dot
	setProxy(on bool)
	setRestart(label string) // "": hidden
	setLabels(t text)        // the fixed entries' wording
}

// clicks are the menu's clicks, buffered so none is lost while the loop is busy.
type clicks struct {
	toggle, open, quit, restart chan struct{}
}

func newClicks() clicks {
	return clicks{toggle: make(chan struct{}, 4), open: make(chan struct{}, 4), quit: make(chan struct{}, 1), restart: make(chan struct{}, 1)}
}

// dayCounter turns the proxy's running request count into "requests today".
type dayCounter struct {
	day  string
	base int64
}

// today returns the requests since local midnight (or since start, if the
// app started today); total is the count since start.
func (d *dayCounter) today(now time.Time, total int64) int64 {
	day := now.Format(time.DateOnly)
	if d.day == "" {
		d.day = day
	} else if d.day != day {
		d.day, d.base = day, total
	}
	return total - d.base
}

// loop keeps the menu in step with State (whoever toggled the proxy: the
// tray, the window, the CLI) and acts on clicks, until ctx ends.
type loop struct {
	opts Options
	menu menu
	log  *slog.Logger

	days     dayCounter
	labelled bool   // the fixed entries have their wording
	lang     string // ...in this language
	text     text

	toggle sync.Mutex // one toggle at a time; a second click waits for the first
	wg     sync.WaitGroup
}

func (l *loop) run(ctx context.Context, c clicks) {
	defer l.wg.Wait()
	changed := make(chan struct{}, 1)
	if l.opts.Changes != nil {
		l.wg.Go(func() {
			l.opts.Changes(ctx, func() {
				select {
				case changed <- struct{}{}:
				default: // a refresh is pending already
				}
			})
		})
	}
	l.text = textFor("en")
	l.render(ctx)
	tick := time.NewTicker(refresh)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-changed:
			l.render(ctx)
		case <-tick.C:
			l.render(ctx)
		case <-c.toggle:
			l.toggleProxy(ctx)
		case <-c.open:
			call(l.opts.ShowWindow)
		case <-c.restart:
			if l.opts.Restart != nil {
				if err := l.opts.Restart(); err != nil {
					l.log.Error("tray: restart", "err", err)
				}
			}
		case <-c.quit:
			call(l.opts.Quit)
		}
	}
}

// render draws State: the wording first when app.language changed.
func (l *loop) render(ctx context.Context) {
	st := l.opts.State(ctx)
	if !l.labelled || st.Language != l.lang {
		l.labelled, l.lang, l.text = true, st.Language, textFor(st.Language)
		l.menu.setLabels(l.text)
	}
	now := time.Now()
	l.menu.setProxy(st.Running)
	l.menu.setStatus(l.text.statusLine(st, l.days.today(now, st.Requests)))
	l.menu.setPressure(l.text.pressureLine(st.Pressure), st.Pressure.alert())
	l.menu.setRestart(l.text.restartLabel(st.Update))
}

// toggleProxy flips the proxy off the loop: stopping waits for streams in
// flight, and the menu must stay live meanwhile.
func (l *loop) toggleProxy(ctx context.Context) {
	if l.opts.SetProxy == nil {
		return
	}
	l.wg.Go(func() {
		l.toggle.Lock()
		defer l.toggle.Unlock()
		on := !l.opts.State(ctx).Running
		if err := l.opts.SetProxy(ctx, on); err != nil {
			l.log.Error("tray: proxy toggle", "on", on, "err", err)
		}
	})
}

func call(f func()) {
	if f != nil {
		f()
	}
}
