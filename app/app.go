// Package app is everything the user touches: the bound facades of the window,
// the headless HTTP door that serves the same UI to a browser, the CLI, and
// the glue that pushes settings and accounts from the store into the proxy.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"longhaul/proxy"
	"longhaul/store"
)

// Overrides are command-line values that win over stored settings for this
// run only (they are never written back).
type Overrides struct {
	Port int
}

// App connects the store and the proxy. It owns no goroutine outside Run.
type App struct {
	store     *store.Store
	proxy     *proxy.Server
	log       *slog.Logger
	version   string
	dataDir   string
	overrides Overrides
	events    *Hub

	mu      sync.Mutex // serialises reloads and toggles
	lastErr string     // why the proxy is not running, if it should be

	revocations chan revocation // 401/403s to persist, off the request path
	recorder    *Recorder       // history and live monitor (history.go); nil: none

	autostart *autostart // the login entry, following app.autostart (autostart.go)
	updates   *updater   // self-update, following app.check_updates (update.go)
}

type revocation struct {
	accountID int64
	reason    string
}

// Deps are App's collaborators.
type Deps struct {
	Store     *store.Store
	Proxy     *proxy.Server
	Logger    *slog.Logger // nil: discard
	Version   string
	DataDir   string
	Overrides Overrides
	Recorder  *Recorder // the proxy's Observer, built before the proxy; nil: no history

	// Update is the release source built into the binary; zero: updates off.
	Update UpdateConfig
}

// New returns an App; call Load before serving.
func New(d Deps) *App {
	log := d.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	a := &App{
		store: d.Store, proxy: d.Proxy, log: log, version: d.Version, dataDir: d.DataDir,
		overrides: d.Overrides, events: NewHub(), revocations: make(chan revocation, 64),
		recorder: d.Recorder,
	}
	a.autostart = newAutostart(d.DataDir)
	a.updates = newUpdater(d.Update, d.Version, log, func(st UpdateStatus) { a.events.Publish(EventUpdateStatus, st) })
	return a
}

// AccountRevoked is the proxy's hook for an account an upstream refused with
// 401/403. It never blocks: Run persists the change; the proxy has already
// stopped using the account.
func (a *App) AccountRevoked(accountID int64, reason string) {
	select {
	case a.revocations <- revocation{accountID, reason}:
	default:
		a.log.Warn("account disable not persisted (queue full)", "account", accountID)
	}
}

// Events is the fan-out the UI doors subscribe to.
func (a *App) Events() *Hub { return a.events }

// Reload reads settings and accounts from the store and pushes them into the
// proxy. It runs at start and whenever the database changes (the CLI, another
// window), so edits apply without a restart.
func (a *App) Reload(ctx context.Context) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	settings, err := a.store.Settings(ctx)
	if err != nil {
		return fmt.Errorf("load settings: %w", err)
	}
	accounts, err := a.store.Accounts(ctx)
	if err != nil {
		return fmt.Errorf("load accounts: %w", err)
	}
	a.applyAppSettings(settings.App)
	a.configureHistory(settings.History)
	a.proxy.SetAccounts(proxyAccounts(accounts))
	if err := a.proxy.Reconfigure(proxyConfig(settings, a.overrides)); err != nil {
		a.lastErr = err.Error()
		a.log.Error("settings not applied", "err", err)
	} else if a.proxy.Running() {
		a.lastErr = ""
	}
	a.publishLocked()
	return nil
}

// Run keeps the proxy in step with the store until ctx is done.
func (a *App) Run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Go(func() {
		a.store.Watch(ctx, 500*time.Millisecond, func() {
			if err := a.Reload(ctx); err != nil && ctx.Err() == nil {
				a.log.Error("reload after database change", "err", err)
			}
		})
	})
	wg.Go(func() { a.publishRequestCounts(ctx) })
	wg.Go(func() { a.persistRevocations(ctx) })
	wg.Go(func() { a.runHistory(ctx) })
	wg.Go(func() { a.persistCalibration(ctx) })
	wg.Go(func() { a.updates.run(ctx) })
	wg.Wait()
}

func (a *App) persistRevocations(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case r := <-a.revocations:
			a.log.Warn("upstream refused the account's key; account disabled", "account", r.accountID, "reason", r.reason)
			if err := a.store.SetAccountEnabled(ctx, r.accountID, false, r.reason); err != nil && ctx.Err() == nil {
				a.log.Error("persist account disable", "account", r.accountID, "err", err)
			}
		}
	}
}

// publishRequestCounts tells the UI about traffic at most once a second, and
// only when there was some.
func (a *App) publishRequestCounts(ctx context.Context) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	last := a.proxy.Requests()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if n := a.proxy.Requests(); n != last {
				last = n
				a.mu.Lock()
				a.publishLocked()
				a.mu.Unlock()
			}
		}
	}
}

// ProxyStatus is what the UI shows about the proxy.
type ProxyStatus struct {
	Running  bool   `json:"running"`
	Address  string `json:"address"`
	BaseURL  string `json:"baseURL"`
	Error    string `json:"error"`
	Accounts int    `json:"accounts"`
	Requests int64  `json:"requests"`
	Version  string `json:"version"`
	DataDir  string `json:"dataDir"`
}

// Status reports the proxy's state.
func (a *App) Status() ProxyStatus {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.statusLocked()
}

func (a *App) statusLocked() ProxyStatus {
	addr := a.proxy.Addr()
	if addr == "" {
		addr = a.proxy.Config().Addr()
	}
	return ProxyStatus{
		Running:  a.proxy.Running(),
		Address:  addr,
		BaseURL:  "http://" + addr,
		Error:    a.lastErr,
		Accounts: len(a.proxy.Pool().Accounts()),
		Requests: a.proxy.Requests(),
		Version:  a.version,
		DataDir:  a.dataDir,
	}
}

func (a *App) publishLocked() {
	a.events.Publish(EventProxyStatus, a.statusLocked())
}

// stopTimeout bounds how long turning the proxy off waits for streams in flight.
const stopTimeout = 30 * time.Second

// SetProxyEnabled starts or stops the proxy (the tray and window toggle).
// Stopping lets requests in flight finish.
func (a *App) SetProxyEnabled(ctx context.Context, on bool) (ProxyStatus, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	var err error
	if on {
		err = a.proxy.Start()
	} else {
		ctx, cancel := context.WithTimeout(ctx, stopTimeout)
		defer cancel()
		err = a.proxy.Stop(ctx)
	}
	a.lastErr = ""
	if err != nil {
		a.lastErr = err.Error()
	}
	a.publishLocked()
	return a.statusLocked(), err
}

// Shutdown stops the proxy, letting requests in flight finish until ctx ends, then commits
// the history the recorder still holds (call it after Run has returned).
func (a *App) Shutdown(ctx context.Context) error {
	err := a.proxy.Stop(ctx)
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	return errors.Join(err, a.flushHistory(ctx))
}
