package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Request is a Messages API request read as spans of the client's bytes.
// Only messages are broken down (into Message and Block); every other
// top-level member stays raw and is re-emitted as it came, in its original
// order. The body passed to ParseRequest is never written to.
type Request struct {
	body     []byte
	members  []member
	msgIndex int // index of "messages" in members; -1 when absent
	origMsgs int // number of messages in the body

	Model    string
	System   json.RawMessage // nil when absent
	Tools    json.RawMessage // nil when absent
	Thinking json.RawMessage // nil when absent
	Messages []Message
}

// ParseRequest splits body into a Request. It reads messages block by block
// in one pass over the bytes, without decoding text, so it is cheap even for
// megabyte bodies.
func ParseRequest(body []byte) (*Request, error) {
	return ParseRequestCounted(body, 0, 0)
}

// ParseRequestCounted is ParseRequest for a body whose messages and content blocks the caller
// has counted (a Peek's Messages.Count and Messages.Blocks; 0 when unknown): the message list
// is made once at its size, and the blocks of every message are slices of one array made once,
// where appending one by one allocates each list about three to five times over (append grows
// a large slice by a quarter): 53 MB for the list of 100k messages, 385 MB for the blocks of
// 1000 messages of 1000 blocks, for a 26 MB body.
func ParseRequestCounted(body []byte, messages, blocks int) (*Request, error) {
	r := &Request{body: body, msgIndex: -1, Messages: make([]Message, 0, min(messages, MaxMessages))}
	var arena *[]Block
	if blocks > 0 {
		a := make([]Block, 0, min(blocks, len(body)/8)) // a block takes 8 bytes at least: {"a":1}
		arena = &a
	}
	_, err := walkObject(body, 0, func(k []byte, vi int) (int, error) {
		if keyIs(k, "messages") && vi < len(body) && body[vi] == '[' {
			// A repeated key: decoders (and so the upstream) keep the last
			// value, so the engine must edit that one and only that one.
			r.Messages = r.Messages[:0]
			ve, err := walkArray(body, vi, func(ei int) (int, error) {
				msg, end, err := parseMessageAt(body, ei, arena)
				msg.index = len(r.Messages)
				r.Messages = append(r.Messages, msg)
				return end, err
			})
			r.members = append(r.members, member{k, body[vi:max(ve, vi)]})
			r.msgIndex = len(r.members) - 1
			return ve, err
		}
		ve, err := skipValue(body, vi)
		if err != nil {
			return 0, err
		}
		v := body[vi:ve]
		r.members = append(r.members, member{k, v})
		switch {
		case keyIs(k, "model"):
			r.Model = Unquote(v)
		case keyIs(k, "system"):
			r.System = v
		case keyIs(k, "tools"):
			r.Tools = v
		case keyIs(k, "thinking"):
			r.Thinking = v
		}
		return ve, nil
	})
	if err != nil {
		return nil, fmt.Errorf("parse request: %w", err)
	}
	r.origMsgs = len(r.Messages)
	return r, nil
}

// parseMessageAt reads the message at b[i:]. Its blocks are appended to arena when it is not
// nil (one array for every message of a request), and the message's Blocks is the clipped
// slice of them: whoever appends to it copies first.
func parseMessageAt(b []byte, i int, arena *[]Block) (Message, int, error) {
	var m Message
	end, err := walkObject(b, i, func(k []byte, vi int) (int, error) {
		if keyIs(k, "content") {
			// A repeated key: the last value is the one that counts.
			m.Blocks, m.IsString, m.text = nil, false, nil
		}
		switch {
		case keyIs(k, "content") && vi < len(b) && b[vi] == '[' && arena != nil:
			start := len(*arena)
			end, err := walkArray(b, vi, func(ei int) (int, error) {
				blk, be, err := parseBlockAt(b, ei)
				*arena = append(*arena, blk)
				return be, err
			})
			if n := len(*arena); n > start {
				m.Blocks = (*arena)[start:n:n]
			}
			return end, err
		case keyIs(k, "content") && vi < len(b) && b[vi] == '[':
			return walkArray(b, vi, func(ei int) (int, error) {
				blk, be, err := parseBlockAt(b, ei)
				m.Blocks = append(m.Blocks, blk)
				return be, err
			})
		}
		ve, err := skipValue(b, vi)
		if err != nil {
			return 0, err
		}
		switch {
		case keyIs(k, "role"):
			m.Role = role(b[vi:ve])
		case keyIs(k, "content"): // a string
			m.IsString, m.text = true, b[vi:ve]
		}
		return ve, nil
	})
	if err != nil {
		return m, 0, err
	}
	m.raw = b[skipWS(b, i):end]
	return m, end, nil
}

// role is a message's role: the two the API knows without a string of their own each.
func role(raw []byte) string {
	switch string(raw) {
	case `"user"`:
		return "user"
	case `"assistant"`:
		return "assistant"
	}
	return Unquote(raw)
}

// blockType is a block's type, the common ones without a string of their own each.
func blockType(raw []byte) string {
	switch string(raw) {
	case `"text"`:
		return "text"
	case `"tool_use"`:
		return "tool_use"
	case `"tool_result"`:
		return "tool_result"
	case `"thinking"`:
		return "thinking"
	case `"image"`:
		return "image"
	}
	return Unquote(raw)
}

