// Package door is the HTTP API of Longhaul's UI: the JSON routes and Server-Sent Events the
// browser UI uses when there is no window (headless mode, the browser tests), and that
// scripts may use. ("Door" because it is the UI's other way in: the window calls the app's
// bound facades directly, a browser comes through here.) Each route calls the same facade
// method the window binds, with the request's context, so both doors behave alike.
//
// The door is served in two places: on an address of its own in headless mode (Handler) and
// on the proxy's port under /longhaul/ (ProxyHandler). Both sit behind the proxy's one guard
// (proxy.Guard.UI): loopback Host names, the client key or a browser session once a key is
// set, same-origin writes only, and the login and logout routes.
package door

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"net/http"

	"longhaul/app"
	"longhaul/proxy"
)

// Door serves the UI's assets and its API.
type Door struct {
	app    *app.App
	log    *slog.Logger
	guard  *proxy.Guard
	routes http.Handler
	// patterns are the API's routes as registered ("GET /longhaul/v1/settings"), so that tests
	// can try every one of them.
	patterns []string
}

// patternMux is a ServeMux that remembers the patterns it was given.
type patternMux struct {
	*http.ServeMux
	patterns []string
}

func (m *patternMux) Handle(pattern string, h http.Handler) {
	m.patterns = append(m.patterns, pattern)
	m.ServeMux.Handle(pattern, h)
}

func (m *patternMux) HandleFunc(pattern string, h func(http.ResponseWriter, *http.Request)) {
	m.Handle(pattern, http.HandlerFunc(h))
}

// Options are the door's optional collaborators.
type Options struct {
	Logger *slog.Logger // nil: discard
	// Guard checks every caller on the door's own port; main passes the proxy's
	// (proxy.Server.Guard), so the client key and a browser login hold on both ports.
	// nil: a guard with no key (loopback Host names only).
	Guard *proxy.Guard
}

// New returns the door of a, serving the UI's files from assets.
func New(a *app.App, assets fs.FS, opts Options) *Door {
	d := &Door{app: a, log: opts.Logger, guard: opts.Guard}
	if d.log == nil {
		d.log = slog.New(slog.DiscardHandler)
	}
	if d.guard == nil {
		d.guard = proxy.NewGuard(nil, proxy.Timeouts{})
	}
	mux := &patternMux{ServeMux: http.NewServeMux()}
	d.proxyRoutes(mux)
	d.settingsRoutes(mux)
	d.accountRoutes(mux)
	d.clientRoutes(mux)
	d.historyRoutes(mux)
	d.statsRoutes(mux)
	d.updateRoutes(mux)
	mux.HandleFunc("GET /longhaul/v1/events", func(w http.ResponseWriter, r *http.Request) {
		stream(w, r, d.app.Events(), func(name string) (string, bool) { return name, true })
	})
	// Anything else answers in the door's shape (the mux's own 405 is plain text, which the UI
	// cannot show): under the API, and any write to the UI's files. A method the API never
	// takes is 405; any other miss is 404, whatever the spelling of the path.
	notRoute := handle(func(r *http.Request) (any, error) {
		status := http.StatusNotFound
		switch r.Method {
		case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodDelete:
		default:
			status = http.StatusMethodNotAllowed
		}
		return nil, withStatus(status, errors.New(r.Method+" "+r.URL.Path+" is not a route of the UI's API"))
	})
	mux.Handle("/longhaul/v1/", notRoute)
	files := http.FileServerFS(assets)
	mux.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			notRoute.ServeHTTP(w, r)
			return
		}
		files.ServeHTTP(w, r)
	}))
	d.routes, d.patterns = mux, mux.patterns
	return d
}

// Handler is the door on an address of its own (headless mode), behind the guard; loopback
// says whether that address only accepts local connections (proxy.LoopbackAddr).
func (d *Door) Handler(loopback bool) http.Handler {
	return d.guard.UI(d.routes, func() bool { return loopback })
}

// ProxyHandler is the door for the proxy's port (proxy.Server.SetUI), which runs the same
// guard in front of it.
func (d *Door) ProxyHandler() http.Handler { return d.routes }

// facades are the app's facades working in the request's context: a client that leaves
// cancels what it asked for.
func (d *Door) facades(r *http.Request) app.Facades {
	ctx := r.Context()
	return d.app.Facades(func() context.Context { return ctx })
}

// proxyRoutes:
//
//	GET  /longhaul/v1/status   ProxyStatus
//	POST /longhaul/v1/proxy    {"enabled": bool} → ProxyStatus (409 when it cannot start)
//	GET  /longhaul/v1/events   Server-Sent Events: every event of the feed (app/events.go)
func (d *Door) proxyRoutes(mux *patternMux) {
	mux.Handle("GET /longhaul/v1/status", handle(func(r *http.Request) (any, error) {
		return d.facades(r).Proxy.Status()
	}))
	mux.Handle("POST /longhaul/v1/proxy", handle(func(r *http.Request) (any, error) {
		var req struct {
			Enabled *bool `json:"enabled"`
		}
		if err := decodeBody(r, &req); err != nil || req.Enabled == nil {
			return nil, withStatus(http.StatusBadRequest, errors.New(`body must be {"enabled": true|false}`))
		}
		st, err := d.facades(r).Proxy.SetEnabled(*req.Enabled)
		return st, withStatus(http.StatusConflict, err)
	}))
}
