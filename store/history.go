package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unsafe"
)

// Exchange is one recorded client request: the history row, and in a detail view its
// attempts, compaction steps and bodies. Text fields and bodies are redacted when written.
type Exchange struct {
	Seq int64  `json:"seq"` // insertion order; the paging cursor
	ID  string `json:"id"`
	// ParentID is, on a request the proxy made itself (a Layer-3 summary call, Route
	// "summary"), the ID of the client request that caused it; "" on a client's request.
	ParentID string `json:"parentID"`
	// ReplayOf is, on a request re-sent from the history (a replay: uncompacted, on another
	// account or model), the ID of the exchange it re-sent; "" otherwise.
	ReplayOf string `json:"replayOf"`
	State    string `json:"state"` // "started" or "finished"
	Route    string `json:"route"`
	// ClientProtocol is the wire format the client spoke ("anthropic", "openai-chat",
	// "openai-responses", "gemini"); UpstreamProtocol the one the last attempt sent (the
	// account's kind: "anthropic", "openai", "openai-responses", "gemini"). "" when unknown:
	// no attempt was made, or the row was recorded before migration 006.
	ClientProtocol   string `json:"clientProtocol"`
	UpstreamProtocol string `json:"upstreamProtocol"`
	Method           string `json:"method"`
	Path             string `json:"path"`
	UserAgent        string `json:"userAgent"`
	RemoteAddr       string `json:"remoteAddr"`
	SessionID        string `json:"sessionID"`
	Model            string `json:"model"`     // as the client asked
	ModelSent        string `json:"modelSent"` // as the last attempt sent it
	Stream           bool   `json:"stream"`
	// AccountID and AccountName are the account of the last attempt.
	AccountID   int64  `json:"accountID"`
	AccountName string `json:"accountName"`

	Start     time.Time     `json:"start" ts_type:"string"`
	FirstByte time.Time     `json:"firstByte" ts_type:"string"` // zero when nothing reached the client
	End       time.Time     `json:"end" ts_type:"string"`       // zero while started
	Duration  time.Duration `json:"durationNs"`
	TTFB      time.Duration `json:"ttfbNs"`

	Status        int    `json:"status"`
	ErrorType     string `json:"errorType"`
	ErrorMessage  string `json:"errorMessage"`
	StreamOutcome string `json:"streamOutcome"` // "complete", "client_cancelled", "upstream_error"
	StopReason    string `json:"stopReason"`
	// Failed is HasFailed, filled in by the store's readers and the recorder, so the UI colours
	// a row by the same rule the "error" filter selects by, never a copy of it.
	Failed bool `json:"failed"`

	InputTokens      int64 `json:"inputTokens"`
	OutputTokens     int64 `json:"outputTokens"`
	CacheReadTokens  int64 `json:"cacheReadTokens"`
	CacheWriteTokens int64 `json:"cacheWriteTokens"`
	// Cost is the estimated cost of those tokens, set by Price from the app's price table
	// (the store knows no prices); nil when not priced or the model has no price.
	Cost *Cost `json:"cost,omitempty"`

	ContextLimit int `json:"contextLimit"`
	// ContextLimitSource says where ContextLimit came from: "setting" (proxy.context_limits),
	// "default", "beta" (the context-1m beta raised a default) or "learned" (the upstream
	// refused a longer request); "" before migration 011.
	ContextLimitSource  string   `json:"contextLimitSource"`
	TokensBefore        int      `json:"tokensBefore"`
	TokensAfter         int      `json:"tokensAfter"`
	PressureBefore      float64  `json:"pressureBefore"`
	PressureAfter       float64  `json:"pressureAfter"`
	Layers              []string `json:"layers"` // compaction steps applied, in order
	TokensSaved         int      `json:"tokensSaved"`
	SignatureRecoveries int      `json:"signatureRecoveries"`
	CrossModelDropped   int      `json:"crossModelDropped"`
	Signatures          int      `json:"signatures"` // thinking signatures issued (count only)
	ToolUseIDs          []string `json:"toolUseIDs"`
	// Tools is how many tool definitions the request offered, ToolTokens about how many tokens
	// they take (sent on every turn), ToolsCalled the tools the reply called, in order.
	Tools       int      `json:"tools"`
	ToolTokens  int      `json:"toolTokens"`
	ToolsCalled []string `json:"toolsCalled"`
	// ClientHeaders are the request headers a replay must send again to mean the same thing
	// (proxy.ReplayHeaders: anthropic-beta, anthropic-version, openai-beta), never a credential.
	ClientHeaders map[string]string `json:"clientHeaders,omitempty"`

	BytesIn         int64 `json:"bytesIn"`
	BytesOut        int64 `json:"bytesOut"`
	HasBodies       bool  `json:"hasBodies"`
	BodiesTruncated bool  `json:"bodiesTruncated"`

	// Detail only (Store.Exchange, export); nil in lists.
	Attempts   []Attempt        `json:"attempts,omitempty"`
	Compaction []CompactionStep `json:"compaction,omitempty"`
	Bodies     *Bodies          `json:"bodies,omitempty"`
	// Children are the requests the proxy made on this one's behalf (its Layer-3 summary
	// calls), oldest first, as list rows; Store.Exchange only.
	Children []Exchange `json:"children,omitempty"`
	// Replays are the replays of this one, oldest first, as list rows; Store.Exchange only.
	Replays []Exchange `json:"replays,omitempty"`
}

