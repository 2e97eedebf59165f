package app

import (
	"context"
	"sync"
	"time"

	"longhaul/proxy"
	"longhaul/store"
)

// Feed fans live exchange updates out to monitor views in batches. Publishing never waits: a
// subscriber whose buffer is full is dropped (its channel closed) and must subscribe again,
// then reload the list from history. There is no replay: a batch is news only once.
type Feed struct {
	mu   sync.Mutex
	subs map[chan []store.Exchange]struct{}
}

func newFeed() *Feed { return &Feed{subs: map[chan []store.Exchange]struct{}{}} }

// feedBuffer is how many batches a subscriber may fall behind (16 × 250 ms = 4 s).
const feedBuffer = 16

// Subscribe returns a channel of batches, each holding the latest state of every exchange that
// started or finished since the previous batch, and a function that ends the subscription.
func (f *Feed) Subscribe() (<-chan []store.Exchange, func()) {
	ch := make(chan []store.Exchange, feedBuffer)
	f.mu.Lock()
	f.subs[ch] = struct{}{}
	f.mu.Unlock()
	return ch, func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		if _, ok := f.subs[ch]; ok {
			delete(f.subs, ch)
			close(ch)
		}
	}
}

func (f *Feed) publish(batch []store.Exchange) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for ch := range f.subs {
		select {
		case ch <- batch:
		default:
			delete(f.subs, ch)
			close(ch)
		}
	}
}

// run collects updates and publishes them every period, coalesced per exchange.
func (f *Feed) run(ctx context.Context, in <-chan *proxy.Exchange, every time.Duration) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	var order []string
	latest := map[string]*proxy.Exchange{}
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			// Drained on the tick, not per update: the feed never wakes for a single request.
			for drained := false; !drained; {
				select {
				case ex := <-in:
					if _, ok := latest[ex.ID]; !ok {
						order = append(order, ex.ID)
					}
					latest[ex.ID] = ex
				default:
					drained = true
				}
			}
			if len(order) == 0 {
				continue
			}
			batch := make([]store.Exchange, 0, len(order))
			for _, id := range order {
				batch = append(batch, store.RedactExchange(record(latest[id], nil)))
			}
			order, latest = order[:0], map[string]*proxy.Exchange{}
			f.publish(batch)
		}
	}
}
