// Package door is the HTTP API of Longhaul's UI: the JSON routes and Server-Sent Events the
// browser UI uses when there is no window (headless mode, the browser tests), and that
// scripts may use. ("Door" because it is the UI's other way in: the window calls the app's
// bound facades directly, a browser comes through here.) Each route calls the same facade
// method the window binds, with the request's context, so both doors behave alike.
//
// The door is served in two places: on an address of its own in headless mode (Handler,
// which accepts loopback Host names only) and on the proxy's port under /longhaul/
// (ProxyHandler; the proxy has checked the caller already: a loopback Host, or the client
// key). Both refuse state-changing requests from another origin.
package door

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"

	"longhaul/app"
	"longhaul/proxy"
)

// Door serves the UI's assets and its API.
type Door struct {
	app    *app.App
	log    *slog.Logger
	routes http.Handler
}

// Options are the door's optional collaborators.
type Options struct {
	Logger *slog.Logger // nil: discard
}

// New returns the door of a, serving the UI's files from assets.
func New(a *app.App, assets fs.FS, opts Options) *Door {
	d := &Door{app: a, log: opts.Logger}
	if d.log == nil {
		d.log = slog.New(slog.DiscardHandler)
	}
	mux := http.NewServeMux()
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
	mux.Handle("GET /", http.FileServerFS(assets))
	d.routes = mux
	return d
}

// Handler is the door on an address of its own (headless mode): it refuses requests that do
// not address it by a loopback name (DNS rebinding) and cross-origin writes (CSRF).
func (d *Door) Handler() http.Handler { return guard(d.routes, true) }

// ProxyHandler is the door for the proxy's port, which has checked the caller already;
// only cross-origin writes are refused.
func (d *Door) ProxyHandler() http.Handler { return guard(d.routes, false) }

// guard is the door's one check of the caller: a loopback Host when loopbackOnly, and an
// Origin (when a browser sends one) equal to the Host for anything but GET and HEAD.
func guard(next http.Handler, loopbackOnly bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if loopbackOnly {
			host := r.Host
			if h, _, err := net.SplitHostPort(host); err == nil {
				host = h
			}
			if !proxy.IsLoopbackHost(strings.Trim(host, "[]")) {
				writeError(w, withStatus(http.StatusForbidden, errors.New("address the UI as 127.0.0.1 or localhost")))
				return
			}
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			if o := r.Header.Get("Origin"); o != "" {
				if u, err := url.Parse(o); err != nil || u.Host != r.Host {
					writeError(w, withStatus(http.StatusForbidden, errors.New("cross-origin request refused")))
					return
				}
			}
		}
		next.ServeHTTP(w, r)
	})
}

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
func (d *Door) proxyRoutes(mux *http.ServeMux) {
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
