package app

import (
	"context"
	"errors"
	"net/http"
)

// updateRoutes are self-update's door routes, the HTTP twins of
// System.UpdateStatus and System.CheckForUpdates (restart needs the window):
//
//	GET  /longhaul/v1/update        UpdateStatus
//	POST /longhaul/v1/update/check  UpdateStatus after the check (409 when updates are off)
func (a *App) updateRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /longhaul/v1/update", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, a.UpdateStatus())
	})
	mux.HandleFunc("POST /longhaul/v1/update/check", func(w http.ResponseWriter, r *http.Request) {
		// The check goes on if the browser leaves; its states arrive as events.
		st, err := a.CheckForUpdates(context.WithoutCancel(r.Context()))
		switch {
		case errors.Is(err, ErrUpdatesOff):
			writeDoorError(w, http.StatusConflict, st.Message)
		case err != nil:
			writeDoorError(w, http.StatusBadGateway, err.Error())
		default:
			writeJSON(w, http.StatusOK, st)
		}
	})
}
