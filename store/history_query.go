package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// HistoryFilter selects exchanges. Zero fields do not filter.
type HistoryFilter struct {
	Since, Until time.Time // start time range, [Since, Until)
	// StatusClass is "2xx", "3xx", "4xx", "5xx", "error" (any failure, including a client
	// hang-up or a stream that failed after its first byte) or "ok".
	StatusClass string
	Model       string // the model asked for or the model sent
	Account     string // account name, or id
	Session     string
	Route       string
	Parent      string // only the requests the proxy made on this exchange's behalf
	Compacted   bool   // only exchanges that some compaction step changed
	Text        string // substring of model, account, error or path
	// Before is a cursor: only rows recorded before it (HistoryPage.Next of the previous page).
	Before int64
	// Limit caps a page; 0 means 100, and at most 1000 are returned.
	Limit int
}

// HistoryPage is one page of a list, newest first. Next is the cursor of the following page,
// 0 when this is the last one.
type HistoryPage struct {
	Exchanges []Exchange `json:"exchanges"`
	Next      int64      `json:"next"`
}

// listColumns are the columns of a list row: never the bodies, which live in another table.
const listColumns = `seq, id, state, route, method, path, user_agent, remote_addr, session_id, model,
	model_sent, stream, account_id, account_name, start_ns, first_byte_ns, end_ns, duration_ns, ttfb_ns,
	status, error_type, error_message, stream_outcome, stop_reason,
	input_tokens, output_tokens, cache_read_tokens, cache_write_tokens,
	context_limit, tokens_before, tokens_after, pressure_before, pressure_after,
	layers, tokens_saved, signature_recoveries, cross_model_dropped, signatures, tool_use_ids,
	bytes_in, bytes_out, has_bodies, bodies_truncated, client_protocol, upstream_protocol,
	parent_id, tools, tool_tokens, tools_called, replay_of, context_limit_source, client_headers`

// failedSQL is HasFailed's rule for a finished row, as the list filters and the stats
// (errorCond) select by it; TestFailedRuleIsOneRule checks that the two agree.
const failedSQL = "(status >= 400 OR error_type != '' OR stream_outcome IN ('client_cancelled', 'upstream_error'))"

// HasFailed reports whether a finished exchange failed: an error status, an error the proxy or
// the upstream reported, or a stream that did not complete (the client left, the upstream sent
// an error event). An exchange still in flight has not failed.
func (e Exchange) HasFailed() bool {
	if e.State != "finished" {
		return false
	}
	return e.Status >= 400 || e.ErrorType != "" || e.StreamOutcome == "client_cancelled" || e.StreamOutcome == "upstream_error"
}

func scanExchange(sc interface{ Scan(...any) error }) (Exchange, error) {
	var e Exchange
	var start, firstByte, end, dur, ttfb int64
	var layers, toolIDs, toolsCalled, clientHeaders string
	err := sc.Scan(&e.Seq, &e.ID, &e.State, &e.Route, &e.Method, &e.Path, &e.UserAgent, &e.RemoteAddr, &e.SessionID, &e.Model,
		&e.ModelSent, &e.Stream, &e.AccountID, &e.AccountName, &start, &firstByte, &end, &dur, &ttfb,
		&e.Status, &e.ErrorType, &e.ErrorMessage, &e.StreamOutcome, &e.StopReason,
		&e.InputTokens, &e.OutputTokens, &e.CacheReadTokens, &e.CacheWriteTokens,
		&e.ContextLimit, &e.TokensBefore, &e.TokensAfter, &e.PressureBefore, &e.PressureAfter,
		&layers, &e.TokensSaved, &e.SignatureRecoveries, &e.CrossModelDropped, &e.Signatures, &toolIDs,
		&e.BytesIn, &e.BytesOut, &e.HasBodies, &e.BodiesTruncated, &e.ClientProtocol, &e.UpstreamProtocol,
		&e.ParentID, &e.Tools, &e.ToolTokens, &toolsCalled, &e.ReplayOf, &e.ContextLimitSource, &clientHeaders)
	if err != nil {
		return e, err
	}
	if clientHeaders != "" {
		if err := json.Unmarshal([]byte(clientHeaders), &e.ClientHeaders); err != nil {
			return e, fmt.Errorf("client headers: %w", err)
		}
	}
	e.Start, e.FirstByte, e.End = fromNanos(start), fromNanos(firstByte), fromNanos(end)
	e.Duration, e.TTFB = time.Duration(dur), time.Duration(ttfb)
	e.Layers = []string{}
	if layers != "" {
		e.Layers = strings.Split(layers, ",")
	}
	if err := json.Unmarshal([]byte(toolIDs), &e.ToolUseIDs); err != nil {
		return e, fmt.Errorf("tool_use_ids of %s: %w", e.ID, err)
	}
	e.ToolsCalled = []string{}
	if toolsCalled != "" { // '' on a row from before migration 008
		if err := json.Unmarshal([]byte(toolsCalled), &e.ToolsCalled); err != nil {
			return e, fmt.Errorf("tools_called of %s: %w", e.ID, err)
		}
	}
	e.Failed = e.HasFailed()
	return e, nil
}

