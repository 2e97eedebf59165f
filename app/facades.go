package app

import (
	"context"

	"longhaul/app/update"
)

// Facades are the per-domain facades the window binds and the HTTP door (app/door) calls, so
// each operation has one implementation. Every exported method of a facade is callable from
// the UI: lifecycle methods stay on App.
type Facades struct {
	Proxy    *Proxy
	Accounts *Accounts
	Settings *Settings
	History  *History
	Clients  *Clients
	Updates  *Updates
}

// bound is what every facade holds: the app, and where the context of a call comes from
// (the window's context, or the HTTP request's).
type bound struct {
	app *App
	ctx func() context.Context
}

// Facades returns the facades over a; ctx supplies each call's context.
func (a *App) Facades(ctx func() context.Context) Facades {
	b := bound{app: a, ctx: ctx}
	return Facades{Proxy: &Proxy{b}, Accounts: &Accounts{b}, Settings: &Settings{b}, History: &History{b}, Clients: &Clients{b}, Updates: &Updates{b}}
}

// Bindings lists the facades for Wails' Bind option.
func (f Facades) Bindings() []any {
	return []any{f.Proxy, f.Accounts, f.Settings, f.History, f.Clients, f.Updates}
}

// Proxy starts and stops the proxy and reports its state.
type Proxy struct{ bound }

// Status reports the proxy's state.
func (p *Proxy) Status() (ProxyStatus, error) { return p.app.Status(), nil }

// SetEnabled starts or stops the proxy; stopping lets requests in flight finish.
func (p *Proxy) SetEnabled(on bool) (ProxyStatus, error) {
	return p.app.SetProxyEnabled(p.ctx(), on)
}

// Updates is self-update: its state, "check now", and "restart to finish".
type Updates struct{ bound }

// Status reports self-update's state: off (and why), up to date, ready to restart, failed.
func (u *Updates) Status() (update.Status, error) { return u.app.updates.Status(), nil }

// Check checks for a newer release now and installs it ("restart to finish").
func (u *Updates) Check() (update.Status, error) { return u.app.updates.Check(u.ctx()) }

// Restart closes the window and starts Longhaul again: the "restart to finish" of an update.
func (u *Updates) Restart() error { return u.app.updates.Restart() }
