// Package recall remembers recent request bodies with what a peek learnt at the end of each of
// their messages. A session's next turn repeats the previous request but for its end, so a peek
// that finds the messages it is reading equal, byte for byte, to a remembered body's takes the
// state it had after the last equal message and reads only the rest: equal bytes give equal
// state, so the result is the full peek's. The Messages peek (proxy/anthropic) and the Chat
// Completions peek (proxy) each keep a Memory of their own marks.
//
// Nothing is matched unless everything before the first message (model, system prompt, tools)
// and the whole first message are equal, so a remembered body says nothing to a request that
// does not already hold its whole conversation up to there.
package recall

import (
	"bytes"
	"sync"
	"sync/atomic"
)

// Bounds of a Memory. A body below MinBody is peeked in microseconds; the rest keep at most
// MaxEntries bodies and maxBytes of them (one conversation usually holds one entry: a body that
// repeats an entry replaces it). A body above MaxBody is never kept, so a peek need not mark
// it: its marks would be thrown away, and a body of tiny messages has one per 30 bytes.
const (
	MinBody    = 64 << 10
	MaxBody    = maxBytes / 2
	MaxEntries = 8
	maxBytes   = 16 << 20
)

// Kept reports whether a body of n bytes may be remembered: whether a peek should mark it.
func Kept(n int) bool { return n >= MinBody && n <= MaxBody }

// Mark is a peek's state right after a message: End is where that message ends.
type Mark interface{ End() int }

// Ends returns where each marked message ends (byte offsets, ascending): what the history
// cuts a session's bodies at.
func Ends[M Mark](marks []M) []int {
	ends := make([]int, len(marks))
	for i, m := range marks {
		ends[i] = m.End()
	}
	return ends
}

// Entry is a remembered body: its bytes (the caller's, lent until Release runs), where its first
// message starts, the peek's state after each message (Marks) and what else the peek keeps of it
// (Info).
type Entry[M Mark, I any] struct {
	Tag   string // the exchange the body was remembered for
	Note  any    // the caller's
	Body  []byte
	Start int
	Marks []M
	Info  I
	// Release gives Body back; it runs once, when the Memory has let go of the entry and no
	// match reads it any more. Nil: nothing to give back.
	Release func()
	refs    atomic.Int32
}

func (e *Entry[M, I]) unref() {
	if e.refs.Add(-1) == 0 && e.Release != nil {
		e.Release()
	}
}

// Found is what a match found: the remembered body (by its Tag and Note) whose first Shared
// bytes the body repeats, the peek's state after each of those messages (a copy the caller
// may extend) and the entry's Info.
type Found[M Mark, I any] struct {
	Tag    string
	Note   any
	Shared int
	Marks  []M
	Info   I
}

// Memory is safe for concurrent use; its zero value is empty and ready.
type Memory[M Mark, I any] struct {
	mu      sync.Mutex
	entries []*Entry[M, I] // most recent first
	bytes   int
}

// Remember keeps e, which repeats the entry remembered under repeats ("" none) and takes its
// place; past the bounds the oldest entries go. An entry without marks, or too large to keep,
// is released at once.
func (m *Memory[M, I]) Remember(e *Entry[M, I], repeats string) {
	if len(e.Marks) == 0 || len(e.Body) > MaxBody {
		if e.Release != nil {
			e.Release()
		}
		return
	}
	e.refs.Store(1)
	var drop []*Entry[M, I]
	m.mu.Lock()
	kept := make([]*Entry[M, I], 0, len(m.entries)+1)
	kept = append(kept, e)
	for _, old := range m.entries {
		if repeats != "" && old.Tag == repeats {
			drop = append(drop, old)
			m.bytes -= len(old.Body)
			continue
		}
		kept = append(kept, old)
	}
	m.bytes += len(e.Body)
	for len(kept) > MaxEntries || m.bytes > maxBytes {
		last := kept[len(kept)-1]
		kept = kept[:len(kept)-1]
		m.bytes -= len(last.Body)
		drop = append(drop, last)
	}
	m.entries = kept
	m.mu.Unlock()
	for _, old := range drop {
		old.unref()
	}
}

// Forget drops every entry (each is released once no match reads it).
func (m *Memory[M, I]) Forget() {
	m.mu.Lock()
	entries := m.entries
	m.entries, m.bytes = nil, 0
	m.mu.Unlock()
	for _, e := range entries {
		e.unref()
	}
}

// Len is how many entries the Memory holds.
func (m *Memory[M, I]) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.entries)
}

// Match compares body, whose first message starts at start, with the remembered bodies whose
// first message starts there too, message by message: has(n) reports whether body's first n
// bytes are in (it may wait for them as the body arrives). onFirst, when not nil, is called as
// soon as a body's first message is found equal, with what is known so far. ok is false when
// no remembered body repeats body through its first message.
func (m *Memory[M, I]) Match(body []byte, start int, has func(n int) bool, onFirst func(Found[M, I])) (found Found[M, I], ok bool) {
	cands := m.candidates(start)
	defer func() {
		for _, e := range cands {
			e.unref()
		}
	}()
	for _, e := range cands {
		if !has(start) || !bytes.Equal(body[:start], e.Body[:start]) {
			continue
		}
		k, from := -1, start
		for j, mk := range e.Marks {
			end := mk.End()
			if !has(end) || !bytes.Equal(body[from:end], e.Body[from:end]) {
				break
			}
			k, from = j, end
			if j == 0 && onFirst != nil {
				onFirst(Found[M, I]{Tag: e.Tag, Note: e.Note, Shared: end, Info: e.Info})
			}
		}
		if k < 0 {
			continue
		}
		marks := append(make([]M, 0, len(e.Marks)+4), e.Marks[:k+1]...)
		return Found[M, I]{Tag: e.Tag, Note: e.Note, Shared: from, Marks: marks, Info: e.Info}, true
	}
	return Found[M, I]{}, false
}

// candidates returns the entries whose first message starts at start, each with a reference
// the caller drops.
func (m *Memory[M, I]) candidates(start int) []*Entry[M, I] {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*Entry[M, I]
	for _, e := range m.entries {
		if e.Start == start {
			e.refs.Add(1)
			out = append(out, e)
		}
	}
	return out
}
