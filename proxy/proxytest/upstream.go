// Package proxytest is a scripted Anthropic-protocol upstream for Longhaul's
// tests and benchmarks: real SSE framing, real error shapes, and knobs for
// the failure modes a proxy must survive (slow first byte, stalls, dropped
// connections, in-band errors, client hang-ups).
package proxytest

import (
	"bytes"
	"context"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"time"

	"longhaul/proxy/anthropic"
)

// maxRecords bounds the Received history so long benchmarks stay flat in memory.
const maxRecords = 1000

// Upstream is a scripted Anthropic API on 127.0.0.1 (an httptest.Server).
// It needs no testing.T, so benchmarks can use it too.
//
// Routes: POST /v1/messages (scripted), POST /v1/messages/count_tokens,
// GET /v1/models; anything else is a 404 not_found_error.
type Upstream struct {
	URL string

	srv  *httptest.Server
	done chan struct{} // closed by Close; wakes every sleeping/stalled handler

	canceledOnce sync.Once
	canceled     chan struct{}

	mu           sync.Mutex
	queue        []Reply
	def          Reply
	recs         []*Received // ring buffer of at most maxRecords
	start        int         // index of the oldest record once the ring is full
	recordBodies bool
	gate         chan struct{} // stalled handlers wait on it; Release closes it
	gateOpen     bool
	closed       bool
	sim          Simulation
}

// Received is one request as the upstream saw it.
type Received struct {
	Method, Path, RawQuery string
	Header                 http.Header
	Body                   []byte // nil when SetRecordBodies(false)
	// Canceled is set if the client hung up while the handler was still running.
	Canceled bool
	// Tokens is the upstream's count of a /v1/messages request (CountTokens) and Usage the
	// usage its reply reported, when the upstream simulates (SetSimulation); else 0 and nil.
	// The Chat upstream records its count (CountChatTokens) when it has a window.
	Tokens int
	Usage  *Usage
}

// Reply scripts one response to POST /v1/messages.
//
// What is sent: Body if non-nil (as-is, application/json); otherwise Message
// (SSE if the request has "stream": true, else the JSON Message); otherwise,
// for Status >= 400, an Anthropic error JSON for that status; otherwise the
// default reply's Message.
//
// Event-counted knobs (StallAfter, ErrorEventAfter, FailAfter) count SSE
// events written; a value >= the number of events has no effect. When several
// fire at the same count the order is stall, then error event, then failure.
// For a non-stream Message: StallAfter>0 flushes the headers then stalls
// before the body; FailAfter>0 sends half the body then drops the connection;
// ErrorEventAfter is ignored.
type Reply struct {
	Status          int           // 0 = 200
	Header          http.Header   // extra headers; they replace the defaults of the same name
	Body            []byte        // raw JSON body, sent as-is
	Message         *Message      // successful message
	FirstByteDelay  time.Duration // wait before writing headers
	EventGap        time.Duration // wait between SSE events
	StallAfter      int           // after N events, block until Release, client hang-up or Close
	FailAfter       int           // after N events, drop the connection (client sees unexpected EOF)
	ErrorEventAfter int           // after N events, send an in-band overloaded_error event and end
	ErrorEventFirst bool          // answer 200, then an overloaded_error event as the first event, and end
}

// NewUpstream starts an upstream whose default reply is a short text message.
func NewUpstream() *Upstream {
	u := &Upstream{
		done:         make(chan struct{}),
		canceled:     make(chan struct{}),
		def:          Reply{Message: TextMessage(DefaultModel, "Hello from proxytest.")},
		recordBodies: true,
		gate:         make(chan struct{}),
	}
	u.srv = httptest.NewUnstartedServer(u)
	// Aborted connections and client hang-ups are expected here; keep benchmark output clean.
	u.srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	u.srv.Start()
	u.URL = u.srv.URL
	return u
}

// Close releases every stalled or sleeping handler, drops open connections
// and shuts the server down. It is safe to call more than once.
func (u *Upstream) Close() {
	u.mu.Lock()
	if u.closed {
		u.mu.Unlock()
		return
	}
	u.closed = true
	close(u.done)
	u.mu.Unlock()
	u.srv.CloseClientConnections()
	u.srv.Close()
}

// Enqueue appends scripted replies for POST /v1/messages, served in FIFO
// order; when the queue is empty the default reply is served. It also re-arms
// the stall gate if Release had opened it.
func (u *Upstream) Enqueue(replies ...Reply) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.queue = append(u.queue, replies...)
	u.rearmLocked()
}

// SetDefault sets the reply used when the queue is empty (and re-arms the
// stall gate, like Enqueue).
func (u *Upstream) SetDefault(r Reply) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.def = r
	u.rearmLocked()
}

// Release un-stalls every reply currently stalled. The gate then stays open,
// so later stalls pass straight through, until the next Enqueue or SetDefault
// closes it again. That way a Release that races ahead of the stall still wins.
func (u *Upstream) Release() {
	u.mu.Lock()
	defer u.mu.Unlock()
	if !u.gateOpen {
		close(u.gate)
		u.gateOpen = true
	}
}

