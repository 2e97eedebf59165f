package compact

import (
	"container/list"
	"sync"
)

// memo is a small bounded per-session store (LRU). Session state — a Layer-1
// boundary, a Layer-3 summary — is worth keeping for the sessions in use and
// worthless for the rest, so the oldest are dropped.
type memo[V any] struct {
	mu    sync.Mutex
	max   int
	items map[string]*list.Element
	order list.List
}

type memoEntry[V any] struct {
	key string
	val V
}

func newMemo[V any](max int) *memo[V] {
	if max <= 0 {
		max = 1024
	}
	return &memo[V]{max: max, items: map[string]*list.Element{}}
}

func (m *memo[V]) get(key string) (V, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	el, ok := m.items[key]
	if !ok {
		var zero V
		return zero, false
	}
	m.order.MoveToFront(el)
	return el.Value.(*memoEntry[V]).val, true
}

func (m *memo[V]) put(key string, v V) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if el, ok := m.items[key]; ok {
		el.Value.(*memoEntry[V]).val = v
		m.order.MoveToFront(el)
		return
	}
	m.items[key] = m.order.PushFront(&memoEntry[V]{key, v})
	for m.order.Len() > m.max {
		old := m.order.Back()
		m.order.Remove(old)
		delete(m.items, old.Value.(*memoEntry[V]).key)
	}
}
