package proxy

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"longhaul/proxy/pool"
)

// Sending a session's next turn early. The proxy must read a request whole before it knows
// what to send (the engine may rewrite it), so a bare reverse proxy, which streams the body
// through, answered an 800 KB request ~0.5 ms sooner. Most turns of a long session are
// forwarded as they came, to the account the session is bound to; once the recall finds the
// body's first message repeats the session's previous turn, which was forwarded as it came,
// the request goes to that account while the body still arrives, byte by byte as it is read.
//
// The upstream never gets a request the proxy did not decide to send: the last byte is held
// back until the attempt loop has picked that very account and found nothing to rewrite
// (earlySend.take). Otherwise the send is abandoned — the connection is closed short of its
// Content-Length, so the upstream never reads a whole request — and the request takes the
// usual path.

// turnNote is what the recall keeps beside a remembered body for its session's next turn.
type turnNote struct {
	session, model string
	// asIs: the request was sent upstream as received (nothing rewritten, no model renamed).
	asIs atomic.Bool
}

// errEarlyAbandoned ends a send the request did not take.
var errEarlyAbandoned = errors.New("request not sent: it took another path")

// earlySend is a request sent upstream while its body still arrives.
type earlySend struct {
	acct     pool.Account
	body     *growingBody
	ctx      context.Context
	cancel   context.CancelCauseFunc
	deadline *time.Timer
	start    time.Time
	done     chan struct{}
	resp     *http.Response
	err      error
	taken    bool
}

// sendEarly starts the request to acct with the body as it arrives. It returns nil when the
// request cannot be built.
func (s *Server) sendEarly(r *http.Request, cfg *Config, c *call, acct pool.Account, model string, body *growingBody) *earlySend {
	ctx, cancel := context.WithCancelCause(r.Context())
	up := upstreamFor(acct.KindOf())
	uc := &upstreamCall{route: "messages", model: model, baseURL: acct.BaseURL}
	out, err := outboundRequest(ctx, r, c, acct, up, uc, nil)
	if err != nil {
		cancel(err)
		return nil
	}
	out.Body, out.ContentLength = body.reader(), int64(len(body.buf))
	out.GetBody = func() (io.ReadCloser, error) { return body.reader(), nil }
	e := &earlySend{acct: acct, body: body, ctx: ctx, cancel: cancel, start: s.now(), done: make(chan struct{})}
	// As attempt's: the wait for the first event of a stream, or the whole of a non-stream reply.
	e.deadline = time.AfterFunc(cfg.RequestTimeout, func() { cancel(errFirstEventTimeout) })
	go func() {
		defer close(e.done)
		e.resp, e.err = s.transport.RoundTrip(out)
	}()
	return e
}

// take hands the send to the attempt of acct when the body it sends is the client's own: the
// held-back byte goes, and the attempt owns the context, the deadline and the reply. Otherwise
// the send is abandoned. It is called once, by the first attempt.
func (e *earlySend) take(acct pool.Account, sendsClientBody bool) bool {
	if e == nil || e.taken {
		return false
	}
	if acct.ID != e.acct.ID || acct.BaseURL != e.acct.BaseURL || acct.Secret != e.acct.Secret || !sendsClientBody {
		e.abandon()
		return false
	}
	e.taken = true
	e.body.release()
	return true
}

// wait returns the upstream's reply (its headers) or the failure to get one.
func (e *earlySend) wait() (*http.Response, error) {
	<-e.done
	if e.err != nil {
		if cause := context.Cause(e.ctx); cause != nil {
			e.err = cause
		}
	}
	return e.resp, e.err
}

// abandon ends a send nobody took and waits for it, so nothing outlives the request. Safe on
// nil and after take (then it does nothing).
func (e *earlySend) abandon() {
	if e == nil || e.taken {
		return
	}
	e.taken = true
	e.body.fail(errEarlyAbandoned)
	e.cancel(errEarlyAbandoned)
	e.deadline.Stop()
	<-e.done
	if e.resp != nil {
		e.resp.Body.Close()
	}
}

// earlyTarget returns the account and model to send a session's next turn to early, from the
// note of the request it repeats: the account the session is bound to when that request went
// there as received, it speaks the client's protocol, and the model map renames nothing for it.
func (s *Server) earlyTarget(cfg *Config, c *call, note *turnNote) (pool.Account, string, bool) {
	if note == nil || !note.asIs.Load() {
		return pool.Account{}, "", false
	}
	acct, ok := s.pool.Bound(note.session, s.now())
	if !ok || acct.KindOf() != c.proto.nativeKind() {
		return pool.Account{}, "", false
	}
	if sent, renamed := pool.MapModel(cfg.ModelMap, note.model, acct); renamed && sent != note.model {
		return pool.Account{}, "", false
	}
	return acct, note.model, true
}

// growingBody is a request body's buffer as it fills from the client: readers get the bytes
// read so far and wait for more, all but the last byte until release (the send was decided).
type growingBody struct {
	buf      []byte
	src      *requestBody
	mu       sync.Mutex
	more     sync.Cond
	avail    int
	released bool
	err      error
}

