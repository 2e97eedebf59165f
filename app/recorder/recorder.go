// Package recorder turns what the proxy observes into history: it is the proxy's Observer,
// batches exchanges into the store on one writer goroutine, applies retention, and publishes
// the live feed the UI watches (Feed, which also carries the app's status events).
package recorder

import (
	"context"
	"errors"
	"log/slog"
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
type Recorder struct {
	store *store.Store
	log   *slog.Logger
	opts  Options

	queue chan *proxy.Exchange // to the writer
	kick  chan struct{}        // wakes the writer early when BatchRows records wait
	live  chan *proxy.Exchange // to the live feed
	feed  *Feed

	dropped     atomic.Int64 // exchanges the history lost (the queue was full)
	liveDropped atomic.Int64 // updates the live view lost (harmless: history has them)
	written     atomic.Int64 // records committed
	failures    atomic.Int64 // batches that failed to commit (and were retried)

	bodies atomic.Pointer[bodyPolicy]

	writeMu sync.Mutex        // one batch write at a time (writer goroutine, final flush)
	pending []*proxy.Exchange // read from the queue, not yet committed; guarded by writeMu
}

// bodyPolicy is the part of the history settings the writer applies to each record.
type bodyPolicy struct {
	store    bool
	maxBytes int
}

// Options tune the recorder. Zero values are the defaults.
type Options struct {
	Logger *slog.Logger // nil: discard
	// QueueSize is the writer's buffer in exchanges; 0 means 65536 (two records per request,
	// so about a minute of 500 requests/s with the disk stalled).
	QueueSize int
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
		queue: make(chan *proxy.Exchange, opts.QueueSize),
		kick:  make(chan struct{}, 1),
		live:  make(chan *proxy.Exchange, 8192),
		feed:  opts.Feed,
	}
	def := store.DefaultSettings().History
	r.Configure(def)
	return r
}

// Configure applies the history settings that shape each record (body storage and cap).
func (r *Recorder) Configure(h store.HistorySettings) {
	r.bodies.Store(&bodyPolicy{store: h.StoreBodies, maxBytes: h.MaxBodyBytes})
}

// Observe hands an exchange off without blocking (proxy.Observer).
func (r *Recorder) Observe(ex proxy.Exchange) {
	p := &ex
	select {
	case r.queue <- p:
	default:
		r.dropped.Add(1)
	}
	// The writer sleeps between ticks rather than waking for every record: two context
	// switches per request would cost more than the whole hand-off.
	if len(r.queue) >= r.opts.BatchRows {
		select {
		case r.kick <- struct{}{}:
		default:
		}
	}
	select {
	case r.live <- p:
	default:
		r.liveDropped.Add(1)
	}
}

// Stats are the recorder's counters, shown in the UI and asserted by tests.
type Stats struct {
	Dropped     int64 `json:"dropped"`     // exchanges lost to history: expected to stay 0
	LiveDropped int64 `json:"liveDropped"` // live updates skipped (history still has them)
	Written     int64 `json:"written"`
	Queued      int   `json:"queued"`
	Failures    int64 `json:"failures"`
}

// Stats reports the counters.
func (r *Recorder) Stats() Stats {
	return Stats{
		Dropped: r.dropped.Load(), LiveDropped: r.liveDropped.Load(), Written: r.written.Load(),
		Queued: len(r.queue), Failures: r.failures.Load(),
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

func (r *Recorder) write(ctx context.Context) {
	tick := time.NewTicker(r.opts.FlushEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			r.Flush(context.WithoutCancel(ctx)) //nolint:errcheck // logged; Shutdown flushes again
			return
		case <-tick.C:
			r.Flush(ctx) //nolint:errcheck // logged; the batch is kept and retried
		case <-r.kick:
			r.Flush(ctx) //nolint:errcheck // logged; the batch is kept and retried
		}
	}
}

// maxPending bounds what a failing database can make the writer hold for retry.
const maxPending = 1 << 17

// Flush commits everything queued so far. Shutdown calls it after the proxy has stopped, so
// requests that finished while draining are kept too. A failed write is kept and retried by
// the next flush.
func (r *Recorder) Flush(ctx context.Context) error {
	r.writeMu.Lock()
	defer r.writeMu.Unlock()
	for {
		select {
		case p := <-r.queue:
			r.pending = append(r.pending, p)
			continue
		default:
		}
		break
	}
	if len(r.pending) == 0 {
		return nil
	}
	batch := r.records(r.pending)
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := r.store.WriteExchanges(ctx, batch); err != nil {
		r.failures.Add(1)
		if over := len(r.pending) - maxPending; over > 0 {
			r.pending = slices.Delete(r.pending, 0, over)
			r.dropped.Add(int64(over))
		}
		if !errors.Is(err, context.Canceled) {
			r.log.Error("history: write failed; will retry", "records", len(batch), "err", err)
		}
		return err
	}
	r.written.Add(int64(len(batch)))
	clear(r.pending)
	r.pending = r.pending[:0]
	return nil
}

// records turns observed exchanges into rows, one per exchange: a request that started and
// finished within one batch is written once, finished.
func (r *Recorder) records(observed []*proxy.Exchange) []store.Exchange {
	at := make(map[string]int, len(observed))
	latest := make([]*proxy.Exchange, 0, len(observed))
	for _, ex := range observed {
		if i, ok := at[ex.ID]; ok {
			latest[i] = ex
			continue
		}
		at[ex.ID] = len(latest)
		latest = append(latest, ex)
	}
	policy := r.bodies.Load()
	out := make([]store.Exchange, len(latest))
	for i, ex := range latest {
		out[i] = record(ex, policy)
	}
	// New rows get their seq in start order, which is what "newest first" means to a reader.
	slices.SortStableFunc(out, func(a, b store.Exchange) int { return a.Start.Compare(b.Start) })
	return out
}
