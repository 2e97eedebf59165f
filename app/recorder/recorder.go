// Package recorder turns what the proxy observes into history: it is the proxy's Observer,
// batches exchanges into the store on one writer goroutine, applies retention, and publishes
// the live feed the UI watches (Feed, which also carries the app's status events).
package recorder

import (
	"context"
	"errors"
	"log/slog"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"longhaul/proxy"
	"longhaul/store"
)

// Recorder is the proxy's Observer for history and the live monitor. Observe never waits:
// it hands the exchange to two buffered queues (one for SQLite, one for the UI) and counts
// what it ever had to drop. One writer goroutine batches inserts; one goroutine batches live
// updates. Nothing a disk or a window does can slow a request.
//
// Memory is bounded by construction: the bodies waiting for the writer are counted in bytes
// (Options.QueueBytes), and an exchange whose bodies would pass the bound is queued without
// them — its metadata is still recorded, the bodies are counted as dropped (Stats). The live
// feed gets exchanges without bodies, so only the writer's queue ever holds them.
type Recorder struct {
	store *store.Store
	log   *slog.Logger
	opts  Options

	queue chan queued          // to the writer
	kick  chan struct{}        // wakes the writer early when BatchRows records wait
	wake  chan struct{}        // ends the writer's sleep (sleep): a record was queued
	live  chan *proxy.Exchange // to the live feed; bodies left out
	feed  *Feed

	dropped       atomic.Int64 // exchanges the history lost (the queue was full)
	bodiesDropped atomic.Int64 // exchanges recorded without their bodies (QueueBytes was reached)
	liveDropped   atomic.Int64 // updates the live view lost (harmless: history has them)
	written       atomic.Int64 // records committed
	failures      atomic.Int64 // batches that failed to commit (and were retried)
	bodyBytes     atomic.Int64 // body bytes queued or pending, not yet committed
	ticks         atomic.Int64 // the writer's ticks, for tests: none while it sleeps
	liveBatches   atomic.Int64 // the relay's periods, for tests: none without updates
	// enqueued counts records put in the queue, and sleeping is set while the writer sleeps:
	// Observe adds to one and then reads the other, the writer sets the other and then reads
	// the one (sleep); atomics being sequentially consistent, one of the two sees the other.
	enqueued atomic.Int64
	sleeping atomic.Bool

	bodies atomic.Pointer[bodyPolicy]
	pricer atomic.Pointer[store.Pricer] // prices the live feed's rows; nil: none

	writeMu     sync.Mutex // one batch write at a time (writer goroutine, final flush)
	pending     []queued   // read from the queue, not yet committed; guarded by writeMu
	dequeued    int64      // records taken from the queue; guarded by writeMu
	sinceReturn int64      // body bytes committed since memory was last returned; guarded by writeMu
}

// queued is an exchange on its way to the writer, with the body bytes it holds of the
// QueueBytes budget.
type queued struct {
	ex        *proxy.Exchange
	bodyBytes int64
	// rec is the exchange's record, made once its large request body was digested
	// (digestLarge): the proxy's buffer went back then, and the record holds the digest.
	rec *store.Exchange
}

// digestFrom is the request body size from which the writer digests a body as soon as it is
// queued instead of holding the proxy's buffer until its batch: holding ten 800 KB buffers
// until the commit made the proxy read each next body into memory it had not touched for a
// while, about 0.1 ms of CPU a turn (docs/performance.md, seventh pass).
const digestFrom = 64 << 10

// bodyPolicy is the part of the history settings the writer applies to each record.
type bodyPolicy struct {
	store    bool
	maxBytes int
}

