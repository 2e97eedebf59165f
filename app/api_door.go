package app

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"

	"longhaul/store"
)

// apiRoutes adds the settings, accounts and client-setup API to the door (the HTTP twins of
// the System methods in settings_api.go, accounts_api.go and clients_api.go):
//
//	GET    /longhaul/v1/settings                    SettingsView
//	PUT    /longhaul/v1/settings                    {"values": {"key": JSON value, …}} → SettingsView
//	POST   /longhaul/v1/settings/reset              {"keys": ["key", …]} → SettingsView
//	POST   /longhaul/v1/accounts                    AccountInput → AccountView
//	PUT    /longhaul/v1/accounts/{id}               AccountInput (empty key keeps it) → AccountView
//	POST   /longhaul/v1/accounts/{id}/enabled       {"enabled": bool} → AccountView
//	DELETE /longhaul/v1/accounts/{id}               {}
//	POST   /longhaul/v1/accounts/{id}/test          KeyTest (a real max_tokens 1 request)
//	POST   /longhaul/v1/accounts/test               {"id": N?, …AccountInput} → KeyTest
//	GET    /longhaul/v1/clients/claude-code         ClaudeCodeConfig
//	POST   /longhaul/v1/clients/claude-code         configure → ClaudeCodeConfig
//	POST   /longhaul/v1/clients/claude-code/undo    restore the newest backup → ClaudeCodeConfig
//	GET    /longhaul/v1/stats/series                ?since=&until=&bucket=hour|day&by=account|model
//	GET    /longhaul/v1/update                      UpdateStatus (self-update) (update_door.go)
//	POST   /longhaul/v1/update/check                check now (and install) → UpdateStatus (update_door.go)
//
// Errors are {"error": {"message": "…", "fields": [{"field": "…", "message": "…"}]}}, fields
// present for validation errors (400), so the UI shows each message on its field.
func (a *App) apiRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /longhaul/v1/settings", func(w http.ResponseWriter, r *http.Request) {
		v, err := a.SettingsView(r.Context())
		reply(w, v, err)
	})
	mux.HandleFunc("PUT /longhaul/v1/settings", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Values map[string]any `json:"values"`
		}
		if !decodeBody(w, r, &req) {
			return
		}
		v, err := a.SetSettings(r.Context(), req.Values)
		reply(w, v, err)
	})
	mux.HandleFunc("POST /longhaul/v1/settings/reset", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Keys []string `json:"keys"`
		}
		if !decodeBody(w, r, &req) {
			return
		}
		v, err := a.ResetSettings(r.Context(), req.Keys)
		reply(w, v, err)
	})

	mux.HandleFunc("POST /longhaul/v1/accounts", func(w http.ResponseWriter, r *http.Request) {
		var in AccountInput
		if !decodeBody(w, r, &in) {
			return
		}
		v, err := a.AddAccount(r.Context(), in)
		reply(w, v, err)
	})
	mux.HandleFunc("POST /longhaul/v1/accounts/test", func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			ID int64 `json:"id"`
			AccountInput
		}
		if !decodeBody(w, r, &in) {
			return
		}
		v, err := a.TestKey(r.Context(), in.ID, in.AccountInput)
		reply(w, v, err)
	})
	withID := func(h func(w http.ResponseWriter, r *http.Request, id int64)) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
			if err != nil || id <= 0 {
				writeDoorError(w, http.StatusBadRequest, "account id must be a positive number")
				return
			}
			h(w, r, id)
		}
	}
	mux.HandleFunc("PUT /longhaul/v1/accounts/{id}", withID(func(w http.ResponseWriter, r *http.Request, id int64) {
		var in AccountInput
		if !decodeBody(w, r, &in) {
			return
		}
		v, err := a.UpdateAccount(r.Context(), id, in)
		reply(w, v, err)
	}))
	mux.HandleFunc("POST /longhaul/v1/accounts/{id}/enabled", withID(func(w http.ResponseWriter, r *http.Request, id int64) {
		var req struct {
			Enabled *bool `json:"enabled"`
		}
		if !decodeBody(w, r, &req) {
			return
		}
		if req.Enabled == nil {
			writeDoorError(w, http.StatusBadRequest, `body must be {"enabled": true|false}`)
			return
		}
		v, err := a.SetAccountEnabled(r.Context(), id, *req.Enabled)
		reply(w, v, err)
	}))
	mux.HandleFunc("DELETE /longhaul/v1/accounts/{id}", withID(func(w http.ResponseWriter, r *http.Request, id int64) {
		reply(w, struct{}{}, a.DeleteAccount(r.Context(), id))
	}))
	mux.HandleFunc("POST /longhaul/v1/accounts/{id}/test", withID(func(w http.ResponseWriter, r *http.Request, id int64) {
		v, err := a.TestAccount(r.Context(), id)
		reply(w, v, err)
	}))

	mux.HandleFunc("GET /longhaul/v1/clients/claude-code", func(w http.ResponseWriter, r *http.Request) {
		v, err := a.ClaudeCodeStatus(r.Context())
		reply(w, v, err)
	})
	mux.HandleFunc("POST /longhaul/v1/clients/claude-code", func(w http.ResponseWriter, r *http.Request) {
		v, err := a.ConfigureClaudeCode(r.Context())
		reply(w, v, err)
	})
	mux.HandleFunc("POST /longhaul/v1/clients/claude-code/undo", func(w http.ResponseWriter, r *http.Request) {
		v, err := a.UndoClaudeCode(r.Context())
		reply(w, v, err)
	})

	mux.HandleFunc("GET /longhaul/v1/stats/series", func(w http.ResponseWriter, r *http.Request) {
		v, err := a.statsSeriesQuery(r.Context(), r.URL.Query())
		if err != nil { // a bad parameter; the store's own failures say so in the message
			writeDoorError(w, http.StatusBadRequest, err.Error())
			return
		}
		writeJSON(w, http.StatusOK, v)
	})
	// Self-update's routes are in update_door.go.
}