// Attempt is one try against one upstream account.
type Attempt struct {
	AccountID   int64         `json:"accountID"`
	AccountName string        `json:"accountName"`
	Status      int           `json:"status"`
	Error       string        `json:"error"`
	Start       time.Time     `json:"start" ts_type:"string"`
	Duration    time.Duration `json:"durationNs"`
}

// CompactionStep is one compaction step that changed the request.
type CompactionStep struct {
	Layer        string        `json:"layer"`
	TokensBefore int           `json:"tokensBefore"`
	TokensAfter  int           `json:"tokensAfter"`
	RawBefore    int           `json:"rawBefore"`
	RawAfter     int           `json:"rawAfter"`
	Items        int           `json:"items"`
	Duration     time.Duration `json:"durationNs"`
	CacheHit     bool          `json:"cacheHit"`
	// Edits is what the step changed (the ledger, proxy/compact/ledger.go); none on a step
	// recorded before migration 010.
	Edits []Edit `json:"edits,omitempty"`
	// Rewrite is how many tokens the step made the upstream write to its prompt cache again;
	// Deferred, when set, says why the step waited for the cache instead (it changed nothing).
	Rewrite  int    `json:"rewrite"`
	Deferred string `json:"deferred,omitempty"`
}

// Edit is one change a compaction step made to the request, as compact.Edit records it.
type Edit struct {
	// Kind is a compact.EditKind ("rounds-removed", "thinking-elided", "model-renamed", …).
	Kind string `json:"kind"`
	// Message is the message's index in the request as received (-1: a message the step
	// built, or none); Through the last index of a span of removed messages.
	Message int `json:"message"`
	Through int `json:"through"`
	// Block is the block's index in that message (-1: the whole message).
	Block int `json:"block"`
	// Count is how many messages or blocks the edit stands for.
	Count int `json:"count"`
	// TokensBefore and TokensAfter estimate (uncalibrated) what the edited part held.
	TokensBefore int `json:"tokensBefore"`
	TokensAfter  int `json:"tokensAfter"`
	// Before and After are short previews of the text on each side, redacted.
	Before string `json:"before"`
	After  string `json:"after"`
	// Note names what the edit is about: a tool_use id, a block type, the setting.
	Note string `json:"note"`
}

// Bodies are the request as received, as forwarded (when different) and the reply (for a
// stream, the reconstructed message). Empty when not kept.
type Bodies struct {
	Request   string `json:"request"`
	Forwarded string `json:"forwarded"`
	Reply     string `json:"reply"`
	// RequestRepeats: Request starts with what another exchange's request did, as the proxy
	// found comparing them; the writer then need not compare them again. A hint only: it is
	// used when the writer remembers that exchange's body as its session's previous one.
	RequestRepeats Repeats `json:"-"`
	// RequestMessageEnds are where Request's messages end (byte offsets, ascending), as the
	// proxy found them; the writer cuts chunks there (bodySequence.cuts).
	RequestMessageEnds []int `json:"-"`
	// RequestDigest is Request made ready ahead of the batch (Store.DigestRequest), which then
	// holds "": what the writer stores in its place.
	RequestDigest *BodyDigest `json:"-"`
}

// Repeats says that the first Bytes bytes of a body are exchange Exchange's body's.
type Repeats struct {
	Exchange string
	Bytes    int
}