// Options tune the recorder. Zero values are the defaults.
type Options struct {
	Logger *slog.Logger // nil: discard
	// QueueSize is the writer's buffer in exchanges; 0 means 65536 (two records per request,
	// so about a minute of 500 requests/s with the disk stalled). Without bodies a record
	// holds well under a kilobyte.
	QueueSize int
	// QueueBytes bounds the bodies waiting for the writer; 0 means 16 MiB (twenty 800 KB
	// requests; the writer stores a session's next such body in about a millisecond). Past it,
	// exchanges are recorded without bodies and counted in Stats.BodiesDropped. Measured with
	// shipped-bench: with 64 requests of 800 KB in flight, 32 MiB took the peak RSS to 135 MB
	// (under main.go's memory limit too), 16 MiB kept it under 120 MB.
	QueueBytes int64
	// ReturnMemoryAfter is how many body bytes the writer commits before, once it has been
	// idle for ReturnMemoryIdle, it gives freed memory back to the OS (debug.FreeOSMemory); 0
	// means 8 MiB (ten 800 KB requests), negative never. Without it the heap a burst of large
	// requests grew stays resident for minutes (the runtime's background scavenger returns
	// it slowly); a forced collection on an idle process costs a few milliseconds.
	ReturnMemoryAfter int64
	// ReturnMemoryIdle is how long the writer must have had nothing to write before it returns
	// memory; 0 means 10 s. A session's turns come seconds apart: returned a second after each
	// run of them, the memory was faulted back in by the next turn (≈ 2 µs a page on the
	// benchmark machine, ≈ 15 ms for the 30 MB a run of 800 KB turns grows), and the heap
	// still comes back well within the minute the idle target allows.
	ReturnMemoryIdle time.Duration
	// FlushEvery is the writer's tick; 0 means 100 ms. A record is committed within about two
	// ticks of its Observe while the disk keeps up.
	FlushEvery time.Duration
	// BatchRows flushes early when this many records wait; 0 means 512.
	BatchRows int
	// LiveEvery is the live feed's batching period; 0 means 250 ms.
	LiveEvery time.Duration
	// Feed receives the live batches (EventExchanges). If nil, the recorder makes its own.
	Feed *Feed
	// RetentionEvery is the retention loop's period; 0 means 10 minutes.
	RetentionEvery time.Duration
}

func (o Options) withDefaults() Options {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.QueueSize <= 0 {
		o.QueueSize = 1 << 16
	}
	if o.QueueBytes <= 0 {
		o.QueueBytes = 16 << 20
	}
	if o.ReturnMemoryAfter == 0 {
		o.ReturnMemoryAfter = 8 << 20
	}
	if o.ReturnMemoryIdle <= 0 {
		o.ReturnMemoryIdle = 10 * time.Second
	}
	if o.FlushEvery <= 0 {
		o.FlushEvery = 100 * time.Millisecond
	}
	if o.BatchRows <= 0 {
		o.BatchRows = 512
	}
	if o.LiveEvery <= 0 {
		o.LiveEvery = 250 * time.Millisecond
	}
	if o.RetentionEvery <= 0 {
		o.RetentionEvery = 10 * time.Minute
	}
	if o.Feed == nil {
		o.Feed = NewFeed()
	}
	return o
}

var _ proxy.Observer = (*Recorder)(nil)

// New returns a recorder writing to st. Nothing runs until Run.
func New(st *store.Store, opts Options) *Recorder {
	opts = opts.withDefaults()
	r := &Recorder{
		store: st, log: opts.Logger, opts: opts,
		queue: make(chan queued, opts.QueueSize),
		kick:  make(chan struct{}, 1),
		wake:  make(chan struct{}, 1),
		live:  make(chan *proxy.Exchange, 8192),
		feed:  opts.Feed,
	}
	r.feed.forgetUnwatched(EventExchanges)
	def := store.DefaultSettings().History
	r.Configure(def)
	return r
}

// Configure applies the history settings that shape each record (body storage and cap).
func (r *Recorder) Configure(h store.HistorySettings) {
	r.bodies.Store(&bodyPolicy{store: h.StoreBodies, maxBytes: h.MaxBodyBytes})
}

// SetPricer sets what prices the exchanges of the live feed (the app's price table, the one
// its history views use), so the monitor shows each request's cost as it finishes.
func (r *Recorder) SetPricer(p store.Pricer) {
	r.pricer.Store(&p)
}

