package anthropic

import (
	"io"
	"slices"

	"longhaul/proxy/recall"
)

// A session's next request repeats its previous one but for the last turn: late in a Claude
// Code session that is 800 KB said again, and scanning it again was most of what the proxy
// spent on such a request. Recall remembers recent bodies and the peek's state after each of
// their messages (proxy/recall); a peek that finds the messages it is reading equal, byte for
// byte, to a remembered body's takes that body's state at the last equal message and scans only
// the rest. Equal bytes scan to equal state (the scanner is a function of the bytes it read), so
// the Peek is exactly the one a full scan gives (TestRecallPeeksAsAFullScan, FuzzRecall).
//
// Comparing is a memequal, several times faster than scanning, and it is done as the body
// arrives, message by message.

// Recall is safe for concurrent use. The zero value is not usable; use NewRecall.
type Recall struct {
	mem recall.Memory[mark, markInfo]
}

// NewRecall returns an empty Recall.
func NewRecall() *Recall { return &Recall{} }

// mark is the message scan's state right after a message, in 16 bytes: the message's span
// (with the previous mark's, the state's last two spans; the marks' count is its message
// count) and which entry of the body's counter table holds the rest. A full msgScan is 120
// bytes, and a body of one-letter messages has a message every 30 bytes: marks of whole states
// took four times the body (the security issue of 900k messages in 29 MB). Offsets fit in
// int32: only bodies of up to recall.MaxBody are marked.
type mark struct {
	start, end int32
	counters   int32
	blocks     int32 // MessageStats.Blocks, which most messages change
}

// End is where the message ends (recall.Mark).
func (m mark) End() int { return int(m.end) }

func (m mark) span() Span { return Span{int(m.start), int(m.end)} }

// markInfo is what a remembered body keeps beside its marks: its first message's span and the
// counter table the marks index. A new entry is added only when the counters change, which
// most messages do not.
type markInfo struct {
	first    Span
	counters []scanCounters
}

// scanCounters is a msgScan but for its message count and last spans, which the marks hold.
type scanCounters struct {
	maxToolContent, images, toolImages, thinking, signed, redacted int32
	heldToolImages, heldSaved                                      int32
	savedNotice                                                    bool
}

func countersOf(ms *msgScan) scanCounters {
	st := &ms.stats
	return scanCounters{
		maxToolContent: int32(st.MaxToolContent), images: int32(st.Images), toolImages: int32(st.ToolImages),
		thinking: int32(st.Thinking), signed: int32(st.Signed), redacted: int32(st.Redacted),
		heldToolImages: int32(ms.toolImages), heldSaved: int32(ms.saved), savedNotice: st.SavedNotice,
	}
}

// scanAfter is the msgScan after the last of marks, whose counters are in table.
func scanAfter(marks []mark, table []scanCounters) msgScan {
	k := len(marks) - 1
	c := table[marks[k].counters]
	ms := msgScan{
		stats: MessageStats{
			Count: len(marks), Blocks: int(marks[k].blocks), MaxToolContent: int(c.maxToolContent), Images: int(c.images), ToolImages: int(c.toolImages),
			Thinking: int(c.thinking), Signed: int(c.signed), Redacted: int(c.redacted), SavedNotice: c.savedNotice,
		},
		toolImages: int(c.heldToolImages), saved: int(c.heldSaved),
	}
	ms.stats.LastSpans[1] = marks[k].span()
	if k > 0 {
		ms.stats.LastSpans[0] = marks[k-1].span()
	}
	return ms
}

// Marks is what a peek learnt of a body that Remember needs: where its messages start and
// end, and the scan's state after each.
type Marks struct {
	start int
	info  markInfo
	marks []mark
}

// MessageEnds returns where each message of the body ends (byte offsets, ascending).
func (m *Marks) MessageEnds() []int {
	if m == nil {
		return nil
	}
	return recall.Ends(m.marks)
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
	if recall.Kept(len(body)) {
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
	if m == nil {
		release()
		return
	}
	repeats := ""
	if found.Shared > 0 {
		repeats = found.Tag
	}
	rc.mem.Remember(&recall.Entry[mark, markInfo]{Tag: tag, Note: note, Body: body, Start: m.start, Marks: m.marks, Info: m.info, Release: release}, repeats)
}

// Forget drops every remembered body (their release runs once nothing reads them).
func (rc *Recall) Forget() { rc.mem.Forget() }

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
	arrived := func(n int) bool {
		for s.n < n && s.fill() {
		}
		return s.n >= n
	}
	var onFirst func(recall.Found[mark, markInfo])
	if rs.onFound != nil {
		onFirst = func(f recall.Found[mark, markInfo]) {
			rs.onFound(Recollection{Tag: f.Tag, Note: f.Note, Shared: f.Shared})
		}
	}
	f, ok := rs.rc.mem.Match(s.b, start, arrived, onFirst)
	if !ok {
		return Span{}, false
	}
	last := f.Marks[len(f.Marks)-1]
	s.i = int(last.end)
	*ms = scanAfter(f.Marks, f.Info.counters)
	rs.found = Recollection{Tag: f.Tag, Note: f.Note, Shared: s.i}
	// The table is the entry's: clipped, so this scan's appends copy it instead of writing
	// into what another scan may read.
	rs.marks.info = markInfo{first: f.Info.first, counters: slices.Clip(f.Info.counters[:last.counters+1])}
	rs.marks.marks = f.Marks
	return f.Info.first, true
}

// mark records the state after a message the scan read itself.
func (rs *recallScan) mark(end int, ms *msgScan) {
	m := &rs.marks
	if len(m.marks) == 0 {
		m.info.first = ms.stats.LastSpans[1]
	}
	c := countersOf(ms)
	if n := len(m.info.counters); n == 0 || m.info.counters[n-1] != c {
		m.info.counters = append(m.info.counters, c)
	}
	m.marks = append(m.marks, mark{start: int32(ms.stats.LastSpans[1].Start), end: int32(end),
		counters: int32(len(m.info.counters) - 1), blocks: int32(ms.stats.Blocks)})
}
