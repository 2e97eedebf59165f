package app

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// TrayActions are what the tray's window entries do. Nil: the entry does nothing.
type TrayActions struct {
	ShowWindow func() // "Open window"
	Quit       func() // "Quit"
}

// errTrayUnsupported: no tray on this platform (macOS until the tray can start
// on the main thread; the window keeps the proxy toggle).
var errTrayUnsupported = errors.New("no tray on this platform")

// trayText is the tray's wording in one language (app.language).
type trayText struct {
	Proxy, Open, Quit string
	Restart           string // "%s": the version
	Listening         string // "%s": the address
	Off, OffBecause   string // OffBecause "%s": the error
	Line              string // "%s · %s · %s": where, requests today, active sessions
	Requests          func(n int64) string
	Sessions          func(n int64) string
}

// trayTexts by app.language; anything else reads English.
var trayTexts = map[string]trayText{
	"en": {
		Proxy: "Proxy on", Open: "Open window", Quit: "Quit",
		Restart:   "Restart to update (version %s)",
		Listening: "Listening on %s", Off: "Proxy off", OffBecause: "Proxy off: %s",
		Line:     "%s · %s today · %s",
		Requests: func(n int64) string { return plural(n, "request") },
		Sessions: func(n int64) string { return plural(n, "active session") },
	},
	"zh-CN": {
		Proxy: "启用代理", Open: "打开窗口", Quit: "退出",
		Restart:   "重启以完成更新（版本 %s）",
		Listening: "监听 %s", Off: "代理已关闭", OffBecause: "代理已关闭：%s",
		Line:     "%s · 今日 %s · %s",
		Requests: func(n int64) string { return fmt.Sprintf("%d 个请求", n) },
		Sessions: func(n int64) string { return fmt.Sprintf("%d 个活动会话", n) },
	},
}

func trayTextFor(language string) trayText {
	if t, ok := trayTexts[language]; ok {
		return t
	}
	return trayTexts["en"]
}

// English labels; the DBus tray test finds the items by them.
var (
	trayLabelProxy = trayTexts["en"].Proxy
	trayLabelOpen  = trayTexts["en"].Open
	trayLabelQuit  = trayTexts["en"].Quit
	// trayLabelRestart prefixes the entry shown once an update is installed.
	trayLabelRestart = "Restart to update"
)

// trayRefresh is how often the status line refreshes without an event (it
// counts active sessions, which publish no event).
const trayRefresh = 5 * time.Second

// trayMenu is the platform tray as the tray loop drives it (tray_systray.go).
type trayMenu interface {
	setStatus(line string)
	setProxy(on bool)
	setRestart(label string) // "": hidden
	setLabels(t trayText)    // the fixed entries' wording
}

// trayClicks are the menu's clicks, buffered so none is lost while the loop is busy.
type trayClicks struct {
	toggle, open, quit, restart chan struct{}
}

func newTrayClicks() trayClicks {
	return trayClicks{toggle: make(chan struct{}, 4), open: make(chan struct{}, 4), quit: make(chan struct{}, 1), restart: make(chan struct{}, 1)}
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

// restartLabel is the restart entry's label for an update status ("": hide it).
func (t trayText) restartLabel(st UpdateStatus) string {
	if st.State != UpdateReady {
		return ""
	}
	return fmt.Sprintf(t.Restart, st.Latest)
}

// statusLine is the tray's first line: where the proxy listens (or why it
// does not), requests today and active sessions.
func (t trayText) statusLine(st ProxyStatus, today int64, sessions int) string {
	where := fmt.Sprintf(t.Listening, st.Address)
	switch {
	case !st.Running && st.Error != "":
		where = fmt.Sprintf(t.OffBecause, st.Error)
	case !st.Running:
		where = t.Off
	}
	return fmt.Sprintf(t.Line, where, t.Requests(today), t.Sessions(int64(sessions)))
}

// language reads app.language (English when it cannot).
func (a *App) language(ctx context.Context) string {
	s, err := a.store.Settings(ctx)
	if err != nil {
		return "en"
	}
	return s.App.Language
}

func plural(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// activeSessions counts the sessions bound to an account (used within the
// affinity window, an hour).
func (a *App) activeSessions(now time.Time) int {
	n := 0
	for _, st := range a.proxy.Pool().Status(now) {
		n += st.SessionsBound
	}
	return n
}

// driveTray keeps the menu in step with the proxy (whoever toggled it: the
// tray, the window, the CLI) and acts on clicks, until ctx ends.
func (a *App) driveTray(ctx context.Context, menu trayMenu, clicks trayClicks, act TrayActions) {
	var (
		days   dayCounter
		toggle sync.Mutex // one toggle at a time; a second click waits for the first
		wg     sync.WaitGroup
	)
	defer wg.Wait()
	text, lang := trayTextFor("en"), ""
	// relabel follows app.language: settings changes reach the tray as the
	// proxy status Reload publishes.
	relabel := func() {
		if l := a.language(ctx); l != lang {
			lang, text = l, trayTextFor(l)
			menu.setLabels(text)
			menu.setRestart(text.restartLabel(a.UpdateStatus()))
		}
	}
	render := func() {
		st := a.Status()
		now := time.Now()
		menu.setProxy(st.Running)
		menu.setStatus(text.statusLine(st, days.today(now, st.Requests), a.activeSessions(now)))
	}
	relabel()
	render()
	menu.setRestart(text.restartLabel(a.UpdateStatus()))
	events, unsubscribe := a.events.Subscribe()
	defer func() { unsubscribe() }()
	tick := time.NewTicker(trayRefresh)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case m, ok := <-events:
			if !ok { // fell behind: subscribe again (the hub replays the latest status)
				unsubscribe()
				events, unsubscribe = a.events.Subscribe()
				continue
			}
			switch m.Name {
			case EventProxyStatus:
				relabel()
				render()
			case EventUpdateStatus:
				menu.setRestart(text.restartLabel(a.UpdateStatus()))
			}
		case <-tick.C:
			render()
		case <-clicks.toggle:
			// Stopping waits for streams in flight: off the loop, so the menu stays live.
			wg.Go(func() {
				toggle.Lock()
				defer toggle.Unlock()
				on := !a.Status().Running
				if _, err := a.SetProxyEnabled(ctx, on); err != nil {
					a.log.Error("tray: proxy toggle", "on", on, "err", err)
				}
			})
		case <-clicks.open:
			if act.ShowWindow != nil {
				act.ShowWindow()
			}
		case <-clicks.restart:
			if err := a.Restart(); err != nil {
				a.log.Error("tray: restart", "err", err)
			}
		case <-clicks.quit:
			if act.Quit != nil {
				act.Quit()
			}
		}
	}
}