func (u *Upstream) rearmLocked() {
	if u.gateOpen {
		u.gate = make(chan struct{})
		u.gateOpen = false
	}
}

// SetRecordBodies turns body recording on (the default) or off. With it off
// the body is read into a pooled buffer, so 800 KB requests cost no garbage.
func (u *Upstream) SetRecordBodies(on bool) {
	u.mu.Lock()
	u.recordBodies = on
	u.mu.Unlock()
}

// Requests returns a copy of the received requests, oldest first (at most
// the last 1000).
func (u *Upstream) Requests() []Received {
	u.mu.Lock()
	defer u.mu.Unlock()
	out := make([]Received, 0, len(u.recs))
	for _, r := range u.recs[u.start:] {
		out = append(out, *r)
	}
	for _, r := range u.recs[:u.start] {
		out = append(out, *r)
	}
	return out
}

// LastRequest returns the most recent request, or a zero Received.
func (u *Upstream) LastRequest() Received {
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.recs) == 0 {
		return Received{}
	}
	i := len(u.recs) - 1
	if len(u.recs) == maxRecords {
		i = (u.start + maxRecords - 1) % maxRecords
	}
	return *u.recs[i]
}

// WaitCanceled reports whether some request's context was cancelled by the
// client hanging up while its handler ran, waiting up to timeout for it. It
// is sticky: once true it stays true for this Upstream.
func (u *Upstream) WaitCanceled(timeout time.Duration) bool {
	select { // checked first so WaitCanceled(0) is a reliable poll
	case <-u.canceled:
		return true
	default:
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-u.canceled:
		return true
	case <-t.C:
		return false
	}
}

func (u *Upstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, recycle := u.readBody(r)
	defer recycle()
	rec := u.record(r, body)
	// Runs only if the context ends while we are still in the handler, i.e.
	// the client hung up; the deferred stop disarms it on normal return.
	stop := context.AfterFunc(r.Context(), func() { u.markCanceled(rec) })
	defer stop()

	switch {
	case r.URL.Path == "/v1/messages" && r.Method == http.MethodPost:
		u.serveMessages(w, r, body, rec)
	case r.URL.Path == "/v1/messages/count_tokens" && r.Method == http.MethodPost:
		u.serveCountTokens(w, body)
	case r.URL.Path == "/v1/models" && r.Method == http.MethodGet:
		setBaseHeaders(w.Header(), nextRequestID())
		w.Header().Set("Content-Type", "application/json")
		w.Write(modelsJSON)
	default:
		id := nextRequestID()
		setBaseHeaders(w.Header(), id)
		writeError(w, http.StatusNotFound, "not_found_error", "Not found: "+r.Method+" "+r.URL.Path, id)
	}
}

var bodyPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

func (u *Upstream) readBody(r *http.Request) ([]byte, func()) {
	u.mu.Lock()
	keep := u.recordBodies
	u.mu.Unlock()
	hint := int(min(max(r.ContentLength, 0), 64<<20)) + bytes.MinRead
	if keep {
		// Sized from Content-Length so an 800 KB body is one allocation; reading
		// to EOF also lets net/http notice a later client hang-up.
		b := bytes.NewBuffer(make([]byte, 0, hint))
		b.ReadFrom(r.Body)
		return b.Bytes(), func() {}
	}
	b := bodyPool.Get().(*bytes.Buffer)
	b.Reset()
	b.Grow(hint)
	b.ReadFrom(r.Body)
	return b.Bytes(), func() { bodyPool.Put(b) }
}

func (u *Upstream) record(r *http.Request, body []byte) *Received {
	rec := &Received{Method: r.Method, Path: r.URL.Path, RawQuery: r.URL.RawQuery, Header: r.Header.Clone()}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.recordBodies {
		rec.Body = body
	}
	if len(u.recs) < maxRecords {
		u.recs = append(u.recs, rec)
	} else {
		u.recs[u.start] = rec
		u.start = (u.start + 1) % maxRecords
	}
	return rec
}

func (u *Upstream) markCanceled(rec *Received) {
	u.mu.Lock()
	if u.closed { // Close drops connections itself; that is not a client hang-up
		u.mu.Unlock()
		return
	}
	rec.Canceled = true
	u.mu.Unlock()
	u.canceledOnce.Do(func() { close(u.canceled) })
}

func (u *Upstream) next() Reply {
	u.mu.Lock()
	defer u.mu.Unlock()
	rep := u.def
	if len(u.queue) > 0 {
		rep = u.queue[0]
		u.queue[0] = Reply{}
		u.queue = u.queue[1:]
	}
	if rep.Body == nil && rep.Message == nil && rep.Status < 400 {
		rep.Message = u.def.Message
		if rep.Message == nil {
			rep.Message = builtinMessage
		}
	}
	return rep
}

var builtinMessage = TextMessage(DefaultModel, "Hello from proxytest.")

