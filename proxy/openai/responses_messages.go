package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"slices"
	"unicode/utf8"

	"longhaul/proxy/anthropic"
)

// responsesMessages writes the messages array of a Messages request straight
// into the output, turn by turn, as the items are read: consecutive items of
// one role merge into one turn, and nothing is built per item but the bytes
// themselves (an 800 KB conversation once cost ten thousand allocations in
// per-block segment lists). The members that precede messages (model,
// max_tokens, system) are known only after the items, which may hold system
// texts; they go into room kept before the messages (finish).
type responsesMessages struct {
	out        []byte
	gap        int    // bytes kept before the messages for the members ahead of them
	role       string // the open turn's role; "" when none is open
	pending    []byte // the open turn's string content, written when it closes; nil once it holds blocks
	blocks     int    // blocks written in the open turn
	start      int    // offset of the last block begun
	firstOther int    // offset of the open user turn's first block that is not a tool_result; -1 for none
	n          int    // messages written, stored ones included
	calls      responsesCalls
}

// newResponsesMessages keeps gap bytes for the members ahead of the messages
// and room for size more.
func newResponsesMessages(gap, size int) *responsesMessages {
	out := make([]byte, gap, gap+size)
	return &responsesMessages{out: append(out, '['), gap: gap, firstOther: -1}
}

// message writes a complete stored message as a turn of its own.
func (t *responsesMessages) message(raw []byte) {
	t.close()
	t.next()
	t.out = append(t.out, raw...)
}

func (t *responsesMessages) next() {
	if t.n > 0 {
		t.out = append(t.out, ',')
	}
	t.n++
}

func (t *responsesMessages) open(role string) {
	t.close()
	t.next()
	t.out = append(t.out, `{"role":"`...)
	t.out = append(t.out, role...)
	t.out = append(t.out, `","content":`...)
	t.role = role
}

func (t *responsesMessages) close() {
	switch {
	case t.role == "":
		return
	case t.pending != nil:
		t.out = append(t.out, t.pending...)
		t.out = append(t.out, '}')
	default:
		t.out = append(t.out, "]}"...)
	}
	t.role, t.pending, t.blocks, t.firstOther = "", nil, 0, -1
}

// addString adds a string content (a raw JSON string): a turn of its own
// that stays a string unless an item of the same role follows.
func (t *responsesMessages) addString(role string, raw []byte) {
	if t.role == role {
		if !isEmptyJSONString(raw) {
			t.begin(role, false)
			t.out = appendResponsesTextBlock(t.out, raw)
		}
		return
	}
	t.open(role)
	t.pending = raw
}

// begin starts a block in a turn of role (the open one when its role
// matches); the caller then appends the block's JSON to t.out, and after a
// tool_result calls placeToolResult.
func (t *responsesMessages) begin(role string, toolResult bool) {
	switch {
	case t.role != role:
		t.open(role)
		t.out = append(t.out, '[')
	case t.pending != nil:
		// A string content becomes the turn's first block (none if empty:
		// Messages refuses empty text blocks).
		raw := t.pending
		t.pending = nil
		t.out = append(t.out, '[')
		if !isEmptyJSONString(raw) {
			t.noteBlock(false)
			t.out = appendResponsesTextBlock(t.out, raw)
		}
	}
	if t.blocks > 0 {
		t.out = append(t.out, ',')
	}
	t.noteBlock(toolResult)
}

func (t *responsesMessages) noteBlock(toolResult bool) {
	t.blocks++
	t.start = len(t.out)
	if !toolResult && t.role == "user" && t.firstOther < 0 {
		t.firstOther = t.start
	}
}

// placeToolResult moves the tool_result just written ahead of the user
// turn's other blocks: Messages wants a turn's tool_result blocks first. The
// order among results and among the others stays (as a stable sort would).
func (t *responsesMessages) placeToolResult() {
	if t.firstOther < 0 {
		return
	}
	// out[p:] is the others, a comma, then the result: three reversals
	// make it the result, a comma, then the others, in place.
	p, n := t.firstOther, len(t.out)-t.start
	slices.Reverse(t.out[p:])
	slices.Reverse(t.out[p : p+n])
	slices.Reverse(t.out[p+n+1:])
	t.firstOther += n + 1
}

