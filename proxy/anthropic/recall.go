package anthropic

import (
	"bytes"
	"io"
	"sync"
	"sync/atomic"
)

// A session's next request repeats its previous one but for the last turn: late in a Claude
// Code session that is 800 KB said again, and scanning it again was most of what the proxy
// spent on such a request. Recall remembers recent bodies and the peek's state after each of
// their messages; a peek that finds the messages it is reading equal, byte for byte, to a
// remembered body's takes that body's state at the last equal message and scans only the
// rest. Equal bytes scan to equal state (the scanner is a function of the bytes it read), so
// the Peek is exactly the one a full scan gives (TestRecallPeeksAsAFullScan, FuzzRecall).
//
// Comparing is a memequal, several times faster than scanning, and it is done as the body
// arrives, message by message. Nothing is matched unless everything before the first message
// (model, system prompt, tools) and the whole first message are equal, so a recalled body
// says nothing to a request that does not already hold its whole conversation up to there.

// Recall's bounds. A body below minRecalled is scanned in microseconds; the rest keep at most
// maxRecalled bodies and maxRecalledBytes of them (one conversation usually holds one entry:
// a body that repeats an entry replaces it).
const (
	minRecalled      = 64 << 10
	maxRecalled      = 8
	maxRecalledBytes = 16 << 20
)

// Recall is safe for concurrent use. The zero value is not usable; use NewRecall.
type Recall struct {
	mu      sync.Mutex
	entries []*recalled // most recent first
	bytes   int
}

// NewRecall returns an empty Recall.
func NewRecall() *Recall { return &Recall{} }

// recalled is a remembered body: its bytes (the caller's buffer, lent until release), where
// its first message starts, and the peek's state after each message.
type recalled struct {
	tag     string
	note    any
	body    []byte
	start   int
	first   Span
	marks   []mark
	refs    atomic.Int32
	release func()
}

// mark is the message scan's state right after a message that ends at end.
type mark struct {
	end int
	ms  msgScan
}

func (e *recalled) unref() {
	if e.refs.Add(-1) == 0 && e.release != nil {
		e.release()
	}
}

// Marks is what a peek learnt of a body that Remember needs: where its messages start and
// end, and the scan's state after each.
type Marks struct {
	start int
	first Span
	marks []mark
}

// MessageEnds returns where each message of the body ends (byte offsets, ascending).
func (m *Marks) MessageEnds() []int {
	if m == nil {
		return nil
	}
	ends := make([]int, len(m.marks))
	for i, mk := range m.marks {
		ends[i] = mk.end
	}
	return ends
}

// Recollection is what a peek with a Recall found: the remembered body (by the tag and note it
// was remembered with) whose first Shared bytes this body repeats exactly; Shared is 0 when
// none.
type Recollection struct {
	Tag    string
	Note   any
	Shared int
}

// ReadAndPeek is ReadAndPeek with the recall: it also returns what the body repeats of a
// remembered one, and the marks that remember this one. onFound, when not nil, is called as
// soon as the body's first message is found to repeat a remembered body's (with Shared the
// bytes checked so far), while the rest still arrives.
func (rc *Recall) ReadAndPeek(r io.Reader, body []byte, onFound func(Recollection)) (Peek, Recollection, *Marks, error) {
	s := &scanner{b: body, r: r}
	var rs *recallScan
	if len(body) >= minRecalled {
		rs = &recallScan{rc: rc, onFound: onFound}
		s.recall = rs
	}
	p, err := peek(s)
	switch {
	case s.readErr != nil:
		err = &ReadError{s.readErr}
	case err == nil && s.n < len(body):
		err = &ReadError{io.ErrUnexpectedEOF}
	}
	if rs == nil || err != nil {
		return p, Recollection{}, nil, err
	}
	return p, rs.found, &rs.marks, nil
}

