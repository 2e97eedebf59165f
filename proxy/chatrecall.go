package proxy

import (
	"longhaul/proxy/anthropic"
	"longhaul/proxy/recall"
)

// The recall of the Chat Completions peek, as anthropic.Recall is the Messages peek's
// (proxy/recall): a session's next turn repeats the previous request but for its end, so the
// peek compares the messages it repeats with a recent body's (bytes.Equal as they arrive) and
// takes the walk's state after the last equal one instead of walking them again. Equal bytes
// walk to equal state, so the result is the full walk's (TestChatRecallPeeksAsAFullWalk,
// FuzzChatRecall).

// chatRecall keeps the last few Chat bodies (references to their pooled buffers) with the
// walk's state after each message.
type chatRecall struct {
	mem recall.Memory[chatMark, chatSpans]
}

// chatSpans are where a remembered body's first two messages are: the peek reports them.
type chatSpans struct{ first, second anthropic.Span }

// chatMark is the walk's state after message count-1, which ends at end: what the messages so
// far gave the peek. There is one per message, so it is kept small (int32: only bodies of up
// to recall.MaxBody are marked).
type chatMark struct {
	end, count, maxToolResult int32
	engine                    bool
}

// End is where the message ends (recall.Mark).
func (m chatMark) End() int { return int(m.end) }

// scan starts one peek's use of the recall for a body of n bytes (nil: too small to pay, or
// too large to keep).
func (rc *chatRecall) scan(n int) *chatRecallScan {
	if !recall.Kept(n) {
		return nil
	}
	return &chatRecallScan{rc: rc}
}

// remember keeps body (taking a reference of its own) with what rs learnt of it, for exchange
// tag; the entry it repeats is replaced.
func (rc *chatRecall) remember(body *requestBody, rs *chatRecallScan, tag string) {
	if rs == nil || len(rs.marks) == 0 {
		return
	}
	body.retain()
	rc.mem.Remember(&recall.Entry[chatMark, chatSpans]{
		Tag: tag, Body: body.buf, Start: rs.start, Marks: rs.marks,
		Info: chatSpans{rs.first, rs.second}, Release: body.unref,
	}, rs.used)
}

// chatRecallScan is one peek's use of the recall: the marks it makes and the remembered
// exchange it used (""), whose first shared bytes the body repeats.
type chatRecallScan struct {
	rc            *chatRecall
	start         int
	first, second anthropic.Span
	marks         []chatMark
	used          string
	shared        int
	entered       bool
}

// repeats says which remembered exchange's body this one starts with, and for how many bytes
// (through the end of a message); ok false when none. The history stores those bytes as a
// reference to that body without reading them (store/bodies.go).
func (rs *chatRecallScan) repeats() (tag string, shared int, ok bool) {
	if rs == nil || rs.used == "" {
		return "", 0, false
	}
	return rs.used, rs.shared, true
}

// messageEnds are where the body's messages end, ascending.
func (rs *chatRecallScan) messageEnds() []int {
	if rs == nil {
		return nil
	}
	return recall.Ends(rs.marks)
}

// enter is called at each messages key: marks are of one array, so a body that repeats the
// key is neither recalled further nor remembered.
func (rs *chatRecallScan) enter() *chatRecallScan {
	if rs == nil {
		return nil
	}
	if rs.entered {
		rs.marks, rs.used = nil, ""
		return nil
	}
	rs.entered = true
	return rs
}

// skip is called at the first message (at mi): when a recent body repeats this one from its
// start through one message or more, it returns the walk's state after the last of them.
func (rs *chatRecallScan) skip(a *anthropic.Arriving, mi int) (chatMark, bool) {
	rs.start = mi
	f, ok := rs.rc.mem.Match(a.Body(), mi, a.Has, nil)
	if !ok {
		return chatMark{}, false
	}
	rs.marks, rs.first, rs.used, rs.shared = f.Marks, f.Info.first, f.Tag, f.Shared
	if len(f.Marks) >= 2 {
		rs.second = f.Info.second
	}
	return f.Marks[len(f.Marks)-1], true
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
