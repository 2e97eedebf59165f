package app

import (
	"context"
	"fmt"
	"time"

	"longhaul/store"
)

// HistoryView is the history facade the window binds (the Wails twin of the door's history
// routes): every exported method is callable from the UI. Live updates reach the window as
// EventHistoryExchanges events.
type HistoryView struct {
	app *App
	ctx func() context.Context
}

// NewHistoryView binds the app; ctx supplies the window's context once it exists.
func NewHistoryView(a *App, ctx func() context.Context) *HistoryView {
	return &HistoryView{app: a, ctx: ctx}
}

// List returns a page of exchanges, newest first (Before: the previous page's Next).
func (h *HistoryView) List(f store.HistoryFilter) (store.HistoryPage, error) {
	return h.app.History(h.ctx(), f)
}

// Detail returns one exchange with attempts, compaction steps and bodies.
func (h *HistoryView) Detail(id string) (store.Exchange, error) {
	return h.app.HistoryDetail(h.ctx(), id)
}

// Sessions lists sessions active since an RFC 3339 time ("" for all), most recent first.
func (h *HistoryView) Sessions(since string, limit int) ([]store.Session, error) {
	t, err := parseOptionalTime("since", since)
	if err != nil {
		return nil, err
	}
	return h.app.HistorySessions(h.ctx(), t, limit)
}

// Stats aggregates traffic between two RFC 3339 times ("" since: the last 24 hours; ""
// until: now) per account, model and "hour" or "day".
func (h *HistoryView) Stats(since, until, bucket string) (store.Stats, error) {
	s, err := parseOptionalTime("since", since)
	if err != nil {
		return store.Stats{}, err
	}
	u, err := parseOptionalTime("until", until)
	if err != nil {
		return store.Stats{}, err
	}
	if s.IsZero() {
		s = h.app.clock().Add(-24 * time.Hour)
	}
	return h.app.HistoryStats(h.ctx(), s, u, bucket)
}

// Pressure is a session's context pressure ("" or "latest": the latest session).
func (h *HistoryView) Pressure(sessionID string) (Pressure, error) {
	return h.app.SessionPressure(h.ctx(), sessionID)
}

// Status reports the recorder's counters (drops) and the database size.
func (h *HistoryView) Status() (HistoryStatus, error) { return h.app.HistoryStatus(h.ctx()) }

func parseOptionalTime(name, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, fmt.Errorf("%s: %q is not an RFC 3339 time", name, v)
	}
	return t, nil
}