// Remember keeps body under tag, with the caller's note, for later peeks. The Recall may keep
// body until it calls release (once), which it does at once when it keeps nothing: body must
// not change before. A body that repeats a remembered one (found by the peek that made marks)
// takes its place.
func (rc *Recall) Remember(tag string, note any, body []byte, m *Marks, found Recollection, release func()) {
	if m == nil || len(m.marks) == 0 || len(body) > maxRecalledBytes/2 {
		release()
		return
	}
	e := &recalled{tag: tag, note: note, body: body, start: m.start, first: m.first, marks: m.marks, release: release}
	e.refs.Store(1)
	var drop []*recalled
	rc.mu.Lock()
	kept := rc.entries[:0]
	for _, old := range rc.entries {
		if found.Shared > 0 && old.tag == found.Tag {
			drop = append(drop, old)
			rc.bytes -= len(old.body)
			continue
		}
		kept = append(kept, old)
	}
	rc.entries = append(kept[:len(kept):len(kept)], nil)
	copy(rc.entries[1:], rc.entries)
	rc.entries[0] = e
	rc.bytes += len(body)
	for len(rc.entries) > maxRecalled || rc.bytes > maxRecalledBytes {
		last := rc.entries[len(rc.entries)-1]
		rc.entries = rc.entries[:len(rc.entries)-1]
		rc.bytes -= len(last.body)
		drop = append(drop, last)
	}
	rc.mu.Unlock()
	for _, old := range drop {
		old.unref()
	}
}

// Forget drops every remembered body (their release runs once nothing reads them).
func (rc *Recall) Forget() {
	rc.mu.Lock()
	entries := rc.entries
	rc.entries, rc.bytes = nil, 0
	rc.mu.Unlock()
	for _, e := range entries {
		e.unref()
	}
}

// candidates returns the remembered bodies whose first message starts at start, each with a
// reference the caller drops.
func (rc *Recall) candidates(start int) []*recalled {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var out []*recalled
	for _, e := range rc.entries {
		if e.start == start {
			e.refs.Add(1)
			out = append(out, e)
		}
	}
	return out
}

// recallScan is one peek's use of the recall: what it found and the marks it makes.
type recallScan struct {
	rc      *Recall
	onFound func(Recollection)
	found   Recollection
	marks   Marks
	entered bool
}

// enter is called at each messages key. Marks are of one messages array: a body that repeats
// the key (the last one counts) is neither recalled further nor remembered.
func (rs *recallScan) enter() *recallScan {
	if rs == nil {
		return nil
	}
	if rs.entered {
		rs.found, rs.marks = Recollection{}, Marks{}
		return nil
	}
	rs.entered = true
	return rs
}

// skip is called at the start of the first message (at s.i): when a remembered body repeats
// this one from the start through one message or more, it moves the scanner past the last of
// them, sets ms to the state there and returns the first message's span.
func (rs *recallScan) skip(s *scanner, ms *msgScan) (Span, bool) {
	start := s.i
	rs.marks.start = start
	cands := rs.rc.candidates(start)
	defer func() {
		for _, e := range cands {
			e.unref()
		}
	}()
	for _, e := range cands {
		if !bytes.Equal(s.b[:start], e.body[:start]) {
			continue
		}
		k, from := -1, start
		for j, m := range e.marks {
			for s.n < m.end && s.fill() {
			}
			if s.n < m.end || !bytes.Equal(s.b[from:m.end], e.body[from:m.end]) {
				break
			}
			k, from = j, m.end
			if j == 0 && rs.onFound != nil {
				rs.onFound(Recollection{Tag: e.tag, Note: e.note, Shared: m.end})
			}
		}
		if k < 0 {
			continue
		}
		s.i = e.marks[k].end
		*ms = e.marks[k].ms
		rs.found = Recollection{Tag: e.tag, Note: e.note, Shared: s.i}
		rs.marks.first = e.first
		rs.marks.marks = append(make([]mark, 0, len(e.marks)+4), e.marks[:k+1]...)
		return e.first, true
	}
	return Span{}, false
}

// mark records the state after a message the scan read itself.
func (rs *recallScan) mark(end int, ms *msgScan) {
	if len(rs.marks.marks) == 0 {
		rs.marks.first = ms.stats.LastSpans[1]
	}
	rs.marks.marks = append(rs.marks.marks, mark{end: end, ms: *ms})
}
