package door

import (
	"bytes"
	"net/http"
	"strconv"
	"strings"

	"longhaul/app"
	"longhaul/app/recorder"
)

// historyRoutes:
//
//	GET /longhaul/v1/history                 a page, newest first (filters and cursor in the query, see app.History.List)
//	GET /longhaul/v1/history/{id}            one exchange with attempts, compaction steps, bodies
//	GET /longhaul/v1/history/{id}/bundle     the exchange's repro bundle, a zip attachment (app/bundle)
//	POST /longhaul/v1/history/{id}/replay    re-send its request as received ({noCompaction, accountID, model}): the new exchange's id and status
//	GET /longhaul/v1/history/export          JSON Lines of the filtered range
//	GET /longhaul/v1/history/live            Server-Sent Events: "exchanges" batches of new and updated exchanges
//	GET /longhaul/v1/history/status          recorder counters (drops) and database size
//	GET /longhaul/v1/sessions                sessions (?since=RFC3339&limit=N)
//	GET /longhaul/v1/sessions/{id}/pressure  context pressure of a session ("latest": the latest)
//	GET /longhaul/v1/pressure                the latest session's pressure
//
// A bad query parameter answers 400, an unknown id 404.
func (d *Door) historyRoutes(mux *patternMux) {
	mux.Handle("GET /longhaul/v1/history", handle(func(r *http.Request) (any, error) {
		return d.facades(r).History.List(query(r))
	}))
	mux.Handle("GET /longhaul/v1/history/{id}", handle(func(r *http.Request) (any, error) {
		return d.facades(r).History.Detail(r.PathValue("id"))
	}))
	mux.HandleFunc("GET /longhaul/v1/history/{id}/bundle", d.bundle)
	mux.Handle("POST /longhaul/v1/history/{id}/replay", handle(func(r *http.Request) (any, error) {
		var o app.ReplayOptions
		if err := decodeBody(r, &o); err != nil {
			return nil, err
		}
		return d.facades(r).History.Replay(r.PathValue("id"), o)
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
func (d *Door) statsRoutes(mux *patternMux) {
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

// bundle serves an exchange's repro bundle as a zip download. It is built in memory first (its
// bodies are capped by history.max_body_bytes), so an unknown id still gets the door's JSON 404.
func (d *Door) bundle(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	var zipped bytes.Buffer
	if err := d.app.WriteBundle(r.Context(), id, &zipped); err != nil {
		writeError(w, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/zip")
	h.Set("Content-Disposition", `attachment; filename="longhaul-bundle-`+fileSafe(id)+`.zip"`)
	h.Set("Content-Length", strconv.Itoa(zipped.Len()))
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	zipped.WriteTo(w) //nolint:errcheck // the client is gone
}

// fileSafe keeps the characters of an exchange id ("lh_0123abcd") a file name and a quoted
// header value can hold.
func fileSafe(id string) string {
	return strings.Map(func(c rune) rune {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' {
			return c
		}
		return '_'
	}, id)
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
