package app

import (
	"encoding/json"
	"sync"
)

// Event names, mirrored in frontend/src/events.ts.
const (
	EventProxyStatus = "proxy:status"
)

// Message is one event for the UI, already encoded.
type Message struct {
	Name string
	Data json.RawMessage
}

// Hub fans events out to UI subscribers without ever blocking the publisher:
// a subscriber whose buffer is full is dropped and must subscribe again.
type Hub struct {
	mu   sync.Mutex
	subs map[chan Message]struct{}
	last map[string]Message // replayed to new subscribers so they start current
}

// NewHub returns an empty hub.
func NewHub() *Hub {
	return &Hub{subs: map[chan Message]struct{}{}, last: map[string]Message{}}
}

// Subscribe returns a channel of events (starting with the latest of each
// kind) and a function that ends the subscription. The channel is closed when
// the subscription ends or the subscriber falls behind.
func (h *Hub) Subscribe() (<-chan Message, func()) {
	ch := make(chan Message, 64)
	h.mu.Lock()
	for _, m := range h.last {
		ch <- m
	}
	h.subs[ch] = struct{}{}
	h.mu.Unlock()
	return ch, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		if _, ok := h.subs[ch]; ok {
			delete(h.subs, ch)
			close(ch)
		}
	}
}

// Publish sends an event to every subscriber.
func (h *Hub) Publish(name string, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		return // only our own plain structs are published
	}
	m := Message{Name: name, Data: data}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.last[name] = m
	for ch := range h.subs {
		select {
		case ch <- m:
		default:
			delete(h.subs, ch)
			close(ch)
		}
	}
}
