package proxy

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"longhaul/proxy/anthropic"
	"longhaul/proxy/pool"
)

// The memory budget. A request's body is buffered whole (retries replay it), and the peek, a
// translation and the compaction engine each build something per byte or per message of it,
// so a request costs a multiple of its body: a few large ones at once, from any local process,
// could take the process past what the machine has. So each request reserves what it will
// cost against Config.MemoryBudgetBytes before reading its body (from its Content-Length, or
// step by step as a chunked body arrives), and again per message and block once the peek has
// counted them, and gives it all back when its handler returns. A request that does not fit is
// refused in its client's protocol: 413 when it alone is larger than the budget, 529 (503 for
// OpenAI and Gemini clients, whose APIs have no 529) while requests in flight hold it.

// What a request is reckoned to cost: requestBaseCost for any request (headers, the exchange
// record, stacks, a reply's buffers), costPerBodyByte times its body, and per message and
// content block what the peek, a translation and the engine keep of each. Measured as peak RSS
// above idle in a process of its own (TestPeakRSSPerRequest's way) on the shapes that cost the
// most: 100k messages in 28 MB take 2.6x the body (4.3x translated from another protocol);
// 100k one-letter messages (3 MB) 52-70 MB, which the per-message cost covers; a million
// one-letter blocks in 26 MB about 150 MB. A late Claude Code turn of 800 KB takes about 1 MB
// (docs/benchmarks.md, 64 such streams at once), so it is reckoned generously.
const (
	requestBaseCost = 64 << 10
	costPerBodyByte = 4
	costPerMessage  = 640
	costPerBlock    = 160
)

// bodyCost is what a request with a body of n bytes is reckoned to cost before anything of
// it is read.
func bodyCost(n int64) int64 { return requestBaseCost + costPerBodyByte*n }

// itemsCost is what the engine keeps for a request of so many messages and content blocks.
func itemsCost(messages, blocks int) int64 {
	return costPerMessage*int64(messages) + costPerBlock*int64(blocks)
}

// memoryBudget is the memory the requests in flight have reserved. Safe for concurrent use;
// the zero value holds nothing.
type memoryBudget struct {
	mu   sync.Mutex
	held int64
}

// open starts a request's reservation against a budget of limit bytes; p is the request's
// client protocol, whose "busy" status a refusal while others hold the budget takes: 529 for
// Anthropic's, 503 for the others, whose APIs have no 529.
func (b *memoryBudget) open(limit int64, p clientProtocol) reservation {
	r := reservation{budget: b, limit: limit, overloaded: 529}
	if p != nil && p.nativeKind() != pool.KindAnthropic {
		r.overloaded = http.StatusServiceUnavailable
	}
	return r
}

// inUse is what the requests in flight hold.
func (b *memoryBudget) inUse() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.held
}

// reservation is one request's share of the budget. Its methods are for the request's own
// goroutine; a nil reservation reserves nothing.
type reservation struct {
	budget     *memoryBudget
	limit      int64
	held       int64
	overloaded int // the status of a refusal while others hold the budget
}

// grow reserves n bytes more, or says why it cannot: the request alone would be larger than
// the budget (413), or what the others hold leaves too little (529/503, retry shortly).
func (r *reservation) grow(n int64) *Error {
	if r == nil || n <= 0 {
		return nil
	}
	if r.held+n > r.limit {
		return newError(http.StatusRequestEntityTooLarge, anthropic.RequestTooLarge, fmt.Sprintf(
			"this request would take about %s of memory, more than the proxy's whole budget of %s (proxy.memory_budget_bytes)",
			mib(r.held+n), mib(r.limit)))
	}
	b := r.budget
	b.mu.Lock()
	ok := b.held+n <= r.limit
	if ok {
		b.held += n
	}
	held := b.held
	b.mu.Unlock()
	if !ok {
		e := newError(r.overloaded, anthropic.OverloadedError, fmt.Sprintf(
			"the proxy's memory budget (proxy.memory_budget_bytes, %s) is held by requests in flight (%s); this one needs %s more: retry shortly",
			mib(r.limit), mib(held), mib(n)))
		e.RetryAfter = time.Second
		return e
	}
	r.held += n
	return nil
}

// release gives everything back; the reservation holds nothing after.
func (r *reservation) release() {
	if r == nil || r.held == 0 {
		return
	}
	r.budget.mu.Lock()
	r.budget.held -= r.held
	r.budget.mu.Unlock()
	r.held = 0
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// errBodyTooLarge is a chunked body longer than proxy.max_body_bytes.
var errBodyTooLarge = errors.New("request body too large")

// chunkedStep is how much of a chunked body is reserved at a time, before it is read.
const chunkedStep = 256 << 10

// readChunked reads a body of unknown size (a chunked upload) within limit bytes, reserving
// its cost step by step before reading each step. The buffer doubles as it fills, from the
// pool, so the body costs at most its own size twice while it arrives. A body over limit is
// errBodyTooLarge; a reservation refused is its *Error.
func (s *Server) readChunked(r io.Reader, limit int64, res *reservation) (*requestBody, error) {
	body := s.bodies.get(int(min(chunkedStep, limit+1)))
	n, reserved := 0, int64(0)
	for {
		if int64(n) >= reserved {
			if e := res.grow(costPerBodyByte * chunkedStep); e != nil {
				body.release()
				return nil, e
			}
			reserved += chunkedStep
		}
		if n == len(body.buf) { // never past limit+1: one byte more says the body is too large
			bigger := s.bodies.get(int(min(2*int64(len(body.buf)), limit+1)))
			copy(bigger.buf, body.buf)
			body.release()
			body = bigger
		}
		m, err := r.Read(body.buf[n:min(len(body.buf), int(reserved))])
		n += m
		if int64(n) > limit {
			body.release()
			return nil, errBodyTooLarge
		}
		if err == io.EOF {
			body.buf = body.buf[:n]
			return body, nil
		}
		if err != nil {
			body.release()
			return nil, err
		}
	}
}