func (b *Bodies) empty() bool {
	return b == nil || b.Request == "" && b.RequestDigest == nil && b.Forwarded == "" && b.Reply == ""
}

func nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromNanos(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns).UTC()
}

// RedactExchange masks secrets in the text fields of e (not its bodies) and returns it, for
// views that show records before they are written (the live monitor).
func RedactExchange(e Exchange) Exchange {
	e.Attempts = append([]Attempt(nil), e.Attempts...)
	e.ToolsCalled = append([]string(nil), e.ToolsCalled...)
	redactExchange(&e, nil)
	return e
}

// redactExchange masks secrets in every text field a client or upstream controls: patterns,
// and the secrets r knows (a nil r knows none).
func redactExchange(e *Exchange, r *Redactor) {
	for i := range e.ToolsCalled {
		e.ToolsCalled[i] = r.RedactString(e.ToolsCalled[i])
	}
	for _, f := range []*string{&e.Path, &e.UserAgent, &e.AccountName, &e.SessionID, &e.Model, &e.ModelSent, &e.ErrorType, &e.ErrorMessage, &e.StopReason} {
		*f = r.RedactString(*f)
	}
	for i := range e.Attempts {
		e.Attempts[i].Error = r.RedactString(e.Attempts[i].Error)
	}
	e.Compaction = redactSteps(e.Compaction, r)
	if len(e.ClientHeaders) > 0 { // a copy: the map is the caller's
		h := make(map[string]string, len(e.ClientHeaders))
		for k, v := range e.ClientHeaders {
			h[k] = r.RedactString(v)
		}
		e.ClientHeaders = h
	}
}

// redactSteps masks the text of the steps' edits (previews hold the request's own text: a
// pasted key, a tool's output). It copies the steps and their edits before the first change,
// so the caller's are never written, and returns steps itself when nothing matched: most
// ledgers hold no secret, and copying every one would cost the writer for nothing.
func redactSteps(steps []CompactionStep, r *Redactor) []CompactionStep {
	copied := false
	for i := range steps {
		editsCopied := false
		for j := range steps[i].Edits {
			ed := steps[i].Edits[j]
			before, after, note := r.RedactString(ed.Before), r.RedactString(ed.After), r.RedactString(ed.Note)
			if before == ed.Before && after == ed.After && note == ed.Note {
				continue
			}
			if !copied {
				steps, copied = slices.Clone(steps), true
			}
			if !editsCopied {
				steps[i].Edits, editsCopied = slices.Clone(steps[i].Edits), true
			}
			ed.Before, ed.After, ed.Note = before, after, note
			steps[i].Edits[j] = ed
		}
	}
	return steps
}

// clientHeadersColumn is the client_headers column: the headers as a JSON object with sorted
// keys, ” when none.
func clientHeadersColumn(h map[string]string) string {
	if len(h) == 0 {
		return ""
	}
	b, _ := json.Marshal(h) // a map[string]string always encodes; keys come out sorted
	return string(b)
}

// exchangeColumns are the columns of a row write, bound in this order (exchangeWriter.write).
const exchangeColumns = `(
	id, state, route, method, path, user_agent, remote_addr, session_id, model, model_sent, stream,
	account_id, account_name, start_ns, first_byte_ns, end_ns, duration_ns, ttfb_ns,
	status, error_type, error_message, stream_outcome, stop_reason,
	input_tokens, output_tokens, cache_read_tokens, cache_write_tokens,
	context_limit, tokens_before, tokens_after, pressure_before, pressure_after,
	layers, tokens_saved, signature_recoveries, cross_model_dropped, signatures, tool_use_ids,
	bytes_in, bytes_out, has_bodies, bodies_truncated, attempts, client_protocol, upstream_protocol,
	parent_id, tools, tool_tokens, tools_called, replay_of, context_limit_source, client_headers)
VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`

// insertExchange writes a row the table does not hold yet, which is most of them: a request
// that started and finished within one batch is written once, finished. Its seq is the
// statement's last insert id. It is tried first because it costs a third less than the
// upsert (no RETURNING, no statement journal), and a row that exists already (its started
// record was written by an earlier batch) changes nothing and falls to the upsert.
const insertExchange = `INSERT OR IGNORE INTO exchanges ` + exchangeColumns