// Observe hands an exchange off without blocking (proxy.Observer).
func (r *Recorder) Observe(ex proxy.Exchange) {
	p := &ex
	q := queued{ex: p}
	if n := int64(len(ex.RequestBody) + len(ex.ForwardedBody) + len(ex.ReplyBody)); n > 0 {
		if r.bodyBytes.Add(n) > r.opts.QueueBytes {
			r.bodyBytes.Add(-n)
			r.bodiesDropped.Add(1)
			p.ReleaseBodies()
		} else {
			q.bodyBytes = n
		}
	}
	// What the rest reads of p is read now: once queued, p is the writer's, which digests and
	// releases its bodies whenever it wakes.
	large := len(p.RequestBody) >= digestFrom
	var lp *proxy.Exchange // the live view's copy, without bodies
	if r.feed.Watched() {
		lp = p
		if q.bodyBytes > 0 {
			c := p.WithoutBodies()
			lp = &c
		}
	}
	select {
	case r.queue <- q:
		// Only the first record after a pause wakes the writer; while it ticks, this is two
		// atomics, not a switch.
		r.enqueued.Add(1)
		if r.sleeping.Load() {
			select {
			case r.wake <- struct{}{}:
			default:
			}
		}
	default:
		r.release([]queued{q})
		r.dropped.Add(1)
	}
	// The writer sleeps between ticks rather than waking for every record: two context
	// switches per request would cost more than the whole hand-off. It is woken early when a
	// batch is full, or when the bodies waiting reach half their budget: sequential 800 KB
	// requests fill the budget within a tick, and the bodies of the rest of it were dropped.
	// A large request body wakes it too, to be digested (digestLarge); the batch waits.
	if len(r.queue) >= r.opts.BatchRows || q.bodyBytes > 0 && r.bodyBytes.Load() >= r.opts.QueueBytes/2 || large {
		select {
		case r.kick <- struct{}{}:
		default:
		}
	}
	if lp == nil {
		return // nobody would see it (no window, browser or tray follows the feed)
	}
	// The live view shows no bodies: its copy holds none, so only the writer's queue does.
	select {
	case r.live <- lp:
	default:
		r.liveDropped.Add(1)
	}
}

// Stats are the recorder's counters, shown in the UI and asserted by tests.
type Stats struct {
	Dropped       int64 `json:"dropped"`       // exchanges lost to history: expected to stay 0
	BodiesDropped int64 `json:"bodiesDropped"` // exchanges recorded without their bodies (memory bound)
	LiveDropped   int64 `json:"liveDropped"`   // live updates skipped (history still has them)
	Written       int64 `json:"written"`
	Queued        int   `json:"queued"`
	QueuedBytes   int64 `json:"queuedBytes"` // body bytes waiting for the writer
	Failures      int64 `json:"failures"`
	// BodiesRepeated counts request bodies stored from what the proxy found they repeat of
	// the session's previous one (store.Store.BodiesRepeated).
	BodiesRepeated int64 `json:"bodiesRepeated"`
	// BodiesLost counts request bodies digested ahead of their batch that could not be stored
	// (store.Store.BodiesLost): expected to stay 0.
	BodiesLost int64 `json:"bodiesLost"`
}

// Stats reports the counters.
func (r *Recorder) Stats() Stats {
	return Stats{
		Dropped: r.dropped.Load(), BodiesDropped: r.bodiesDropped.Load(), LiveDropped: r.liveDropped.Load(),
		Written: r.written.Load(), Queued: len(r.queue), QueuedBytes: r.bodyBytes.Load(), Failures: r.failures.Load(),
		BodiesRepeated: r.store.BodiesRepeated(),
		BodiesLost:     r.store.BodiesLost(),
	}
}

// Feed is the live feed the recorder publishes its batches to.
func (r *Recorder) Feed() *Feed { return r.feed }

// Run writes history, feeds the live view and applies retention until ctx is done; the writer
// then commits what it holds. Exchanges observed after that (requests still draining) wait in
// the queue for Flush.
func (r *Recorder) Run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Go(func() { r.write(ctx) })
	wg.Go(func() { r.relay(ctx) })
	wg.Go(func() { r.retain(ctx) })
	wg.Wait()
}