// where builds the WHERE clause of a filter (without the cursor).
func (f HistoryFilter) where() (string, []any) {
	var conds []string
	var args []any
	add := func(cond string, a ...any) { conds = append(conds, cond); args = append(args, a...) }
	if !f.Since.IsZero() {
		add("start_ns >= ?", f.Since.UnixNano())
	}
	if !f.Until.IsZero() {
		add("start_ns < ?", f.Until.UnixNano())
	}
	switch f.StatusClass {
	case "2xx", "3xx", "4xx", "5xx":
		lo := int(f.StatusClass[0]-'0') * 100
		add("status >= ? AND status < ?", lo, lo+100)
	case "error":
		add("state = 'finished' AND " + failedSQL)
	case "ok":
		add("state = 'finished' AND NOT " + failedSQL)
	}
	if f.Model != "" {
		add("(model = ? OR model_sent = ?)", f.Model, f.Model)
	}
	if f.Account != "" {
		if id, err := strconv.ParseInt(f.Account, 10, 64); err == nil {
			add("(account_name = ? OR account_id = ?)", f.Account, id)
		} else {
			add("account_name = ?", f.Account)
		}
	}
	if f.Session != "" {
		add("session_id = ?", f.Session)
	}
	if f.Route != "" {
		add("route = ?", f.Route)
	}
	if f.Parent != "" {
		add("parent_id = ?", f.Parent)
	}
	if f.Compacted {
		add("layers != ''")
	}
	if f.Text != "" {
		like := "%" + strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(f.Text) + "%"
		add(`(model LIKE ? ESCAPE '\' OR model_sent LIKE ? ESCAPE '\' OR account_name LIKE ? ESCAPE '\'
			OR error_type LIKE ? ESCAPE '\' OR error_message LIKE ? ESCAPE '\' OR path LIKE ? ESCAPE '\')`,
			like, like, like, like, like, like)
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

func (f HistoryFilter) limit() int {
	switch {
	case f.Limit <= 0:
		return 100
	case f.Limit > 1000:
		return 1000
	}
	return f.Limit
}

// ListExchanges returns a page of exchanges, most recently recorded first. Paging walks the
// insertion order, so rows recorded while a user pages never shift the pages: no row is
// returned twice, none is skipped. Bodies are never read.
func (st *Store) ListExchanges(ctx context.Context, f HistoryFilter) (HistoryPage, error) {
	where, args := f.where()
	if f.Before > 0 {
		if where == "" {
			where = " WHERE seq < ?"
		} else {
			where += " AND seq < ?"
		}
		args = append(args, f.Before)
	}
	n := f.limit()
	rows, err := st.db.QueryContext(ctx, `SELECT `+listColumns+` FROM exchanges`+where+` ORDER BY seq DESC LIMIT ?`, append(args, n+1)...)
	if err != nil {
		return HistoryPage{}, fmt.Errorf("list exchanges: %w", err)
	}
	defer rows.Close() //nolint:errcheck // read-only
	page := HistoryPage{Exchanges: []Exchange{}}
	for rows.Next() {
		e, err := scanExchange(rows)
		if err != nil {
			return HistoryPage{}, fmt.Errorf("list exchanges: %w", err)
		}
		page.Exchanges = append(page.Exchanges, e)
	}
	if err := rows.Err(); err != nil {
		return HistoryPage{}, fmt.Errorf("list exchanges: %w", err)
	}
	if len(page.Exchanges) > n {
		page.Exchanges = page.Exchanges[:n]
		page.Next = page.Exchanges[n-1].Seq
	}
	return page, nil
}

// Exchange returns one exchange with its attempts, compaction steps and bodies (decompressed).
func (st *Store) Exchange(ctx context.Context, id string) (Exchange, error) {
	e, err := scanExchange(st.db.QueryRowContext(ctx, `SELECT `+listColumns+` FROM exchanges WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Exchange{}, fmt.Errorf("exchange %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return Exchange{}, fmt.Errorf("exchange %s: %w", id, err)
	}
	if err := st.loadDetail(ctx, &e); err != nil {
		return Exchange{}, fmt.Errorf("exchange %s: %w", id, err)
	}
	if e.Children, err = st.linked(ctx, "parent_id", e.ID); err != nil {
		return Exchange{}, fmt.Errorf("exchange %s: children: %w", id, err)
	}
	if e.Replays, err = st.linked(ctx, "replay_of", e.ID); err != nil {
		return Exchange{}, fmt.Errorf("exchange %s: replays: %w", id, err)
	}
	return e, nil
}

// linked lists the exchanges whose column (parent_id: its summary calls; replay_of: its
// replays) holds id, oldest first. A request has a summary call or two and a user's handful
// of replays at most, so no paging. column is one of those two names, never input.
func (st *Store) linked(ctx context.Context, column, id string) ([]Exchange, error) {
	rows, err := st.db.QueryContext(ctx, `SELECT `+listColumns+` FROM exchanges WHERE `+column+` = ? ORDER BY seq`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close() //nolint:errcheck // read-only
	var out []Exchange
	for rows.Next() {
		c, err := scanExchange(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

func (st *Store) loadDetail(ctx context.Context, e *Exchange) error {
	e.Attempts, e.Compaction = []Attempt{}, []CompactionStep{}
	var attempts string
	if err := st.db.QueryRowContext(ctx, `SELECT attempts FROM exchanges WHERE seq = ?`, e.Seq).Scan(&attempts); err != nil {
		return fmt.Errorf("attempts: %w", err)
	}
	if attempts != "" {
		as, err := parseAttempts(attempts)
		if err != nil {
			return err
		}
		e.Attempts = as
	} else if err := st.loadAttemptRows(ctx, e); err != nil { // a row from before migration 007
		return err
	}
	rows, err := st.db.QueryContext(ctx, `SELECT layer, tokens_before, tokens_after, raw_before, raw_after, items, duration_ns, cache_hit, edits, rewrite, deferred
		FROM exchange_compaction WHERE exchange_seq = ? ORDER BY n`, e.Seq)
	if err != nil {
		return fmt.Errorf("compaction steps: %w", err)
	}
	for rows.Next() {
		var c CompactionStep
		var dur int64
		var edits string
		if err := rows.Scan(&c.Layer, &c.TokensBefore, &c.TokensAfter, &c.RawBefore, &c.RawAfter, &c.Items, &dur, &c.CacheHit, &edits, &c.Rewrite, &c.Deferred); err != nil {
			rows.Close() //nolint:errcheck
			return fmt.Errorf("compaction steps: %w", err)
		}
		if edits != "" { // '' on a step without edits, or recorded before migration 010
			if err := json.Unmarshal([]byte(edits), &c.Edits); err != nil {
				rows.Close() //nolint:errcheck
				return fmt.Errorf("compaction step %d edits: %w", len(e.Compaction), err)
			}
		}
		c.Duration = time.Duration(dur)
		e.Compaction = append(e.Compaction, c)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return fmt.Errorf("compaction steps: %w", err)
	}
	var blobs [3][]byte
	err = st.db.QueryRowContext(ctx, `SELECT request, forwarded, reply FROM exchange_bodies WHERE exchange_seq = ?`, e.Seq).
		Scan(&blobs[0], &blobs[1], &blobs[2])
	if errors.Is(err, sql.ErrNoRows) {
		return nil // never kept, or dropped by retention
	}
	if err != nil {
		return fmt.Errorf("bodies: %w", err)
	}
	var b Bodies
	for i, dst := range []*string{&b.Request, &b.Forwarded, &b.Reply} {
		if len(blobs[i]) > 0 && blobs[i][0] == bodyChunked {
			*dst, err = readChunked(ctx, st.db, blobs[i][1:])
		} else {
			*dst, err = decompress(blobs[i])
		}
		if err != nil {
			return err
		}
	}
	e.Bodies = &b
	return nil
}

// loadAttemptRows reads the attempts of a row written before migration 007 from their table.
func (st *Store) loadAttemptRows(ctx context.Context, e *Exchange) error {
	rows, err := st.db.QueryContext(ctx, `SELECT account_id, account_name, status, error, start_ns, duration_ns
		FROM exchange_attempts WHERE exchange_seq = ? ORDER BY n`, e.Seq)
	if err != nil {
		return fmt.Errorf("attempts: %w", err)
	}
	for rows.Next() {
		var a Attempt
		var start, dur int64
		if err := rows.Scan(&a.AccountID, &a.AccountName, &a.Status, &a.Error, &start, &dur); err != nil {
			rows.Close() //nolint:errcheck
			return fmt.Errorf("attempts: %w", err)
		}
		a.Start, a.Duration = fromNanos(start), time.Duration(dur)
		e.Attempts = append(e.Attempts, a)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return fmt.Errorf("attempts: %w", err)
	}
	return nil
}

// LatestExchange returns the most recently recorded /v1/messages exchange of a session, or
// of any session when sessionID is "" (the status line's "where am I now"). A replay is
// never it: it re-sent an old request on the user's demand, the session did not move.
func (st *Store) LatestExchange(ctx context.Context, sessionID string) (Exchange, error) {
	q, args := `SELECT `+listColumns+` FROM exchanges WHERE route = 'messages' AND session_id != '' AND replay_of = '' ORDER BY seq DESC LIMIT 1`, []any{}
	if sessionID != "" {
		q, args = `SELECT `+listColumns+` FROM exchanges WHERE session_id = ? AND route = 'messages' AND replay_of = '' ORDER BY seq DESC LIMIT 1`, []any{sessionID}
	}
	e, err := scanExchange(st.db.QueryRowContext(ctx, q, args...))
	if errors.Is(err, sql.ErrNoRows) && sessionID == "" {
		return Exchange{}, fmt.Errorf("no /v1/messages request recorded yet: %w", ErrNotFound)
	}
	if errors.Is(err, sql.ErrNoRows) {
		return Exchange{}, fmt.Errorf("latest exchange of session %q: %w", sessionID, ErrNotFound)
	}
	if err != nil {
		return Exchange{}, fmt.Errorf("latest exchange of session %q: %w", sessionID, err)
	}
	return e, nil
}