func newGrowingBody(src *requestBody) *growingBody {
	g := &growingBody{buf: src.buf, src: src}
	g.more.L = &g.mu
	return g
}

// publish says the first n bytes have arrived.
func (g *growingBody) publish(n int) {
	g.mu.Lock()
	g.avail = n
	g.mu.Unlock()
	g.more.Broadcast()
}

// release lets readers have the last byte.
func (g *growingBody) release() {
	g.mu.Lock()
	g.released = true
	g.mu.Unlock()
	g.more.Broadcast()
}

// fail ends every reader's wait with err.
func (g *growingBody) fail(err error) {
	g.mu.Lock()
	if g.err == nil {
		g.err = err
	}
	g.mu.Unlock()
	g.more.Broadcast()
}

// reader returns a reader from the start, holding a reference to the buffer until closed.
func (g *growingBody) reader() io.ReadCloser {
	g.src.retain()
	return &growingReader{g: g}
}

type growingReader struct {
	g    *growingBody
	off  int
	once sync.Once
}

// arrived waits until bytes past off may be read and returns where they end. The bytes before
// that end are final: the client's body is only ever written past what was published.
func (g *growingBody) arrived(off int) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for {
		if g.err != nil {
			return 0, g.err
		}
		limit := g.avail
		if !g.released {
			limit = min(limit, len(g.buf)-1)
		}
		if off < limit {
			return limit, nil
		}
		g.more.Wait()
	}
}

func (r *growingReader) Read(p []byte) (int, error) {
	if r.off >= len(r.g.buf) {
		return 0, io.EOF
	}
	limit, err := r.g.arrived(r.off)
	if err != nil {
		return 0, err
	}
	n := copy(p, r.g.buf[r.off:limit])
	r.off += n
	return n, nil
}

// writeSpans writes up to limit bytes to w straight from the buffer as they arrive
// (directConn).
func (r *growingReader) writeSpans(w io.Writer, limit int64) (int64, error) {
	var total int64
	for total < limit && r.off < len(r.g.buf) {
		end, err := r.g.arrived(r.off)
		if err != nil {
			return total, err
		}
		end = min(end, r.off+int(limit-total))
		m, err := w.Write(r.g.buf[r.off:end])
		r.off += m
		total += int64(m)
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

func (r *growingReader) Close() error {
	r.once.Do(r.g.src.unref)
	return nil
}

// publishingReader reads the client's body into the buffer and publishes each byte count.
// watch, when set, is told each count until it returns true.
type publishingReader struct {
	r     io.Reader
	g     *growingBody
	total int
	watch func(arrived int) bool
}

func (p *publishingReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	if n > 0 {
		p.total += n
		p.g.publish(p.total)
		if p.watch != nil && p.watch(p.total) {
			p.watch = nil
		}
	}
	if err != nil && err != io.EOF {
		p.g.fail(err)
	}
	return n, err
}

// Another protocol's client (Chat Completions, Responses) has no recall: its peek scans the
// whole body. What tells a session's next turn there is its start: the first earlyPrefix bytes
// (the model, the system prompt, the first messages) equal to a recent request's of the same
// protocol. A body that starts alike but belongs elsewhere only costs an abandoned send.
const (
	minEarlyBody = 64 << 10
	earlyPrefix  = 32 << 10
	maxPrefixes  = 8
)

// recentPrefixes keeps the start of recent requests of other protocols, with their notes.
type recentPrefixes struct {
	mu      sync.Mutex
	entries []recentPrefix // most recent first
}

type recentPrefix struct {
	protocol string
	start    []byte // a copy: the request's own buffer goes back to the pool
	note     *turnNote
}

// match returns the note of the most recent request of protocol that started with start.
func (rp *recentPrefixes) match(protocol string, start []byte) *turnNote {
	rp.mu.Lock()
	defer rp.mu.Unlock()
	for _, e := range rp.entries {
		if e.protocol == protocol && bytes.Equal(e.start, start) {
			return e.note
		}
	}
	return nil
}

// remember keeps a request's start (copied) and note; one that starts as a kept one replaces
// it, and the oldest go past maxPrefixes.
func (rp *recentPrefixes) remember(protocol string, start []byte, note *turnNote) {
	rp.mu.Lock()
	defer rp.mu.Unlock()
	// A session's turns all start alike: the copy of the turn replaced serves the new one, so
	// a session's turns copy (32 KiB of garbage each) only once.
	var copied []byte
	kept := rp.entries[:0]
	for _, e := range rp.entries {
		if e.protocol == protocol && bytes.Equal(e.start, start) {
			copied = e.start
			continue
		}
		kept = append(kept, e)
	}
	if copied == nil {
		copied = bytes.Clone(start)
	}
	kept = kept[:min(len(kept), maxPrefixes-1)]
	rp.entries = slices.Insert(kept, 0, recentPrefix{protocol: protocol, start: copied, note: note})
}