// upsertExchange is the row write. A finished record replaces the started one in place, so
// the row keeps its seq (and a paging cursor never sees it twice); a started record arriving
// after its finished one (two writers racing at shutdown) changes nothing.
const upsertExchange = `INSERT INTO exchanges ` + exchangeColumns + `
ON CONFLICT (id) DO UPDATE SET
	state=excluded.state, route=excluded.route, method=excluded.method, path=excluded.path,
	user_agent=excluded.user_agent, remote_addr=excluded.remote_addr, session_id=excluded.session_id,
	model=excluded.model, model_sent=excluded.model_sent, stream=excluded.stream,
	account_id=excluded.account_id, account_name=excluded.account_name,
	start_ns=excluded.start_ns, first_byte_ns=excluded.first_byte_ns, end_ns=excluded.end_ns,
	duration_ns=excluded.duration_ns, ttfb_ns=excluded.ttfb_ns, status=excluded.status,
	error_type=excluded.error_type, error_message=excluded.error_message,
	stream_outcome=excluded.stream_outcome, stop_reason=excluded.stop_reason,
	input_tokens=excluded.input_tokens, output_tokens=excluded.output_tokens,
	cache_read_tokens=excluded.cache_read_tokens, cache_write_tokens=excluded.cache_write_tokens,
	context_limit=excluded.context_limit, tokens_before=excluded.tokens_before,
	tokens_after=excluded.tokens_after, pressure_before=excluded.pressure_before,
	pressure_after=excluded.pressure_after, layers=excluded.layers, tokens_saved=excluded.tokens_saved,
	signature_recoveries=excluded.signature_recoveries, cross_model_dropped=excluded.cross_model_dropped,
	signatures=excluded.signatures, tool_use_ids=excluded.tool_use_ids,
	bytes_in=excluded.bytes_in, bytes_out=excluded.bytes_out,
	has_bodies=max(has_bodies, excluded.has_bodies), bodies_truncated=excluded.bodies_truncated,
	attempts=excluded.attempts, client_protocol=excluded.client_protocol, upstream_protocol=excluded.upstream_protocol,
	parent_id=excluded.parent_id, tools=excluded.tools, tool_tokens=excluded.tool_tokens, tools_called=excluded.tools_called,
	replay_of=excluded.replay_of, context_limit_source=excluded.context_limit_source,
	client_headers=excluded.client_headers
WHERE exchanges.state != 'finished' OR excluded.state = 'finished'
RETURNING seq`

// WriteExchanges records a batch in one transaction: new rows, started rows becoming finished,
// their attempts, compaction steps and bodies. Every text field and body is redacted here, so
// no caller can store a secret by forgetting to; bodies are compressed. The caller's values
// are not modified.
func (st *Store) WriteExchanges(ctx context.Context, batch []Exchange) error {
	if len(batch) == 0 {
		return nil
	}
	// One batch at a time uses the body memory (the writer goroutine and a final flush).
	st.bodies.mu.Lock()
	defer st.bodies.mu.Unlock()
	if err := st.bodies.prepare(ctx, st.db, writerStatements()); err != nil {
		return fmt.Errorf("write exchanges: prepare: %w", err)
	}
	tx, err := st.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("write exchanges: %w", err)
	}
	defer st.rollback(tx)
	w, err := prepareWriter(ctx, tx, st.bodies)
	if err != nil {
		return fmt.Errorf("write exchanges: %w", err)
	}
	defer w.close()
	w.redactor = st.redactor
	// The statements run without ctx's cancellation, which is checked between exchanges
	// instead: given a context that can be cancelled, the driver starts a goroutine per
	// statement to interrupt it, and that cost as much as a small exchange's row. The
	// transaction holds the write lock from BEGIN (_txlock=immediate), so no statement in it
	// waits for another connection.
	stmtCtx := context.WithoutCancel(ctx)
	// A digest reuses by hash the chunks an earlier digest of its session cut: those are
	// stored first, whatever order the batch's rows take.
	for i := range batch {
		if b := batch[i].Bodies; b != nil && b.RequestDigest != nil {
			if err := w.chunks.storeDigestChunks(stmtCtx, b.RequestDigest); err != nil {
				return fmt.Errorf("write exchange %s: body: %w", batch[i].ID, err)
			}
		}
	}
	for i := range batch {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("write exchanges: %w", err)
		}
		if err := w.write(stmtCtx, batch[i]); err != nil {
			return fmt.Errorf("write exchange %s: %w", batch[i].ID, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("write exchanges: commit: %w", err)
	}
	w.chunks.commit()
	st.bodies.lost += w.lost
	return nil
}

