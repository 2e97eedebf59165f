package recorder

import (
	"context"
	"time"

	"longhaul/proxy"
	"longhaul/store"
)

// EventExchanges names the live batches on the feed: the latest state of every exchange that
// started or finished since the previous batch (mirrored in frontend/src/events.ts).
const EventExchanges = "history:exchanges"

// relay collects live updates and publishes them LiveEvery after the first of a batch,
// coalesced per exchange and redacted, until ctx is done. Between batches it sleeps on the
// queue: Observe queues nothing while nobody follows the feed, so an idle app or one without a
// window has no relay waking it (the feed forgets the last batch once its last follower
// leaves, see forgetUnwatched).
func (r *Recorder) relay(ctx context.Context) {
	period := time.NewTimer(r.opts.LiveEvery)
	period.Stop()
	defer period.Stop()
	var order []string
	latest := map[string]*proxy.Exchange{}
	add := func(ex *proxy.Exchange) {
		if _, ok := latest[ex.ID]; !ok {
			order = append(order, ex.ID)
		}
		latest[ex.ID] = ex
	}
	for {
		select {
		case <-ctx.Done():
			return
		case ex := <-r.live:
			add(ex)
		}
		// The rest of the batch is drained once, when its period ends, not per update: the
		// feed never wakes for a single request.
		period.Reset(r.opts.LiveEvery)
		select {
		case <-ctx.Done():
			return
		case <-period.C:
			r.liveBatches.Add(1)
			for drained := false; !drained; {
				select {
				case ex := <-r.live:
					add(ex)
				default:
					drained = true
				}
			}
			if !r.feed.Watched() {
				// Nobody follows the feed (Observe stopped queueing for it): what was queued
				// before is dropped, and so is the last batch a newcomer would start with.
				order, latest = order[:0], map[string]*proxy.Exchange{}
				r.feed.Forget(EventExchanges)
				continue
			}
			var pricer store.Pricer
			if p := r.pricer.Load(); p != nil {
				pricer = *p
			}
			batch := make([]store.Exchange, 0, len(order))
			for _, id := range order {
				rec := record(latest[id], nil)
				// The monitor's rows draw the steps, never their edits; the detail page reads
				// the ledger from the store. Up to 40 previews a step stay off the feed.
				for i := range rec.Compaction {
					rec.Compaction[i].Edits = nil
				}
				e := r.store.RedactExchange(rec)
				e.Price(pricer)
				batch = append(batch, e)
			}
			order, latest = order[:0], map[string]*proxy.Exchange{}
			// Encoded without reflection: at thousands of exchanges a second, json.Marshal
			// was most of the live feed's cost (store.AppendExchangesJSON writes the same bytes).
			r.feed.PublishJSON(EventExchanges, store.AppendExchangesJSON(make([]byte, 0, 1024*len(batch)), batch))
		}
	}
}
