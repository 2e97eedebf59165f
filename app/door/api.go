package door

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"longhaul/app"
)

// settingsRoutes:
//
//	GET  /longhaul/v1/settings        SettingsView
//	PUT  /longhaul/v1/settings        {"values": {"key": JSON value, …}} → SettingsView
//	POST /longhaul/v1/settings/reset  {"keys": ["key", …]} → SettingsView
//
// Invalid values answer 400 with "fields", one per wrong key.
func (d *Door) settingsRoutes(mux *patternMux) {
	mux.Handle("GET /longhaul/v1/settings", handle(func(r *http.Request) (any, error) {
		return d.facades(r).Settings.Get()
	}))
	mux.Handle("PUT /longhaul/v1/settings", handle(func(r *http.Request) (any, error) {
		var req struct {
			Values map[string]any `json:"values"`
		}
		if err := decodeBody(r, &req); err != nil {
			return nil, err
		}
		return d.facades(r).Settings.Set(req.Values)
	}))
	mux.Handle("POST /longhaul/v1/settings/reset", handle(func(r *http.Request) (any, error) {
		var req struct {
			Keys []string `json:"keys"`
		}
		if err := decodeBody(r, &req); err != nil {
			return nil, err
		}
		return d.facades(r).Settings.Reset(req.Keys)
	}))
}

// accountRoutes:
//
//	GET    /longhaul/v1/accounts               [AccountView] (secrets masked, live state)
//	POST   /longhaul/v1/accounts               AccountInput → AccountView
//	PUT    /longhaul/v1/accounts/{id}          AccountInput (empty key keeps it) → AccountView
//	POST   /longhaul/v1/accounts/{id}/enabled  {"enabled": bool} → AccountView
//	DELETE /longhaul/v1/accounts/{id}          {}
//	POST   /longhaul/v1/accounts/{id}/test     KeyTest (a real max_tokens 1 request)
//	POST   /longhaul/v1/accounts/test          {"id": N?, …AccountInput} → KeyTest
func (d *Door) accountRoutes(mux *patternMux) {
	mux.Handle("GET /longhaul/v1/accounts", handle(func(r *http.Request) (any, error) {
		return d.facades(r).Accounts.List()
	}))
	mux.Handle("POST /longhaul/v1/accounts", handle(func(r *http.Request) (any, error) {
		var in app.AccountInput
		if err := decodeBody(r, &in); err != nil {
			return nil, err
		}
		return d.facades(r).Accounts.Add(in)
	}))
	mux.Handle("POST /longhaul/v1/accounts/test", handle(func(r *http.Request) (any, error) {
		var in struct {
			ID int64 `json:"id"`
			app.AccountInput
		}
		if err := decodeBody(r, &in); err != nil {
			return nil, err
		}
		return d.facades(r).Accounts.TestKey(in.ID, in.AccountInput)
	}))
	mux.Handle("PUT /longhaul/v1/accounts/{id}", withAccount(func(r *http.Request, id int64) (any, error) {
		var in app.AccountInput
		if err := decodeBody(r, &in); err != nil {
			return nil, err
		}
		return d.facades(r).Accounts.Update(id, in)
	}))
	mux.Handle("POST /longhaul/v1/accounts/{id}/enabled", withAccount(func(r *http.Request, id int64) (any, error) {
		var req struct {
			Enabled *bool `json:"enabled"`
		}
		if err := decodeBody(r, &req); err != nil {
			return nil, err
		}
		if req.Enabled == nil {
			return nil, withStatus(http.StatusBadRequest, errors.New(`body must be {"enabled": true|false}`))
		}
		return d.facades(r).Accounts.SetEnabled(id, *req.Enabled)
	}))
	mux.Handle("DELETE /longhaul/v1/accounts/{id}", withAccount(func(r *http.Request, id int64) (any, error) {
		return struct{}{}, d.facades(r).Accounts.Delete(id)
	}))
	mux.Handle("POST /longhaul/v1/accounts/{id}/test", withAccount(func(r *http.Request, id int64) (any, error) {
		return d.facades(r).Accounts.Test(id)
	}))
}

// withAccount is handle for routes under /accounts/{id}.
func withAccount(op func(r *http.Request, id int64) (any, error)) http.Handler {
	return handle(func(r *http.Request) (any, error) {
		id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
		if err != nil || id <= 0 {
			// Ids are positive numbers: anything else names no account.
			return nil, withStatus(http.StatusNotFound, fmt.Errorf("no account %q: account ids are positive numbers", r.PathValue("id")))
		}
		return op(r, id)
	})
}

// clientRoutes:
//
//	GET  /longhaul/v1/clients/claude-code       ClaudeCodeConfig
//	POST /longhaul/v1/clients/claude-code       configure → ClaudeCodeConfig
//	POST /longhaul/v1/clients/claude-code/undo  restore the newest backup → ClaudeCodeConfig
func (d *Door) clientRoutes(mux *patternMux) {
	mux.Handle("GET /longhaul/v1/clients/claude-code", handle(func(r *http.Request) (any, error) {
		return d.facades(r).Clients.ClaudeCodeStatus()
	}))
	mux.Handle("POST /longhaul/v1/clients/claude-code", handle(func(r *http.Request) (any, error) {
		return d.facades(r).Clients.ConfigureClaudeCode()
	}))
	mux.Handle("POST /longhaul/v1/clients/claude-code/undo", handle(func(r *http.Request) (any, error) {
		return d.facades(r).Clients.UndoClaudeCode()
	}))
}

// updateRoutes (restart needs the window, so it has no route):
//
//	GET  /longhaul/v1/update        UpdateStatus
//	POST /longhaul/v1/update/check  UpdateStatus after the check (409 when updates are off,
//	                                502 when the release source failed)
func (d *Door) updateRoutes(mux *patternMux) {
	mux.Handle("GET /longhaul/v1/update", handle(func(r *http.Request) (any, error) {
		return d.facades(r).Updates.Status()
	}))
	mux.Handle("POST /longhaul/v1/update/check", handle(func(r *http.Request) (any, error) {
		// The check goes on if the browser leaves; its states arrive as events.
		ctx := context.WithoutCancel(r.Context())
		st, err := d.app.Facades(func() context.Context { return ctx }).Updates.Check()
		if err != nil && statusOf(err) == http.StatusInternalServerError {
			err = withStatus(http.StatusBadGateway, err) // the release source failed
		}
		return st, err
	}))
}