const (
	insertStep   = `INSERT OR REPLACE INTO exchange_compaction (exchange_seq, n, layer, tokens_before, tokens_after, raw_before, raw_after, items, duration_ns, cache_hit, edits, rewrite, deferred) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)`
	upsertBodies = `INSERT INTO exchange_bodies (exchange_seq, request, forwarded, reply) VALUES (?,?,?,?)
			ON CONFLICT (exchange_seq) DO UPDATE SET request=excluded.request, forwarded=excluded.forwarded, reply=excluded.reply`
)

// writerStatements are every statement a batch write runs, prepared before its transaction
// begins (bodyMemory.prepare).
func writerStatements() []string {
	return []string{insertExchange, upsertExchange, insertStep, upsertBodies, lookupChunk, insertChunk, sweepGeneration}
}

type exchangeWriter struct {
	insert, upsert, step, body *sql.Stmt
	redactor                   *Redactor // the store's; nil masks patterns only
	chunks                     *bodyWriter
	lost                       int64 // digested bodies that could not be stored (putDigest)
}

func prepareWriter(ctx context.Context, tx *sql.Tx, mem *bodyMemory) (*exchangeWriter, error) {
	chunks, err := newBodyWriter(ctx, tx, mem)
	if err != nil {
		return nil, err
	}
	w := &exchangeWriter{chunks: chunks}
	for _, p := range []struct {
		dst  **sql.Stmt
		text string
	}{
		{&w.insert, insertExchange},
		{&w.upsert, upsertExchange},
		{&w.step, insertStep},
		{&w.body, upsertBodies},
	} {
		stmt, err := mem.prepared(ctx, tx, p.text)
		if err != nil {
			w.close()
			return nil, fmt.Errorf("prepare: %w", err)
		}
		*p.dst = stmt
	}
	return w, nil
}

func (w *exchangeWriter) close() {
	for _, s := range []*sql.Stmt{w.insert, w.upsert, w.step, w.body} {
		if s != nil {
			s.Close() //nolint:errcheck // closing a prepared statement of a finished tx
		}
	}
	w.chunks.close()
}

