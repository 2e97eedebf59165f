package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"longhaul/store"
)

// historyRoutes adds the history, live monitor and pressure API to the door:
//
//	GET /longhaul/v1/history                 list (filters and cursor in the query, see historyFilter)
//	GET /longhaul/v1/history/{id}            detail with attempts, compaction steps, bodies
//	GET /longhaul/v1/history/export          JSON Lines of the filtered range
//	GET /longhaul/v1/history/live            Server-Sent Events: batches of new and updated exchanges
//	GET /longhaul/v1/history/status          recorder counters (drops) and database size
//	GET /longhaul/v1/sessions                sessions view (?since=RFC3339&limit=N)
//	GET /longhaul/v1/sessions/{id}/pressure  context pressure of a session ("latest": the latest)
//	GET /longhaul/v1/pressure                the latest session's pressure
//	GET /longhaul/v1/stats                   ?since=&until=&bucket=hour|day
func (a *App) historyRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /longhaul/v1/history", func(w http.ResponseWriter, r *http.Request) {
		f, err := historyFilter(r.URL.Query())
		if err != nil {
			writeDoorError(w, http.StatusBadRequest, err.Error())
			return
		}
		page, err := a.History(r.Context(), f)
		answer(w, page, err)
	})
	mux.HandleFunc("GET /longhaul/v1/history/{id}", func(w http.ResponseWriter, r *http.Request) {
		e, err := a.HistoryDetail(r.Context(), r.PathValue("id"))
		answer(w, e, err)
	})
	mux.HandleFunc("GET /longhaul/v1/history/export", func(w http.ResponseWriter, r *http.Request) {
		f, err := historyFilter(r.URL.Query())
		if err != nil {
			writeDoorError(w, http.StatusBadRequest, err.Error())
			return
		}
		w.Header().Set("Content-Type", "application/jsonl")
		w.Header().Set("Content-Disposition", `attachment; filename="longhaul-history.jsonl"`)
		if _, err := a.ExportHistory(r.Context(), f, w); err != nil {
			// Headers are gone; the truncated file and the log say it.
			a.log.Warn("history export", "err", err)
		}
	})
	mux.HandleFunc("GET /longhaul/v1/history/live", a.serveLive)
	mux.HandleFunc("GET /longhaul/v1/history/status", func(w http.ResponseWriter, r *http.Request) {
		st, err := a.HistoryStatus(r.Context())
		answer(w, st, err)
	})
	mux.HandleFunc("GET /longhaul/v1/sessions", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		since, err := timeParam(q, "since")
		limit, lerr := intParam(q, "limit")
		if err = errors.Join(err, lerr); err != nil {
			writeDoorError(w, http.StatusBadRequest, err.Error())
			return
		}
		sessions, err := a.HistorySessions(r.Context(), since, limit)
		answer(w, sessions, err)
	})
	pressure := func(w http.ResponseWriter, r *http.Request) {
		p, err := a.SessionPressure(r.Context(), r.PathValue("id"))
		answer(w, p, err)
	}
	mux.HandleFunc("GET /longhaul/v1/sessions/{id}/pressure", pressure)
	mux.HandleFunc("GET /longhaul/v1/pressure", pressure)
	mux.HandleFunc("GET /longhaul/v1/stats", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		since, err := timeParam(q, "since")
		until, uerr := timeParam(q, "until")
		if err = errors.Join(err, uerr); err != nil {
			writeDoorError(w, http.StatusBadRequest, err.Error())
			return
		}
		if since.IsZero() {
			since = time.Now().Add(-24 * time.Hour)
		}
		stats, err := a.HistoryStats(r.Context(), since, until, q.Get("bucket"))
		answer(w, stats, err)
	})
}

// answer writes v, or the error with a status that fits it.
func answer(w http.ResponseWriter, v any, err error) {
	switch {
	case err == nil:
		writeJSON(w, http.StatusOK, v)
	case errors.Is(err, store.ErrNotFound):
		writeDoorError(w, http.StatusNotFound, err.Error())
	case errors.Is(err, ErrNoHistory):
		writeDoorError(w, http.StatusServiceUnavailable, err.Error())
	default:
		writeDoorError(w, http.StatusInternalServerError, err.Error())
	}
}

// historyFilter reads a list filter from query parameters: since, until (RFC 3339), status
// (2xx|3xx|4xx|5xx|error|ok), model, account, session, route, compacted (true), q (text),
// before (cursor), limit.
func historyFilter(q url.Values) (store.HistoryFilter, error) {
	f := store.HistoryFilter{
		StatusClass: q.Get("status"), Model: q.Get("model"), Account: q.Get("account"),
		Session: q.Get("session"), Route: q.Get("route"), Text: q.Get("q"),
	}
	var errs []error
	var err error
	f.Since, err = timeParam(q, "since")
	errs = append(errs, err)
	f.Until, err = timeParam(q, "until")
	errs = append(errs, err)
	f.Limit, err = intParam(q, "limit")
	errs = append(errs, err)
	var before int
	before, err = intParam(q, "before")
	f.Before = int64(before)
	errs = append(errs, err)
	if c := q.Get("compacted"); c != "" {
		f.Compacted, err = strconv.ParseBool(c)
		if err != nil {
			errs = append(errs, fmt.Errorf("compacted: %q is not true or false", c))
		}
	}
	switch f.StatusClass {
	case "", "2xx", "3xx", "4xx", "5xx", "error", "ok":
	default:
		errs = append(errs, fmt.Errorf("status: %q is not 2xx, 3xx, 4xx, 5xx, error or ok", f.StatusClass))
	}
	return f, errors.Join(errs...)
}

func timeParam(q url.Values, name string) (time.Time, error) {
	v := q.Get(name)
	if v == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, fmt.Errorf("%s: %q is not an RFC 3339 time", name, v)
	}
	return t, nil
}

func intParam(q url.Values, name string) (int, error) {
	v := q.Get(name)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s: %q is not a non-negative number", name, v)
	}
	return n, nil
}

// serveLive streams the recorder's live batches as SSE ("event: exchanges"). A client that
// falls behind is dropped; EventSource reconnects and the view reloads the list.
func (a *App) serveLive(w http.ResponseWriter, r *http.Request) {
	if a.recorder == nil {
		writeDoorError(w, http.StatusServiceUnavailable, ErrNoHistory.Error())
		return
	}
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	if err := rc.Flush(); err != nil {
		return
	}
	batches, unsubscribe := a.recorder.Feed().Subscribe()
	defer unsubscribe()
	keepAlive := time.NewTicker(15 * time.Second)
	defer keepAlive.Stop()
	for {
		var chunk []byte
		select {
		case <-r.Context().Done():
			return
		case <-keepAlive.C:
			chunk = []byte(": keep-alive\n\n")
		case b, ok := <-batches:
			if !ok {
				return
			}
			data, err := json.Marshal(b)
			if err != nil {
				return
			}
			chunk = append(append([]byte("event: exchanges\ndata: "), data...), "\n\n"...)
		}
		if _, err := w.Write(chunk); err != nil {
			return
		}
		if err := rc.Flush(); err != nil {
			return
		}
	}
}
