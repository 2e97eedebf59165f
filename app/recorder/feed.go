package recorder

import (
	"encoding/json"
	"sync"
	"sync/atomic"
)

// Event is one message for the UI, already encoded: Name is the Wails event name and the SSE
// "event:" name (frontend/src/events.ts mirrors them), Data its JSON payload.
type Event struct {
	Name string
	Data json.RawMessage
}

// subscriberBuffer is how many events a subscriber may fall behind before it is dropped
// (history batches come every 250 ms, status events a few a second at most).
const subscriberBuffer = 64

// Feed is the one live feed: it fans events (the proxy's status, self-update's state, batches
// of exchanges) out to the UI's subscribers — the window, the door's event streams, the tray —
// without ever blocking a publisher. A subscriber whose buffer is full is dropped (its channel
// closed) and subscribes again. A new subscriber first gets the latest event of each name, so
// it starts current; for exchange batches that means the last batch may arrive twice, which a
// view absorbs (each record carries its state, and a finished one wins over a started one).
type Feed struct {
	mu   sync.Mutex
	subs map[chan Event]struct{}
	last map[string]Event
	// watchers is len(subs), read without the lock by publishers that skip work nobody would
	// see (Watched).
	watchers atomic.Int32
	// unwatchedStale names the events whose latest is forgotten when the last subscriber
	// leaves: their publisher skips them while nobody watches, so the latest would be stale by
	// the time someone comes back (forgetUnwatched).
	unwatchedStale map[string]bool
}

// NewFeed returns a feed without subscribers.
func NewFeed() *Feed {
	return &Feed{subs: map[chan Event]struct{}{}, last: map[string]Event{}, unwatchedStale: map[string]bool{}}
}

// Subscribe returns a channel of events, starting with the latest of each name, and a function
// that ends the subscription. The channel is closed when the subscription ends or the
// subscriber falls behind.
func (f *Feed) Subscribe() (<-chan Event, func()) {
	ch := make(chan Event, subscriberBuffer)
	f.mu.Lock()
	for _, e := range f.last {
		ch <- e
	}
	f.subs[ch] = struct{}{}
	f.watchers.Store(int32(len(f.subs)))
	f.mu.Unlock()
	return ch, func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		if _, ok := f.subs[ch]; ok {
			delete(f.subs, ch)
			close(ch)
			f.watchers.Store(int32(len(f.subs)))
			f.forgetStaleLocked()
		}
	}
}

// forgetUnwatched makes the feed forget the latest event of name whenever its last subscriber
// leaves (the recorder's exchange batches: it publishes none while nobody watches).
func (f *Feed) forgetUnwatched(name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.unwatchedStale[name] = true
	f.forgetStaleLocked()
}

func (f *Feed) forgetStaleLocked() {
	if len(f.subs) > 0 {
		return
	}
	for name := range f.unwatchedStale {
		delete(f.last, name)
	}
}

// Watched reports whether anyone subscribes to the feed now.
func (f *Feed) Watched() bool { return f.watchers.Load() > 0 }

// Forget drops the latest event of name, so a subscriber arriving later does not start with
// it (the events published meanwhile were skipped: it would be stale).
func (f *Feed) Forget(name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.last, name)
}

// Publish encodes v once and sends it to every subscriber.
func (f *Feed) Publish(name string, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		return // only our own plain structs are published
	}
	f.PublishJSON(name, data)
}

// PublishJSON sends data, v's JSON encoding already made, to every subscriber; they share it,
// so the caller must not modify it afterwards.
func (f *Feed) PublishJSON(name string, data json.RawMessage) {
	e := Event{Name: name, Data: data}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.last[name] = e
	for ch := range f.subs {
		select {
		case ch <- e:
		default:
			delete(f.subs, ch)
			close(ch)
		}
	}
	f.watchers.Store(int32(len(f.subs)))
}