func (w *exchangeWriter) write(ctx context.Context, e Exchange) error {
	e.Attempts = append([]Attempt(nil), e.Attempts...) // redaction must not touch the caller's
	e.ToolsCalled = append([]string(nil), e.ToolsCalled...)
	redactExchange(&e, w.redactor)
	hasBodies := !e.Bodies.empty()
	toolIDs, err := json.Marshal(nonNil(e.ToolUseIDs))
	if err != nil {
		return err
	}
	toolsCalled := appendJSONStrings(nil, nonNil(e.ToolsCalled))
	attempts := ""
	if e.State == "finished" {
		attempts = attemptsColumn(e.Attempts)
	}
	args := []any{
		e.ID, e.State, e.Route, e.Method, e.Path, e.UserAgent, e.RemoteAddr, e.SessionID, e.Model, e.ModelSent, e.Stream,
		e.AccountID, e.AccountName, nanos(e.Start), nanos(e.FirstByte), nanos(e.End), int64(e.Duration), int64(e.TTFB),
		e.Status, e.ErrorType, e.ErrorMessage, e.StreamOutcome, e.StopReason,
		e.InputTokens, e.OutputTokens, e.CacheReadTokens, e.CacheWriteTokens,
		e.ContextLimit, e.TokensBefore, e.TokensAfter, e.PressureBefore, e.PressureAfter,
		strings.Join(e.Layers, ","), e.TokensSaved, e.SignatureRecoveries, e.CrossModelDropped, e.Signatures, string(toolIDs),
		e.BytesIn, e.BytesOut, hasBodies, e.BodiesTruncated, attempts, e.ClientProtocol, e.UpstreamProtocol,
		e.ParentID, e.Tools, e.ToolTokens, string(toolsCalled), e.ReplayOf, e.ContextLimitSource, clientHeadersColumn(e.ClientHeaders),
	}
	res, err := w.insert.ExecContext(ctx, args...)
	if err != nil {
		return fmt.Errorf("insert: %w", err)
	}
	var seq int64
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("insert: %w", err)
	} else if n == 1 {
		if seq, err = res.LastInsertId(); err != nil {
			return fmt.Errorf("insert: %w", err)
		}
	} else {
		err = w.upsert.QueryRowContext(ctx, args...).Scan(&seq)
		if errors.Is(err, sql.ErrNoRows) {
			return nil // a late "started" record never overwrites the finished one
		}
		if err != nil {
			return fmt.Errorf("upsert: %w", err)
		}
	}
	if e.State != "finished" {
		return nil // attempts, steps and bodies are only known at the end
	}
	// A finished row is written once (a failed batch rolls back whole), so its steps are new;
	// OR REPLACE keeps a repeated write harmless without a DELETE per row.
	for i, c := range e.Compaction {
		edits := "" // no edits: as on the rows written before the ledger
		if len(c.Edits) > 0 {
			edits = string(appendEdits(nil, c.Edits))
		}
		if _, err := w.step.ExecContext(ctx, seq, i, c.Layer, c.TokensBefore, c.TokensAfter, c.RawBefore, c.RawAfter, c.Items, int64(c.Duration), c.CacheHit, edits, c.Rewrite, c.Deferred); err != nil {
			return fmt.Errorf("compaction step %d: %w", i, err)
		}
	}
	if !hasBodies {
		return nil
	}
	var blobs [3][]byte
	if d := e.Bodies.RequestDigest; d != nil {
		col, lost, err := w.chunks.putDigest(ctx, 0, d)
		if err != nil {
			return fmt.Errorf("body: %w", err)
		}
		if lost {
			w.lost++
		}
		blobs[0] = col
	}
	for i, text := range []string{e.Bodies.Request, e.Bodies.Forwarded, e.Bodies.Reply} {
		if text == "" {
			continue
		}
		seq := bodySequence{session: e.SessionID, exchange: e.ID}
		switch i {
		case 0:
			seq.repeats, seq.cuts = e.Bodies.RequestRepeats, e.Bodies.RequestMessageEnds
		case 2:
			seq.session = "" // a reply does not repeat the previous one
		}
		// put reads the text in place: a copy of an 800 KB body was the largest cost left
		// of a large exchange.
		if blobs[i], err = w.chunks.put(ctx, i, seq, unsafe.Slice(unsafe.StringData(text), len(text)), w.redactor); err != nil {
			return fmt.Errorf("body: %w", err)
		}
	}
	if _, err := w.body.ExecContext(ctx, seq, blobs[0], blobs[1], blobs[2]); err != nil {
		return fmt.Errorf("bodies: %w", err)
	}
	return nil
}

// attemptRow is one attempt in an exchange's attempts column (migrations/007), named as the
// columns of exchange_attempts, which holds the attempts of rows written before it.
type attemptRow struct {
	AccountID   int64  `json:"account_id"`
	AccountName string `json:"account_name"`
	Status      int    `json:"status"`
	Error       string `json:"error"`
	StartNs     int64  `json:"start_ns"`
	DurationNs  int64  `json:"duration_ns"`
}

// attemptsColumn encodes a finished exchange's attempts for its row, as json.Marshal encodes
// []attemptRow (TestAttemptsColumnIsEncodingJSON) but without reflection: "[]" when it had
// none, so that only rows from before migration 007 hold ”.
func attemptsColumn(as []Attempt) string {
	b := make([]byte, 0, 160*len(as)+2)
	b = append(b, '[')
	for i, a := range as {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendInt(append(b, `{"account_id":`...), a.AccountID)
		b = appendJSONString(append(b, `,"account_name":`...), a.AccountName)
		b = appendInt(append(b, `,"status":`...), int64(a.Status))
		b = appendJSONString(append(b, `,"error":`...), a.Error)
		b = appendInt(append(b, `,"start_ns":`...), nanos(a.Start))
		b = append(appendInt(append(b, `,"duration_ns":`...), int64(a.Duration)), '}')
	}
	return string(append(b, ']'))
}

// parseAttempts decodes an attempts column.
func parseAttempts(col string) ([]Attempt, error) {
	var rows []attemptRow
	if err := json.Unmarshal([]byte(col), &rows); err != nil {
		return nil, fmt.Errorf("attempts: %w", err)
	}
	as := make([]Attempt, len(rows))
	for i, r := range rows {
		as[i] = Attempt{AccountID: r.AccountID, AccountName: r.AccountName, Status: r.Status, Error: r.Error, Start: fromNanos(r.StartNs), Duration: time.Duration(r.DurationNs)}
	}
	return as, nil
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
