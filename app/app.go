// Package app connects the store and the proxy: it pushes settings and accounts into the
// proxy (at start, and whenever the database changes), persists what the proxy learns
// (revoked keys, the estimator's calibration), and offers the per-domain facades the window
// binds and the HTTP door (app/door) serves. Only main uses it.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"longhaul/app/autostart"
	"longhaul/app/pricing"
	"longhaul/app/recorder"
	"longhaul/app/update"
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
	now       func() time.Time
	events    *recorder.Feed                // the one live feed: status events and history batches
	recorder  *recorder.Recorder            // history; nil: none
	revoked   *Revocations                  // 401/403s to persist, off the request path (revocation.go)
	prices    atomic.Pointer[pricing.Table] // pricing.table, for the history's cost estimates (cost.go)

	mu      sync.Mutex // serialises reloads, toggles and revocations
	lastErr string     // why the proxy is not running, if it should be

	autostart *autostart.Entry // the login entry, following app.autostart (shell.go)
	updates   *update.Updater  // self-update, following app.check_updates
}

// Deps are App's collaborators.
type Deps struct {
	Store     *store.Store
	Proxy     *proxy.Server
	Logger    *slog.Logger // nil: discard
	Version   string
	DataDir   string
	Overrides Overrides
	// Recorder is the proxy's Observer, built before the proxy; its feed carries the app's
	// events too. Nil: no history, and the app makes a feed of its own.
	Recorder *recorder.Recorder
	// Revocations is the proxy's OnAccountRevoked sink, built before the proxy. Nil: the app
	// makes one nobody feeds.
	Revocations *Revocations
	// Now is the clock of the history views (which session is bound). Nil: time.Now.
	Now func() time.Time

	// Update is the release source built into the binary; zero: updates off.
	Update update.Config
}

// New returns an App; call Reload before serving, so the proxy has its settings and accounts.
func New(d Deps) *App {
	log := d.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	a := &App{
		store: d.Store, proxy: d.Proxy, log: log, version: d.Version, dataDir: d.DataDir,
		overrides: d.Overrides, now: d.Now, recorder: d.Recorder, revoked: d.Revocations,
	}
	if a.now == nil {
		a.now = time.Now
	}
	a.events = recorder.NewFeed()
	if a.recorder != nil {
		a.events = a.recorder.Feed()
	}
	if a.revoked == nil {
		a.revoked = NewRevocations()
	}
	a.autostart = autostart.New(d.DataDir)
	a.updates = update.New(d.Update, d.Version, update.Options{Logger: log, OnChange: func(st update.Status) { a.events.Publish(EventUpdateStatus, st) }})
	return a
}

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
	if err := a.loadAccountsLocked(ctx); err != nil {
		return err
	}
	a.applyAppSettings(settings.App)
	a.prices.Store(priceTable(settings.Pricing))
	if a.recorder != nil {
		a.recorder.Configure(settings.History) // the proxy gets its capture settings through proxyConfig
		a.recorder.SetPricer(a.pricer())
	}
	if err := a.proxy.Reconfigure(proxyConfig(settings, a.overrides)); err != nil {
		a.lastErr = err.Error()
		a.log.Error("settings not applied", "err", err)
	} else if a.proxy.Running() {
		a.lastErr = ""
	}
	a.publishLocked()
	return nil
}

// loadAccountsLocked pushes the stored accounts into the proxy: the store owns whether an
// account is enabled, the proxy's pool follows.
func (a *App) loadAccountsLocked(ctx context.Context) error {
	accounts, err := a.store.Accounts(ctx)
	if err != nil {
		return fmt.Errorf("load accounts: %w", err)
	}
	a.proxy.SetAccounts(proxyAccounts(accounts))
	return nil
}

// Run keeps the proxy in step with the store, records history, persists
// revocations and calibration, and checks for updates, until ctx is done.
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
	if a.recorder != nil {
		wg.Go(func() { a.recorder.Run(ctx) })
	}
	wg.Go(func() { a.persistCalibration(ctx) })
	wg.Go(func() { a.updates.Run(ctx) })
	wg.Wait()
}

// publishRequestCounts tells the UI about traffic at most once a second, and only when there
// was some. Without traffic it sleeps until the next request (proxy.Server.NextRequest)
// rather than looking every second: an idle app wakes for nothing.
func (a *App) publishRequestCounts(ctx context.Context) {
	timer := time.NewTimer(time.Second)
	defer timer.Stop()
	last := a.proxy.Requests()
	for {
		next := a.proxy.NextRequest()
		if a.proxy.Requests() == last {
			select {
			case <-ctx.Done():
				return
			case <-next:
			}
		}
		timer.Reset(time.Second)
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		if n := a.proxy.Requests(); n != last {
			last = n
			a.mu.Lock()
			a.publishLocked()
			a.mu.Unlock()
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
	if a.recorder != nil {
		err = errors.Join(err, a.recorder.Flush(context.WithoutCancel(ctx)))
	}
	return err
}
