package app

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strconv"
	"time"

	"longhaul/app/bundle"
	"longhaul/app/recorder"
	"longhaul/proxy"
	"longhaul/store"
)

// ErrNoHistory is returned by history views when the app runs without a recorder.
var ErrNoHistory = errors.New("history is not recorded in this process")

// ErrBadQuery marks a query parameter that could not be read (errors.Is); the HTTP door
// answers 400. The error's text says which parameter and why.
var ErrBadQuery = errors.New("bad query parameter")

type queryError string

func (e queryError) Error() string        { return string(e) }
func (e queryError) Is(target error) bool { return target == ErrBadQuery }

func badQuery(format string, args ...any) error { return queryError(fmt.Sprintf(format, args...)) }

// History reads the recorded exchanges: lists, details, exports, sessions, context pressure
// and traffic statistics. Filters come as the HTTP door's query parameters (the door passes
// its query through), so the UI builds one query for both doors.
type History struct{ bound }

// List lists recorded exchanges, newest first (q: since, until, status, model, account,
// session, route, parent, compacted, q, before, limit; see historyFilter).
func (h *History) List(q map[string]string) (store.HistoryPage, error) {
	f, err := historyFilter(q)
	if err != nil {
		return store.HistoryPage{}, err
	}
	page, err := h.app.store.ListExchanges(h.ctx(), f)
	if err != nil {
		return store.HistoryPage{}, err
	}
	p := h.app.pricer()
	for i := range page.Exchanges {
		page.Exchanges[i].Price(p)
	}
	return page, nil
}

// Detail returns one exchange with attempts, compaction steps and bodies, its summary calls
// and its replays, each with its estimated cost.
func (h *History) Detail(id string) (store.Exchange, error) {
	e, err := h.app.store.Exchange(h.ctx(), id)
	if err != nil {
		return store.Exchange{}, err
	}
	e.Price(h.app.pricer())
	return e, nil
}

// Export returns the filtered exchanges (List's q) as JSON Lines, oldest first.
func (h *History) Export(q map[string]string) (string, error) {
	var buf bytes.Buffer
	if _, err := h.app.ExportHistory(h.ctx(), q, &buf); err != nil {
		return "", err
	}
	return buf.String(), nil
}

// ExportHistory writes the exchanges matching q (History.List's parameters) to w as JSON
// Lines and returns how many; the HTTP door streams it. A bad parameter fails before
// anything is written.
func (a *App) ExportHistory(ctx context.Context, q map[string]string, w io.Writer) (int, error) {
	f, err := historyFilter(q)
	if err != nil {
		return 0, err
	}
	return a.store.ExportExchanges(ctx, f, w)
}

// Bundle returns the repro bundle of one exchange (app/bundle), base64-encoded: the window's
// bindings carry JSON. The HTTP door serves the zip itself (GET /longhaul/v1/history/{id}/bundle).
func (h *History) Bundle(id string) (string, error) {
	var buf bytes.Buffer
	if err := h.app.WriteBundle(h.ctx(), id, &buf); err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(buf.Bytes()), nil
}

// WriteBundle writes the repro bundle of exchange id to w: its bodies, reply, attempts and
// compaction steps, the settings without secrets, this build's version and platform, with
// the client key, every account key and key-shaped strings masked (app/bundle). An unknown id
// fails with store.ErrNotFound before anything is written.
func (a *App) WriteBundle(ctx context.Context, id string, w io.Writer) error {
	ex, err := a.store.Exchange(ctx, id)
	if err != nil {
		return err
	}
	settings, err := a.store.Settings(ctx)
	if err != nil {
		return fmt.Errorf("bundle of %s: %w", id, err)
	}
	accounts, err := a.store.Accounts(ctx)
	if err != nil {
		return fmt.Errorf("bundle of %s: %w", id, err)
	}
	var secrets []string
	for _, acct := range accounts {
		if acct.Secret != "" {
			secrets = append(secrets, acct.Secret)
		}
	}
	return bundle.Write(w, ex, settings, bundle.Meta{Version: a.version, GOOS: runtime.GOOS, GOARCH: runtime.GOARCH}, secrets, a.store.LeakRules())
}

// Sessions lists the sessions seen since q's since (RFC 3339), most recent first, at most
// q's limit, each with the account it is bound to, its tokens per model and its estimated cost.
func (h *History) Sessions(q map[string]string) ([]store.Session, error) {
	since, err := timeParam(q, "since")
	limit, lerr := intParam(q, "limit")
	if err = errors.Join(err, lerr); err != nil {
		return nil, err
	}
	sessions, err := h.app.store.Sessions(h.ctx(), since, limit, h.app.pricer())
	if err != nil {
		return nil, err
	}
	now := h.app.now()
	for i := range sessions {
		if acct, ok := h.app.proxy.Pool().SessionAccount(sessions[i].ID, now); ok {
			sessions[i].BoundAccount = acct.Name()
		}
	}
	return sessions, nil
}

// Stats aggregates traffic per account, model and bucket, with estimated costs (q: since,
// until, bucket hour|day; since defaults to a day ago).
func (h *History) Stats(q map[string]string) (store.Stats, error) {
	since, until, err := statsRange(q)
	if err != nil {
		return store.Stats{}, err
	}
	return h.app.store.HistoryStats(h.ctx(), since, until, q["bucket"], h.app.pricer())
}