// write commits what is queued on every tick while records come, and sleeps once a tick finds
// nothing to write: an idle app (a tray icon, most of the day) then has no writer waking it
// ten times a second. Observe's wake ends the sleep; memory is returned, if due, after
// ReturnMemoryIdle of it.
func (r *Recorder) write(ctx context.Context) {
	tick := time.NewTicker(r.opts.FlushEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			r.Flush(context.WithoutCancel(ctx)) //nolint:errcheck // logged; Shutdown flushes again
			return
		case <-tick.C:
			r.ticks.Add(1)
			written := r.written.Load()
			r.Flush(ctx) //nolint:errcheck // logged; the batch is kept and retried
			if r.written.Load() == written && r.idle() {
				tick.Stop()
				if !r.sleep(ctx) {
					r.Flush(context.WithoutCancel(ctx)) //nolint:errcheck // logged; Shutdown flushes again
					return
				}
				tick.Reset(r.opts.FlushEvery)
			}
		case <-r.kick:
			if r.digestLarge() {
				r.Flush(ctx) //nolint:errcheck // logged; the batch is kept and retried
			}
		}
	}
}

// idle reports whether nothing is queued or pending (a failed batch keeps the writer ticking:
// it retries on every tick).
func (r *Recorder) idle() bool {
	r.writeMu.Lock()
	defer r.writeMu.Unlock()
	return len(r.queue) == 0 && len(r.pending) == 0
}

// sleep waits for Observe's wake and reports false if ctx ended first. It announces itself
// (sleeping) before it looks at the queue a last time, and Observe queues before it looks at
// sleeping: either the look finds the record, or Observe finds the writer asleep and wakes it.
func (r *Recorder) sleep(ctx context.Context) bool {
	select {
	case <-r.wake: // left over from records the ticks already wrote
	default:
	}
	r.sleeping.Store(true)
	defer r.sleeping.Store(false)
	r.writeMu.Lock()
	taken := r.dequeued
	r.writeMu.Unlock()
	if r.enqueued.Load() != taken {
		return true
	}
	var returnMemory <-chan time.Time
	if r.returnDue() {
		t := time.NewTimer(r.opts.ReturnMemoryIdle)
		defer t.Stop()
		returnMemory = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return false
		case <-r.wake:
			return true
		case <-returnMemory:
			returnMemory = nil
			r.returnMemory()
		}
	}
}

// maxPending bounds what a failing database can make the writer hold for retry.
const maxPending = 1 << 17

// digestLarge takes what is queued into pending, digests the large request bodies among it
// (their buffers go back to the proxy, their digests stay in the budget) and reports whether a
// batch is due: BatchRows records, or half the body budget, waiting.
func (r *Recorder) digestLarge() bool {
	r.writeMu.Lock()
	defer r.writeMu.Unlock()
	r.drainLocked()
	return len(r.pending) >= r.opts.BatchRows || r.bodyBytes.Load() >= r.opts.QueueBytes/2
}

// drainLocked moves the queue into pending and digests each large request body it brings.
// The caller holds writeMu.
func (r *Recorder) drainLocked() {
	for {
		select {
		case q := <-r.queue:
			r.dequeued++
			r.digestLocked(&q)
			r.pending = append(r.pending, q)
			continue
		default:
		}
		return
	}
}

// digestLocked makes q's record now when its request body is large: the store digests the body
// and the proxy's buffer goes back. A body the store could not digest stays lent, and is
// written whole with its batch.
func (r *Recorder) digestLocked(q *queued) {
	ex := q.ex
	if ex.State != proxy.ExchangeFinished || len(ex.RequestBody) < digestFrom {
		return
	}
	rec := record(ex, r.bodies.Load())
	if rec.Bodies == nil || rec.Bodies.Request == "" {
		return
	}
	if err := r.store.DigestRequest(&rec); err != nil {
		r.log.Error("history: cannot digest a request body; it is written whole", "id", ex.ID, "err", err)
		return
	}
	held := int64(len(rec.Bodies.Forwarded) + len(rec.Bodies.Reply))
	if d := rec.Bodies.RequestDigest; d != nil {
		held += int64(d.Held())
	}
	// The record keeps the forwarded and reply copies, not the proxy's buffer; the heap that
	// body grew is what returnMemory gives back.
	ex.ReleaseBodies()
	r.sinceReturn += q.bodyBytes - held
	r.bodyBytes.Add(held - q.bodyBytes)
	q.bodyBytes, q.rec = held, &rec
}

