package app

import "context"

// System is the facade the window binds: every exported method is callable
// from the UI, so lifecycle methods live elsewhere.
type System struct {
	app *App
	ctx func() context.Context
}

// NewSystem binds the app; ctx supplies the window's context once it exists.
func NewSystem(a *App, ctx func() context.Context) *System { return &System{app: a, ctx: ctx} }

// Status reports the proxy's state.
func (s *System) Status() (ProxyStatus, error) { return s.app.Status(), nil }

// SetProxyEnabled starts or stops the proxy.
func (s *System) SetProxyEnabled(on bool) (ProxyStatus, error) {
	return s.app.SetProxyEnabled(s.ctx(), on)
}

// Accounts lists the upstream accounts (secrets masked) with cooldowns, quota and usage.
func (s *System) Accounts() ([]AccountView, error) { return s.app.Accounts(s.ctx()) }

// UpdateStatus reports self-update's state: off (and why), up to date, ready to restart, failed.
func (s *System) UpdateStatus() (UpdateStatus, error) { return s.app.UpdateStatus(), nil }

// CheckForUpdates checks for a newer release now and installs it ("restart to finish").
func (s *System) CheckForUpdates() (UpdateStatus, error) { return s.app.CheckForUpdates(s.ctx()) }

// Restart closes the window and starts Longhaul again: the "restart to finish" of an update.
func (s *System) Restart() error { return s.app.Restart() }
