package sigcache

import (
	"sync"
	"time"
)

// lru is a bounded map with least-recently-used eviction and a per-entry
// expiry. Every operation is O(1): a map finds the entry and an intrusive
// doubly linked list keeps the recency order (front = most recent).
//
// Expiry counts from the last write, not the last read: a signature is only as
// fresh as the reply that issued it, so reading it must not keep it alive.
type lru struct {
	mu    sync.Mutex
	max   int
	ttl   time.Duration
	now   func() time.Time
	items map[string]*entry
	head  entry // sentinel: head.next is the most recent, head.prev the least
	evict int64 // entries dropped for size
	expir int64 // entries dropped for age
}

type entry struct {
	key, val   string
	expires    time.Time
	prev, next *entry
}

func newLRU(max int, ttl time.Duration, now func() time.Time) *lru {
	l := &lru{max: max, ttl: ttl, now: now, items: make(map[string]*entry, min(max, 1024))}
	l.head.prev, l.head.next = &l.head, &l.head
	return l
}

func (l *lru) unlink(e *entry) {
	e.prev.next, e.next.prev = e.next, e.prev
	e.prev, e.next = nil, nil
}

func (l *lru) pushFront(e *entry) {
	e.prev, e.next = &l.head, l.head.next
	l.head.next.prev = e
	l.head.next = e
}

func (l *lru) put(key, val string) {
	if key == "" || val == "" {
		return
	}
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if e, ok := l.items[key]; ok {
		e.val, e.expires = val, now.Add(l.ttl)
		l.unlink(e)
		l.pushFront(e)
		return
	}
	e := &entry{key: key, val: val, expires: now.Add(l.ttl)}
	l.items[key] = e
	l.pushFront(e)
	// Drop expired entries from the cold end first (they are free to lose),
	// then the least recently used ones while over the bound.
	for tail := l.head.prev; tail != &l.head && !now.Before(tail.expires); tail = l.head.prev {
		l.remove(tail)
		l.expir++
	}
	for len(l.items) > l.max {
		l.remove(l.head.prev)
		l.evict++
	}
}

func (l *lru) remove(e *entry) {
	l.unlink(e)
	delete(l.items, e.key)
}

func (l *lru) get(key string) (string, bool) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	e, ok := l.items[key]
	if !ok {
		return "", false
	}
	if !now.Before(e.expires) {
		l.remove(e)
		l.expir++
		return "", false
	}
	l.unlink(e)
	l.pushFront(e)
	return e.val, true
}

func (l *lru) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.items)
}

// keys lists keys from most to least recently used (for tests and debugging).
func (l *lru) keys() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]string, 0, len(l.items))
	for e := l.head.next; e != &l.head; e = e.next {
		out = append(out, e.key)
	}
	return out
}

func (l *lru) counts() (evicted, expired int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.evict, l.expir
}