// Flush commits everything queued so far. Shutdown calls it after the proxy has stopped, so
// requests that finished while draining are kept too. A failed write is kept and retried by
// the next flush.
func (r *Recorder) Flush(ctx context.Context) error {
	r.writeMu.Lock()
	defer r.writeMu.Unlock()
	r.drainLocked()
	if len(r.pending) == 0 {
		return nil
	}
	batch := r.records(r.pending)
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := r.store.WriteExchanges(ctx, batch); err != nil {
		r.failures.Add(1)
		if over := len(r.pending) - maxPending; over > 0 {
			r.release(r.pending[:over])
			r.pending = slices.Delete(r.pending, 0, over)
			r.dropped.Add(int64(over))
		}
		if !errors.Is(err, context.Canceled) {
			r.log.Error("history: write failed; will retry", "records", len(batch), "err", err)
		}
		return err
	}
	r.written.Add(int64(len(batch)))
	r.sinceReturn += r.release(r.pending)
	clear(r.pending)
	r.pending = r.pending[:0]
	return nil
}

// release ends the proxy's loan of the bodies of records the writer is done with, gives
// their bytes back to the queue's budget and returns how many they were.
func (r *Recorder) release(done []queued) int64 {
	var n int64
	for _, q := range done {
		n += q.bodyBytes
		q.ex.ReleaseBodies()
	}
	r.bodyBytes.Add(-n)
	return n
}

// returnDue reports whether the writer has committed ReturnMemoryAfter body bytes since it
// last returned memory.
func (r *Recorder) returnDue() bool {
	r.writeMu.Lock()
	defer r.writeMu.Unlock()
	return r.opts.ReturnMemoryAfter >= 0 && r.sinceReturn >= r.opts.ReturnMemoryAfter
}

// returnMemory gives the heap that stored bodies grew back to the OS once the writer has been
// idle for ReturnMemoryIdle after writing at least ReturnMemoryAfter body bytes: a burst of 800 KB
// requests otherwise leaves hundreds of MB resident for minutes. Idle means nothing queued or
// pending, so the collections this forces find the bodies garbage. Two of them: pooled
// buffers (the proxy's request bodies) survive one collection in sync.Pool's victim cache.
func (r *Recorder) returnMemory() {
	if r.opts.ReturnMemoryAfter < 0 || len(r.queue) > 0 {
		return
	}
	r.writeMu.Lock()
	due := r.sinceReturn >= r.opts.ReturnMemoryAfter && len(r.pending) == 0
	if due {
		r.sinceReturn = 0
	}
	r.writeMu.Unlock()
	if due {
		runtime.GC()
		debug.FreeOSMemory()
	}
}

// records turns observed exchanges into rows, one per exchange: a request that started and
// finished within one batch is written once, finished.
func (r *Recorder) records(observed []queued) []store.Exchange {
	at := make(map[string]int, len(observed))
	latest := make([]*queued, 0, len(observed))
	for i := range observed {
		q := &observed[i]
		if j, ok := at[q.ex.ID]; ok {
			latest[j] = q
			continue
		}
		at[q.ex.ID] = len(latest)
		latest = append(latest, q)
	}
	policy := r.bodies.Load()
	out := make([]store.Exchange, len(latest))
	for i, q := range latest {
		if q.rec != nil {
			out[i] = *q.rec // made when its body was digested
			continue
		}
		out[i] = record(q.ex, policy)
	}
	// New rows get their seq in start order, which is what "newest first" means to a reader.
	slices.SortStableFunc(out, func(a, b store.Exchange) int { return a.Start.Compare(b.Start) })
	return out
}
