package pool

import (
	"container/list"
	"time"
)

// affinityTable binds sessions to accounts, least recently used first out,
// with idle expiry: bounded memory however many sessions pass through.
type affinityTable struct {
	capacity int
	ttl      time.Duration
	order    *list.List // front = most recent
	byID     map[string]*list.Element
}

type binding struct {
	session  string
	account  int64
	lastUsed time.Time
}

func newAffinityTable(capacity int, ttl time.Duration) *affinityTable {
	return &affinityTable{capacity: capacity, ttl: ttl, order: list.New(), byID: map[string]*list.Element{}}
}

func (t *affinityTable) get(session string, now time.Time) (int64, bool) {
	e, ok := t.byID[session]
	if !ok {
		return 0, false
	}
	b := e.Value.(*binding)
	if now.Sub(b.lastUsed) >= t.ttl {
		t.order.Remove(e)
		delete(t.byID, session)
		return 0, false
	}
	return b.account, true
}

func (t *affinityTable) put(session string, account int64, now time.Time) {
	if e, ok := t.byID[session]; ok {
		b := e.Value.(*binding)
		b.account, b.lastUsed = account, now
		t.order.MoveToFront(e)
		return
	}
	t.byID[session] = t.order.PushFront(&binding{session: session, account: account, lastUsed: now})
	for t.order.Len() > t.capacity {
		oldest := t.order.Back()
		t.order.Remove(oldest)
		delete(t.byID, oldest.Value.(*binding).session)
	}
}

func (t *affinityTable) countByAccount(now time.Time) map[int64]int {
	out := map[int64]int{}
	for e := t.order.Front(); e != nil; e = e.Next() {
		if b := e.Value.(*binding); now.Sub(b.lastUsed) < t.ttl {
			out[b.account]++
		}
	}
	return out
}
