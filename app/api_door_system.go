package app

import (
	"bytes"
	"context"
	"net/url"
	"time"

	"longhaul/store"
)

// The window's twins of the door's history routes (history_door.go): the same filters, given
// as the door's query parameters, so src/api/ builds one query for both doors.

func historyQuery(q map[string]string) url.Values {
	v := url.Values{}
	for k, s := range q {
		if s != "" {
			v.Set(k, s)
		}
	}
	return v
}

// History lists recorded exchanges, newest first (filters: since, until, status, model,
// account, session, route, compacted, q, before, limit — as the door's query parameters).
func (s *System) History(q map[string]string) (store.HistoryPage, error) {
	f, err := historyFilter(historyQuery(q))
	if err != nil {
		return store.HistoryPage{}, err
	}
	return s.app.History(s.ctx(), f)
}

// HistoryDetail returns one exchange with attempts, compaction steps and bodies.
func (s *System) HistoryDetail(id string) (store.Exchange, error) {
	return s.app.HistoryDetail(s.ctx(), id)
}

// ExportHistory returns the filtered exchanges as JSON Lines.
func (s *System) ExportHistory(q map[string]string) (string, error) {
	f, err := historyFilter(historyQuery(q))
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	if _, err := s.app.ExportHistory(s.ctx(), f, &buf); err != nil {
		return "", err
	}
	return buf.String(), nil
}

// HistorySessions lists sessions (q: since, limit).
func (s *System) HistorySessions(q map[string]string) ([]store.Session, error) {
	v := historyQuery(q)
	since, err := timeParam(v, "since")
	if err != nil {
		return nil, err
	}
	limit, err := intParam(v, "limit")
	if err != nil {
		return nil, err
	}
	return s.app.HistorySessions(s.ctx(), since, limit)
}

// SessionPressure reports a session's context pressure ("latest": the latest session).
func (s *System) SessionPressure(id string) (Pressure, error) {
	return s.app.SessionPressure(s.ctx(), id)
}

// HistoryStats aggregates traffic (q: since, until, bucket hour|day).
func (s *System) HistoryStats(q map[string]string) (store.Stats, error) {
	v := historyQuery(q)
	since, err := timeParam(v, "since")
	if err != nil {
		return store.Stats{}, err
	}
	until, err := timeParam(v, "until")
	if err != nil {
		return store.Stats{}, err
	}
	if since.IsZero() {
		since = time.Now().AddDate(0, 0, -1)
	}
	return s.app.HistoryStats(s.ctx(), since, until, v.Get("bucket"))
}

// HistoryStatsSeries is traffic per account or model per hour or day, for one chart line each.
func (a *App) HistoryStatsSeries(ctx context.Context, since, until time.Time, bucket, by string) (store.StatsSeries, error) {
	return a.store.HistoryStatsSeries(ctx, since, until, bucket, by)
}

// statsSeriesQuery reads since, until, bucket and by; since defaults to a day ago.
func (a *App) statsSeriesQuery(ctx context.Context, v url.Values) (store.StatsSeries, error) {
	since, err := timeParam(v, "since")
	if err != nil {
		return store.StatsSeries{}, err
	}
	until, err := timeParam(v, "until")
	if err != nil {
		return store.StatsSeries{}, err
	}
	if since.IsZero() {
		since = time.Now().AddDate(0, 0, -1)
	}
	return a.HistoryStatsSeries(ctx, since, until, v.Get("bucket"), v.Get("by"))
}

// HistoryStatsSeries is traffic per account or model over time (q: since, until, bucket
// hour|day, by account|model).
func (s *System) HistoryStatsSeries(q map[string]string) (store.StatsSeries, error) {
	return s.app.statsSeriesQuery(s.ctx(), historyQuery(q))
}