// ParseMessage reads one message (an element of messages).
func ParseMessage(raw []byte) (Message, error) {
	m, _, err := parseMessageAt(raw, 0, nil)
	return m, err
}

// ParseBlocks reads an array of content blocks (a message's or a
// tool_result's content).
func ParseBlocks(arr []byte) ([]Block, error) {
	var out []Block
	_, err := walkArray(arr, 0, func(ei int) (int, error) {
		blk, be, err := parseBlockAt(arr, ei)
		out = append(out, blk)
		return be, err
	})
	return out, err
}

// ParseBlock reads one content block.
func ParseBlock(raw []byte) (Block, error) {
	b, _, err := parseBlockAt(raw, 0)
	return b, err
}

func parseBlockAt(b []byte, i int) (Block, int, error) {
	var blk Block
	if i >= len(b) || b[i] != '{' {
		// Not an object: keep it raw; the upstream will judge it.
		end, err := skipValue(b, i)
		if err != nil {
			return blk, 0, err
		}
		blk.raw = b[i:end]
		return blk, end, nil
	}
	end, err := walkObject(b, i, func(k []byte, vi int) (int, error) {
		ve, err := skipValue(b, vi)
		if err != nil {
			return 0, err
		}
		if keyIs(k, "type") {
			blk.Type = blockType(b[vi:ve])
			return ve, nil
		}
		if len(k) > 2 {
			for fi, name := range fieldNames {
				if keyIs(k, name) {
					blk.f[fi] = fieldSpan{uint32(vi - i), uint32(ve - i)}
					break
				}
			}
		}
		return ve, nil
	})
	if err != nil {
		return blk, 0, err
	}
	blk.raw = b[i:end]
	return blk, end, nil
}

// Encode returns the request as JSON. When no message was added, removed,
// moved or edited it returns the original body slice itself, so an untouched
// request is forwarded byte for byte.
func (r *Request) Encode() []byte {
	if !r.Changed() {
		return r.body
	}
	var buf bytes.Buffer
	buf.Grow(r.encodedSize())
	buf.WriteByte('{')
	wrote := false
	for i, m := range r.members {
		if wrote {
			buf.WriteByte(',')
		}
		wrote = true
		buf.Write(m.key)
		buf.WriteByte(':')
		if i != r.msgIndex {
			buf.Write(m.val)
			continue
		}
		r.writeMessages(&buf)
	}
	if r.msgIndex < 0 {
		if wrote {
			buf.WriteByte(',')
		}
		buf.WriteString(`"messages":`)
		r.writeMessages(&buf)
	}
	buf.WriteByte('}')
	return buf.Bytes()
}

// encodedSize is about how long Encode's result is: exactly, unless edited messages grew.
// A compacted request is often a small part of the one received (a summary and the last
// turns): a buffer the size of the received body would be mostly unused.
func (r *Request) encodedSize() int {
	n := len(`{"messages":[]}`)
	for i, m := range r.members {
		if i != r.msgIndex { // the messages are counted below, as they are now
			n += len(m.key) + len(m.val) + 2
		}
	}
	for i := range r.Messages {
		m := &r.Messages[i]
		n += len(m.raw) + 1
		if m.edited || m.raw == nil {
			n += len(m.text) + len(m.Role) + 32
			for _, b := range m.Blocks {
				n += len(b.raw) + 1
			}
		}
	}
	return n
}

func (r *Request) writeMessages(buf *bytes.Buffer) {
	buf.WriteByte('[')
	for i := range r.Messages {
		if i > 0 {
			buf.WriteByte(',')
		}
		r.Messages[i].write(buf)
	}
	buf.WriteByte(']')
}

// Size is the length of the body the request was parsed from.
func (r *Request) Size() int { return len(r.body) }

// Changed reports whether Encode would produce new bytes.
func (r *Request) Changed() bool {
	if len(r.Messages) != r.origMsgs {
		return true
	}
	for i := range r.Messages {
		if m := &r.Messages[i]; m.edited || m.index != i {
			return true
		}
	}
	return false
}

// Clone returns a Request whose message list can be edited without touching r.
func (r *Request) Clone() *Request {
	c := *r
	c.Messages = make([]Message, len(r.Messages))
	for i, m := range r.Messages {
		m.Blocks = append([]Block(nil), m.Blocks...)
		c.Messages[i] = m
	}
	return &c
}

// Member is a top-level member of a request as raw JSON: Key as written
// between its quotes, Value as received.
type Member struct{ Key, Value []byte }

// Members returns the top-level members other than the messages the Request
// edits, in order and as received: what Encode re-emits byte for byte.
func (r *Request) Members() []Member {
	out := make([]Member, 0, len(r.members))
	for i, m := range r.members {
		if i != r.msgIndex {
			out = append(out, Member{m.key[1 : len(m.key)-1], m.val})
		}
	}
	return out
}

// ThinkingEnabled reports whether a raw thinking config (the request's
// top-level "thinking") turns thinking on: "enabled" with a budget, or
// "adaptive".
func ThinkingEnabled(raw []byte) bool {
	if len(raw) == 0 || raw[0] != '{' {
		return false
	}
	t := Unquote(MemberValue(raw, "type"))
	return t == "enabled" || t == "adaptive"
}
