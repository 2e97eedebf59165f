package proxy

import (
	"bytes"
	"sync"
	"sync/atomic"

	"longhaul/proxy/anthropic"
)

// The recall of the Chat Completions peek, as anthropic.Recall is the Messages peek's: a
// session's next turn repeats the previous request but for its end, so the peek compares the
// messages it repeats with a recent body's (bytes.Equal as they arrive) and takes the walk's
// state after the last equal one instead of walking them again. Equal bytes walk to equal
// state, so the result is the full walk's (TestChatRecallPeeksAsAFullWalk, FuzzChatRecall).
// Nothing is matched unless everything before the first message and the first message are
// equal.

// chatRecall keeps the last few Chat bodies (references to their pooled buffers) with the
// walk's state after each message; bounded like anthropic.Recall.
type chatRecall struct {
	mu      sync.Mutex
	entries []*chatRecalled // most recent first
	bytes   int
}

const (
	maxChatRecalled      = 8
	maxChatRecalledBytes = 16 << 20
	minChatRecalled      = 64 << 10
)

type chatRecalled struct {
	tag           string // the exchange the body was remembered for
	body          *requestBody
	start         int
	first, second anthropic.Span
	marks         []chatMark
	refs          atomic.Int32
}

// chatMark is the walk's state after message count-1, which ends at end: what the messages so
// far gave the peek.
type chatMark struct {
	end, count, maxToolResult int
	engine                    bool
}

func (e *chatRecalled) unref() {
	if e.refs.Add(-1) == 0 {
		e.body.unref()
	}
}

// scan starts one peek's use of the recall for a body of n bytes (nil: too small to pay).
func (rc *chatRecall) scan(n int) *chatRecallScan {
	if n < minChatRecalled {
		return nil
	}
	return &chatRecallScan{rc: rc}
}

// candidates returns the entries whose first message starts at start, each with a reference.
func (rc *chatRecall) candidates(start int) []*chatRecalled {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var out []*chatRecalled
	for _, e := range rc.entries {
		if e.start == start {
			e.refs.Add(1)
			out = append(out, e)
		}
	}
	return out
}

// remember keeps body (taking a reference of its own) with what rs learnt of it, for exchange
// tag; the entry it repeats is replaced.
func (rc *chatRecall) remember(body *requestBody, rs *chatRecallScan, tag string) {
	if rs == nil || len(rs.marks) == 0 || len(body.buf) > maxChatRecalledBytes/2 {
		return
	}
	body.retain()
	e := &chatRecalled{tag: tag, body: body, start: rs.start, first: rs.first, second: rs.second, marks: rs.marks}
	e.refs.Store(1)
	var drop []*chatRecalled
	rc.mu.Lock()
	kept := make([]*chatRecalled, 0, len(rc.entries)+1)
	kept = append(kept, e)
	for _, old := range rc.entries {
		if old == rs.used {
			drop = append(drop, old)
			rc.bytes -= len(old.body.buf)
			continue
		}
		kept = append(kept, old)
	}
	rc.bytes += len(body.buf)
	for len(kept) > maxChatRecalled || rc.bytes > maxChatRecalledBytes {
		last := kept[len(kept)-1]
		kept = kept[:len(kept)-1]
		rc.bytes -= len(last.body.buf)
		drop = append(drop, last)
	}
	rc.entries = kept
	rc.mu.Unlock()
	for _, old := range drop {
		old.unref()
	}
}

// chatRecallScan is one peek's use of the recall: the marks it makes and the entry it used,
// whose first shared bytes the body repeats.
type chatRecallScan struct {
	rc            *chatRecall
	start         int
	first, second anthropic.Span
	marks         []chatMark
	used          *chatRecalled
	shared        int
	entered       bool
}

// repeats says which remembered exchange's body this one starts with, and for how many bytes
// (through the end of a message); ok false when none. The history stores those bytes as a
// reference to that body without reading them (store/bodies.go).
func (rs *chatRecallScan) repeats() (tag string, shared int, ok bool) {
	if rs == nil || rs.used == nil {
		return "", 0, false
	}
	return rs.used.tag, rs.shared, true
}

// messageEnds are where the body's messages end, ascending.
func (rs *chatRecallScan) messageEnds() []int {
	if rs == nil {
		return nil
	}
	ends := make([]int, len(rs.marks))
	for i, m := range rs.marks {
		ends[i] = m.end
	}
	return ends
}

// enter is called at each messages key: marks are of one array, so a body that repeats the
// key is neither recalled further nor remembered.
func (rs *chatRecallScan) enter() *chatRecallScan {
	if rs == nil {
		return nil
	}
	if rs.entered {
		rs.marks, rs.used = nil, nil
		return nil
	}
	rs.entered = true
	return rs
}

// skip is called at the first message (at mi): when a recent body repeats this one from its
// start through one message or more, it returns the walk's state after the last of them.
func (rs *chatRecallScan) skip(a *anthropic.Arriving, mi int) (chatMark, bool) {
	rs.start = mi
	b := a.Body()
	cands := rs.rc.candidates(mi)
	defer func() {
		for _, e := range cands {
			e.unref()
		}
	}()
	for _, e := range cands {
		prev := e.body.buf
		if !a.Has(mi) || !bytes.Equal(b[:mi], prev[:mi]) {
			continue
		}
		k, from := -1, mi
		for j, m := range e.marks {
			if !a.Has(m.end) || !bytes.Equal(b[from:m.end], prev[from:m.end]) {
				break
			}
			k, from = j, m.end
		}
		if k < 0 {
			continue
		}
		rs.marks = append(make([]chatMark, 0, len(e.marks)+4), e.marks[:k+1]...)
		rs.first, rs.used, rs.shared = e.first, e, from
		if k >= 1 {
			rs.second = e.second
		}
		return e.marks[k], true
	}
	return chatMark{}, false
}

// mark records the state after a message the walk read itself, spanning sp.
func (rs *chatRecallScan) mark(m chatMark, sp anthropic.Span) {
	switch m.count {
	case 1:
		rs.first = sp
	case 2:
		rs.second = sp
	}
	rs.marks = append(rs.marks, m)
}
