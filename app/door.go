package app

import (
	"encoding/json"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Door serves the UI and its JSON + Server-Sent Events API to a browser, for
// machines without a display (headless mode) and for browser tests. It is the
// HTTP twin of the Wails bindings: same methods, same events.
func (a *App) Door(assets fs.FS) http.Handler {
	return loopbackOnly(sameOrigin(a.doorMux(assets)))
}

// ProxyDoor is the Door for mounting on the proxy's port, which has already
// checked the caller (a loopback Host, or the client key when the proxy
// listens beyond loopback); only the cross-origin check is added.
func (a *App) ProxyDoor(assets fs.FS) http.Handler {
	return sameOrigin(a.doorMux(assets))
}

func (a *App) doorMux(assets fs.FS) *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /longhaul/v1/status", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, a.Status())
	})
	mux.HandleFunc("POST /longhaul/v1/proxy", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Enabled *bool `json:"enabled"`
		}
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<16)).Decode(&req); err != nil || req.Enabled == nil {
			writeDoorError(w, http.StatusBadRequest, `body must be {"enabled": true|false}`)
			return
		}
		st, err := a.SetProxyEnabled(r.Context(), *req.Enabled)
		if err != nil {
			writeDoorError(w, http.StatusConflict, err.Error())
			return
		}
		writeJSON(w, http.StatusOK, st)
	})
	mux.HandleFunc("GET /longhaul/v1/accounts", func(w http.ResponseWriter, r *http.Request) {
		accounts, err := a.Accounts(r.Context())
		if err != nil {
			writeDoorError(w, http.StatusInternalServerError, err.Error())
			return
		}
		writeJSON(w, http.StatusOK, accounts)
	})
	mux.HandleFunc("GET /longhaul/v1/events", a.serveEvents)
	a.apiRoutes(mux)     // settings, account editing, client setup (api_door.go)
	a.historyRoutes(mux) // history, live monitor, sessions, pressure, stats (history_door.go)
	a.updateRoutes(mux)  // self-update status and "check now" (update_door.go)
	mux.Handle("GET /", http.FileServerFS(assets))
	return mux
}

// serveEvents streams hub events as SSE until the client leaves or falls behind
// (EventSource then reconnects and gets the latest state again).
func (a *App) serveEvents(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	if err := rc.Flush(); err != nil {
		return
	}
	events, unsubscribe := a.events.Subscribe()
	defer unsubscribe()
	keepAlive := time.NewTicker(15 * time.Second)
	defer keepAlive.Stop()
	for {
		var chunk string
		select {
		case <-r.Context().Done():
			return
		case <-keepAlive.C:
			chunk = ": keep-alive\n\n"
		case m, ok := <-events:
			if !ok {
				return
			}
			chunk = "event: " + m.Name + "\ndata: " + string(m.Data) + "\n\n"
		}
		if _, err := io.WriteString(w, chunk); err != nil {
			return
		}
		if err := rc.Flush(); err != nil {
			return
		}
	}
}

// loopbackOnly refuses requests that do not address the door by a loopback
// name (DNS rebinding).
func loopbackOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !isLoopbackName(r.Host) {
			writeDoorError(w, http.StatusForbidden, "address the UI as 127.0.0.1 or localhost")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// sameOrigin refuses state-changing requests from another origin (CSRF).
func sameOrigin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			if o := r.Header.Get("Origin"); o != "" {
				if u, err := url.Parse(o); err != nil || u.Host != r.Host {
					writeDoorError(w, http.StatusForbidden, "cross-origin request refused")
					return
				}
			}
		}
		next.ServeHTTP(w, r)
	})
}

func isLoopbackName(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v) //nolint:errcheck // client gone
}

func writeDoorError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]any{"error": map[string]string{"message": msg}})
}