// add writes a block given as segments.
func (t *responsesMessages) add(role string, block responsesBlock) {
	toolResult := responsesBlockRank(block) == 0
	t.begin(role, toolResult)
	for _, seg := range block {
		t.out = append(t.out, seg...)
	}
	if toolResult {
		t.placeToolResult()
	}
}

// finish closes the messages and puts head (the members ahead of them, up
// to `"messages":`) in front, returning the request so far.
func (t *responsesMessages) finish(head []byte) []byte {
	t.close()
	t.out = append(t.out, ']')
	if len(head) <= t.gap {
		start := t.gap - len(head)
		copy(t.out[start:], head)
		return t.out[start:]
	}
	// The system texts of the items outgrew the room: move the messages up.
	extra, n := len(head)-t.gap, len(t.out)
	t.out = slices.Grow(t.out, extra)[:n+extra]
	copy(t.out[t.gap+extra:], t.out[t.gap:n])
	copy(t.out, head)
	return t.out
}

func appendResponsesTextBlock(out, rawText []byte) []byte {
	out = append(out, `{"type":"text","text":`...)
	out = append(out, rawText...)
	return append(out, '}')
}

// responsesCalls keeps the call ids of tool calls in order and which have an
// output, without a string per id: ids are byte slices of the body, found by
// their hash.
type responsesCalls struct {
	seed  maphash.Seed
	index map[uint64]int32 // hash of an id → its entry in list
	list  []responsesCall
}

type responsesCall struct {
	id       []byte
	call     bool  // a tool call has the id (a stored tool_result may come first)
	answered bool  // a tool output has it
	prev     int32 // an earlier entry with the same hash; -1 for none
}

func (c *responsesCalls) find(id []byte) (h uint64, i int32) {
	if c.index == nil {
		c.seed, c.index = maphash.MakeSeed(), map[uint64]int32{}
	}
	h = maphash.Bytes(c.seed, id)
	i, ok := c.index[h]
	if !ok {
		return h, -1
	}
	for ; i >= 0 && !bytes.Equal(c.list[i].id, id); i = c.list[i].prev {
	}
	return h, i
}

func (c *responsesCalls) entry(id []byte) *responsesCall {
	h, i := c.find(id)
	if i >= 0 {
		return &c.list[i]
	}
	prev, ok := c.index[h]
	if !ok {
		prev = -1
	}
	c.index[h] = int32(len(c.list))
	c.list = append(c.list, responsesCall{id: id, prev: prev})
	return &c.list[len(c.list)-1]
}

// add records a tool call's id.
func (c *responsesCalls) add(id []byte) { c.entry(id).call = true }

// answer records a tool output for a call; false when no call has the id.
func (c *responsesCalls) answer(id []byte) bool {
	_, i := c.find(id)
	if i < 0 || !c.list[i].call {
		return false
	}
	c.list[i].answered = true
	return true
}

// answerStored records a stored tool_result, whether or not its call is known.
func (c *responsesCalls) answerStored(id []byte) { c.entry(id).answered = true }

// unanswered is the first call without an output, nil when none.
func (c *responsesCalls) unanswered() []byte {
	for _, e := range c.list {
		if e.call && !e.answered {
			return e.id
		}
	}
	return nil
}

// responsesArray reads a JSON array of objects one element at a time, with
// the members the translation reads (responsesEachElement as a loop: an
// element handed to a callback escaped to the heap, 800 bytes per array).
type responsesArray struct {
	arr  []byte
	i, n int // offset of the next element; elements read
	e    responsesElem
	err  error
	done bool
}

func newResponsesArray(arr []byte) responsesArray {
	a := responsesArray{arr: arr, n: -1}
	if len(arr) == 0 || arr[0] != '[' {
		a.err, a.done = fmt.Errorf("expected an array"), true
		return a
	}
	a.i = skipResponsesWS(arr, 1)
	if a.i < len(arr) && arr[a.i] == ']' {
		a.done, a.i = true, a.i+1
	}
	return a
}