// decodeBody reads a JSON body into v (numbers kept exact); on failure it answers 400 and
// returns false. State-changing requests must be JSON, which plain HTML forms cannot send.
func decodeBody(w http.ResponseWriter, r *http.Request, v any) bool {
	if ct := r.Header.Get("Content-Type"); ct != "" && ct != "application/json" && !startsWith(ct, "application/json;") {
		writeDoorError(w, http.StatusUnsupportedMediaType, "send JSON (Content-Type: application/json)")
		return false
	}
	dec := json.NewDecoder(io.LimitReader(r.Body, 1<<20))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil && !errors.Is(err, io.EOF) {
		writeDoorError(w, http.StatusBadRequest, "malformed JSON body: "+err.Error())
		return false
	}
	return true
}

func startsWith(s, prefix string) bool { return len(s) >= len(prefix) && s[:len(prefix)] == prefix }

// reply writes v, or err in the door's error shape: validation errors as 400 with their
// fields, a missing record as 404, the rest as answer() maps them.
func reply(w http.ResponseWriter, v any, err error) {
	var fe FieldErrors
	switch {
	case err == nil:
		writeJSON(w, http.StatusOK, v)
	case errors.As(err, &fe):
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{"message": fe.Error(), "fields": fe}})
	case errors.Is(err, store.ErrNotFound):
		writeDoorError(w, http.StatusNotFound, err.Error())
	default:
		answer(w, v, err)
	}
}

// BoundError formats an error of a bound method for the window (Wails' ErrorFormatter): the
// same {"message", "fields"} the HTTP door sends for validation errors, the text otherwise.
func BoundError(err error) any {
	var fe FieldErrors
	if errors.As(err, &fe) {
		return map[string]any{"message": fe.Error(), "fields": fe}
	}
	return err.Error()
}