// serveCountTokens answers /v1/messages/count_tokens: the tokenizer's count when the upstream
// simulates, else a quarter of the body's bytes.
func (u *Upstream) serveCountTokens(w http.ResponseWriter, body []byte) {
	id := nextRequestID()
	setBaseHeaders(w.Header(), id)
	n := max(1, len(body)/4)
	if u.simulation().counting() {
		var err error
		if n, err = CountTokens(body); err != nil {
			writeError(w, http.StatusBadRequest, "invalid_request_error", err.Error(), id)
			return
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write([]byte(`{"input_tokens":` + strconv.Itoa(n) + `}`))
}

func (u *Upstream) serveMessages(w http.ResponseWriter, r *http.Request, body []byte, rec *Received) {
	ctx := r.Context()
	sim := u.simulation()
	var p *prompt
	if sim.counting() {
		var err error
		if p, err = parsePrompt(body); err != nil {
			id := nextRequestID()
			setBaseHeaders(w.Header(), id)
			writeError(w, http.StatusBadRequest, "invalid_request_error", err.Error(), id)
			return
		}
		u.noteTokens(rec, p.tokens(), nil)
		if msg := sim.refusal(p); msg != "" {
			id := nextRequestID()
			setBaseHeaders(w.Header(), id)
			writeError(w, http.StatusBadRequest, "invalid_request_error", msg, id)
			return
		}
	}
	rep := u.next()
	if p != nil && rep.Body == nil && rep.Message != nil {
		usage := sim.usage(p, rep.Message.Usage)
		rep.Message = rep.Message.withUsage(usage)
		u.noteTokens(rec, p.tokens(), &usage)
	}
	if rep.FirstByteDelay > 0 && !u.sleep(ctx, rep.FirstByteDelay) {
		return
	}
	h := w.Header()
	id := nextRequestID()
	setBaseHeaders(h, id)
	status := rep.Status
	if status == 0 {
		status = http.StatusOK
	}
	switch {
	case rep.Body != nil:
		h.Set("Content-Type", "application/json")
		copyHeaders(h, rep.Header)
		w.WriteHeader(status)
		w.Write(rep.Body)
	case rep.Message == nil:
		copyHeaders(h, rep.Header)
		writeError(w, status, anthropic.ErrorType(status), http.StatusText(status), id)
	case streamFlag(body):
		u.writeStream(w, ctx, rep, status)
	default:
		u.writeJSON(w, ctx, rep, status)
	}
}

// streamFlag reports whether the request's top-level "stream" is true (the
// last one when the key repeats, as decoders read it; false for malformed
// JSON), with the proxy's scanner: a full decode of an 800 KB body would
// dominate the large-body benchmarks.
func streamFlag(body []byte) bool { return string(anthropic.MemberValue(body, "stream")) == "true" }

func (u *Upstream) writeStream(w http.ResponseWriter, ctx context.Context, rep Reply, status int) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	copyHeaders(h, rep.Header)
	w.WriteHeader(status)
	fl, _ := w.(http.Flusher)
	flush := func() {
		if fl != nil {
			fl.Flush()
		}
	}
	if rep.ErrorEventFirst {
		w.Write(overloadedEvent)
		flush()
		return
	}
	for i, ev := range rep.Message.render().events {
		if i > 0 && rep.EventGap > 0 && !u.sleep(ctx, rep.EventGap) {
			return
		}
		if _, err := w.Write(ev); err != nil {
			return
		}
		flush()
		n := i + 1
		if n == rep.StallAfter && !u.stall(ctx) {
			return
		}
		if n == rep.ErrorEventAfter {
			w.Write(overloadedEvent)
			flush()
			return
		}
		if n == rep.FailAfter {
			// Aborting the handler makes net/http close the connection without
			// the chunked terminator: a mid-stream upstream failure.
			panic(http.ErrAbortHandler)
		}
	}
}

func (u *Upstream) writeJSON(w http.ResponseWriter, ctx context.Context, rep Reply, status int) {
	body := rep.Message.render().json
	h := w.Header()
	h.Set("Content-Type", "application/json")
	copyHeaders(h, rep.Header)
	if rep.FailAfter > 0 {
		// Promise the full length, deliver half, then drop the connection.
		h.Set("Content-Length", strconv.Itoa(len(body)))
	}
	w.WriteHeader(status)
	if rep.StallAfter > 0 {
		if fl, ok := w.(http.Flusher); ok {
			fl.Flush()
		}
		if !u.stall(ctx) {
			return
		}
	}
	if rep.FailAfter > 0 {
		w.Write(body[:len(body)/2])
		if fl, ok := w.(http.Flusher); ok {
			fl.Flush()
		}
		panic(http.ErrAbortHandler)
	}
	w.Write(body)
}

// sleep waits d; false means the client left or the upstream closed.
func (u *Upstream) sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	case <-u.done:
		return false
	}
}

// stall blocks until Release; false means the client left or the upstream closed.
func (u *Upstream) stall(ctx context.Context) bool {
	u.mu.Lock()
	g := u.gate
	u.mu.Unlock()
	select {
	case <-g:
		return true
	case <-ctx.Done():
		return false
	case <-u.done:
		return false
	}
}

func copyHeaders(dst, src http.Header) {
	for k, v := range src {
		dst[http.CanonicalHeaderKey(k)] = append([]string(nil), v...)
	}
}