// next reads the next element into e; false at the end or at an
// error (err).
func (a *responsesArray) next() bool {
	if a.done {
		return false
	}
	arr, i := a.arr, a.i
	if i >= len(arr) || arr[i] != '{' {
		a.err, a.done = fmt.Errorf("expected an object at byte %d", i), true
		return false
	}
	obj := arr[i:]
	a.e.f = responsesFields{}
	end, err := a.e.f.walk(obj)
	if err != nil {
		a.err, a.done = err, true
		return false
	}
	a.e.raw = obj[:end]
	a.n++
	i = skipResponsesWS(arr, i+end)
	switch {
	case i >= len(arr):
		a.err, a.done = fmt.Errorf("unterminated array"), true
		// The element is good; the error shows after it, as with
		// responsesEachElement.
		return true
	case arr[i] == ',':
		a.i = skipResponsesWS(arr, i+1)
	case arr[i] == ']':
		a.i, a.done = i+1, true
	default:
		a.err, a.done = fmt.Errorf("expected ',' or ']' at byte %d", i), true
	}
	return true
}

// appendResponsesArguments appends a function_call's arguments (a JSON
// string holding a JSON object) as a tool_use input, decoding the string
// straight into out; item names the item in errors. It decodes as
// anthropic.Unquote does (invalid UTF-8 takes the slow way, which replaces it).
func appendResponsesArguments(out, raw []byte, item func() string) ([]byte, error) {
	if !isJSONString(raw) || !utf8.Valid(raw) {
		args, err := responsesArguments(raw, item())
		return append(out, args...), err
	}
	start := len(out)
	out, ok := appendJSONUnquoted(out, raw)
	if !ok {
		args, err := responsesArguments(raw, item())
		return append(out[:start], args...), err
	}
	s := bytes.TrimSpace(out[start:])
	if len(s) == 0 {
		return append(out[:start], "{}"...), nil
	}
	n := copy(out[start:], s)
	out = out[:start+n]
	if s = out[start:]; s[0] != '{' || !json.Valid(s) {
		return out[:start], responsesBadRequest(item()+".arguments", "Invalid 'arguments': expected a JSON object, as the function's parameters describe.")
	}
	return out[:start+compactInPlace(s)], nil
}

// compactInPlace drops the insignificant whitespace of valid JSON (as
// json.Compact does) and returns the new length.
func compactInPlace(b []byte) int {
	if bytes.IndexAny(b, " \t\r\n") < 0 {
		return len(b)
	}
	n, inString := 0, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case inString && c == '\\':
			b[n], b[n+1] = c, b[i+1]
			n += 2
			i++
			continue
		case c == '"':
			inString = !inString
		case !inString && (c == ' ' || c == '\t' || c == '\r' || c == '\n'):
			continue
		}
		b[n] = c
		n++
	}
	return n
}

// appendJSONUnquoted appends the contents of a valid JSON string (its
// escapes checked by responsesCheckStrings) decoded; false for a \u escape
// that is not a valid code point or pair, which the caller leaves to
// anthropic.Unquote.
func appendJSONUnquoted(out, raw []byte) ([]byte, bool) {
	in := raw[1 : len(raw)-1]
	for {
		k := bytes.IndexByte(in, '\\')
		if k < 0 {
			return append(out, in...), true
		}
		out = append(out, in[:k]...)
		if k+1 >= len(in) {
			return out, false
		}
		switch c := in[k+1]; c {
		case '"', '\\', '/':
			out = append(out, c)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := anthropic.Hex4(in[k+2:])
			if !ok || r >= 0xd800 && r < 0xe000 {
				return out, false // surrogates: the slow way
			}
			out = utf8.AppendRune(out, r)
			in = in[k+6:]
			continue
		default:
			return out, false
		}
		in = in[k+2:]
	}
}

// appendRawInner appends the contents of a raw JSON string without its
// quotes (nothing for a value that is not a string).
func appendRawInner(out, raw []byte) []byte {
	if !isJSONString(raw) {
		return out
	}
	return append(out, raw[1:len(raw)-1]...)
}