// StatsSeries is traffic per account or model per hour or day, for one chart line each (q:
// since, until, bucket hour|day, by account|model; since defaults to a day ago).
func (h *History) StatsSeries(q map[string]string) (store.StatsSeries, error) {
	since, until, err := statsRange(q)
	if err != nil {
		return store.StatsSeries{}, err
	}
	switch q["by"] {
	case "", "account", "model":
	default:
		return store.StatsSeries{}, badQuery("by: %q is not account or model", q["by"])
	}
	return h.app.store.HistoryStatsSeries(h.ctx(), since, until, q["bucket"], q["by"], h.app.pricer())
}

// HistoryStatus is the recorder's health for the UI.
type HistoryStatus struct {
	recorder.Stats
	DatabaseBytes int64 `json:"databaseBytes"`
}

// HistoryStatus reports the recorder's counters and the database size.
func (a *App) HistoryStatus(ctx context.Context) (HistoryStatus, error) {
	if a.recorder == nil {
		return HistoryStatus{}, ErrNoHistory
	}
	size, err := a.store.HistorySize(ctx)
	if err != nil {
		return HistoryStatus{}, err
	}
	return HistoryStatus{Stats: a.recorder.Stats(), DatabaseBytes: size}, nil
}

// historyFilter reads a list filter: since, until (RFC 3339), status (2xx|3xx|4xx|5xx|error|
// ok), model, account, session, route, parent (an exchange's id: the requests made on its
// behalf), compacted (true), q (text), before (cursor), limit.
func historyFilter(q map[string]string) (store.HistoryFilter, error) {
	f := store.HistoryFilter{
		StatusClass: q["status"], Model: q["model"], Account: q["account"],
		Session: q["session"], Route: q["route"], Parent: q["parent"], Text: q["q"],
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
	if c := q["compacted"]; c != "" {
		f.Compacted, err = strconv.ParseBool(c)
		if err != nil {
			errs = append(errs, badQuery("compacted: %q is not true or false", c))
		}
	}
	switch f.StatusClass {
	case "", "2xx", "3xx", "4xx", "5xx", "error", "ok":
	default:
		errs = append(errs, badQuery("status: %q is not 2xx, 3xx, 4xx, 5xx, error or ok", f.StatusClass))
	}
	return f, errors.Join(errs...)
}

// statsRange reads since, until and bucket; since defaults to a day ago.
func statsRange(q map[string]string) (since, until time.Time, err error) {
	since, err = timeParam(q, "since")
	until, uerr := timeParam(q, "until")
	if err = errors.Join(err, uerr); err != nil {
		return since, until, err
	}
	switch q["bucket"] {
	case "", "hour", "day":
	default:
		return since, until, badQuery("bucket: %q is not hour or day", q["bucket"])
	}
	if since.IsZero() {
		since = time.Now().AddDate(0, 0, -1)
	}
	return since, until, nil
}

func timeParam(q map[string]string, name string) (time.Time, error) {
	v := q[name]
	if v == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, badQuery("%s: %q is not an RFC 3339 time", name, v)
	}
	return t, nil
}

func intParam(q map[string]string, name string) (int, error) {
	v := q[name]
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, badQuery("%s: %q is not a non-negative number", name, v)
	}
	return n, nil
}

// ReplayOptions say how a recorded request is re-sent (see proxy.Replay): without
// compaction, on one account (0: the pool decides), under another model ("": as received).
type ReplayOptions struct {
	NoCompaction bool   `json:"noCompaction"`
	AccountID    int64  `json:"accountID"`
	Model        string `json:"model"`
}

// ReplayResult is the replay's own exchange (in history like any other, marked as a replay of
// the original) and the status it got.
type ReplayResult struct {
	ID     string `json:"id"`
	Status int    `json:"status"`
}

// ErrNotReplayable is an exchange whose request cannot be sent again as it came: its body was
// not kept (history.store_bodies off), was cut at history.max_body_bytes, or it was no model
// request.
var ErrNotReplayable = errors.New("this request cannot be replayed")

// Replay re-sends exchange id's request as it was received, through the proxy's normal path,
// as a new exchange linked to it: the two can then be compared side by side.
func (h *History) Replay(id string, o ReplayOptions) (ReplayResult, error) {
	return h.app.Replay(h.ctx(), id, o)
}

// Replay is History.Replay for the HTTP door.
func (a *App) Replay(ctx context.Context, id string, o ReplayOptions) (ReplayResult, error) {
	ex, err := a.store.Exchange(ctx, id)
	if err != nil {
		return ReplayResult{}, err
	}
	switch {
	case ex.Bodies == nil || ex.Bodies.Request == "":
		return ReplayResult{}, fmt.Errorf("%w: its body was not kept (history.store_bodies)", ErrNotReplayable)
	case ex.BodiesTruncated:
		return ReplayResult{}, fmt.Errorf("%w: its body was cut at history.max_body_bytes", ErrNotReplayable)
	}
	// The headers that change what the request means, as the client sent them; a record from
	// before history kept them gets the API version every current SDK sends.
	h := http.Header{"Anthropic-Version": {"2023-06-01"}}
	for k, v := range ex.ClientHeaders {
		h.Set(k, v)
	}
	newID, status, err := a.proxy.Replay(ctx, proxy.Replay{Of: id, Path: ex.Path, Body: []byte(ex.Bodies.Request), Header: h,
		NoCompaction: o.NoCompaction, AccountID: o.AccountID, Model: o.Model}, nil)
	if errors.Is(err, proxy.ErrReplayRoute) {
		return ReplayResult{}, fmt.Errorf("%w: %v", ErrNotReplayable, err)
	}
	if err != nil {
		return ReplayResult{}, err
	}
	return ReplayResult{ID: newID, Status: status}, nil
}
