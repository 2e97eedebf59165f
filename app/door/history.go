package door

import (
	"net/http"

	"longhaul/app/recorder"
)

// historyRoutes:
//
//	GET /longhaul/v1/history                 a page, newest first (filters and cursor in the query, see app.History.List)
//	GET /longhaul/v1/history/{id}            one exchange with attempts, compaction steps, bodies
//	GET /longhaul/v1/history/export          JSON Lines of the filtered range
//	GET /longhaul/v1/history/live            Server-Sent Events: "exchanges" batches of new and updated exchanges
//	GET /longhaul/v1/history/status          recorder counters (drops) and database size
//	GET /longhaul/v1/sessions                sessions (?since=RFC3339&limit=N)
//	GET /longhaul/v1/sessions/{id}/pressure  context pressure of a session ("latest": the latest)
//	GET /longhaul/v1/pressure                the latest session's pressure
//
// A bad query parameter answers 400, an unknown id 404.
func (d *Door) historyRoutes(mux *http.ServeMux) {
	mux.Handle("GET /longhaul/v1/history", handle(func(r *http.Request) (any, error) {
		return d.facades(r).History.List(query(r))
	}))
	mux.Handle("GET /longhaul/v1/history/{id}", handle(func(r *http.Request) (any, error) {
		return d.facades(r).History.Detail(r.PathValue("id"))
	}))
	mux.HandleFunc("GET /longhaul/v1/history/export", d.export)
	mux.HandleFunc("GET /longhaul/v1/history/live", func(w http.ResponseWriter, r *http.Request) {
		stream(w, r, d.app.Events(), func(name string) (string, bool) { return "exchanges", name == recorder.EventExchanges })
	})
	mux.Handle("GET /longhaul/v1/history/status", handle(func(r *http.Request) (any, error) {
		return d.app.HistoryStatus(r.Context())
	}))
	mux.Handle("GET /longhaul/v1/sessions", handle(func(r *http.Request) (any, error) {
		return d.facades(r).History.Sessions(query(r))
	}))
	pressure := handle(func(r *http.Request) (any, error) {
		return d.facades(r).History.Pressure(r.PathValue("id"))
	})
	mux.Handle("GET /longhaul/v1/sessions/{id}/pressure", pressure)
	mux.Handle("GET /longhaul/v1/pressure", pressure)
}

// statsRoutes:
//
//	GET /longhaul/v1/stats         ?since=&until=&bucket=hour|day
//	GET /longhaul/v1/stats/series  ?since=&until=&bucket=hour|day&by=account|model
func (d *Door) statsRoutes(mux *http.ServeMux) {
	mux.Handle("GET /longhaul/v1/stats", handle(func(r *http.Request) (any, error) {
		return d.facades(r).History.Stats(query(r))
	}))
	mux.Handle("GET /longhaul/v1/stats/series", handle(func(r *http.Request) (any, error) {
		return d.facades(r).History.StatsSeries(query(r))
	}))
}

// export streams the filtered exchanges as a JSON Lines download. The download's headers go
// out with the first line, so a bad filter still gets the door's JSON error.
func (d *Door) export(w http.ResponseWriter, r *http.Request) {
	out := &download{w: w}
	_, err := d.app.ExportHistory(r.Context(), query(r), out)
	switch {
	case err != nil && !out.started:
		writeError(w, err)
	case err != nil:
		d.log.Warn("history export", "err", err) // the truncated file and this line say it
	default:
		out.start()
	}
}

// download sets the headers of a JSON Lines attachment before its first byte.
type download struct {
	w       http.ResponseWriter
	started bool
}

func (d *download) start() {
	if !d.started {
		d.started = true
		d.w.Header().Set("Content-Type", "application/jsonl")
		d.w.Header().Set("Content-Disposition", `attachment; filename="longhaul-history.jsonl"`)
		d.w.WriteHeader(http.StatusOK)
	}
}

func (d *download) Write(p []byte) (int, error) {
	d.start()
	return d.w.Write(p)
}
