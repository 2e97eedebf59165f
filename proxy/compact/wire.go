package compact

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
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

// Message is one element of messages. Content is either a string (Blocks nil,
// IsString true) or blocks.
type Message struct {
	Role     string
	Blocks   []Block
	IsString bool

	text   []byte // raw string content when IsString
	raw    []byte // the message as received; nil for a message built here
	index  int    // position in the received messages; -1 for a built one
	edited bool   // content differs from raw
}

// Block is a content block: its raw JSON plus the few fields the engine reads.
// A Block's raw bytes are always a complete, valid block, so unknown fields
// (cache_control, citations, future ones) ride along untouched.
type Block struct {
	Type string
	raw  []byte
	f    [numFields][]byte // raw values of the fields below; nil when absent
}

const (
	fText = iota
	fThinking
	fSignature
	fID
	fToolUseID
	fContent
	fInput
	fName
	fSource
	fData
	numFields
)

var fieldNames = [numFields]string{"text", "thinking", "signature", "id", "tool_use_id", "content", "input", "name", "source", "data"}

// ParseRequest splits body into a Request. It reads messages block by block
// in one pass over the bytes, without decoding text, so it is cheap even for
// megabyte bodies.
func ParseRequest(body []byte) (*Request, error) {
	r := &Request{body: body, msgIndex: -1}
	_, err := walkObject(body, 0, func(k []byte, vi int) (int, error) {
		if keyIs(k, "messages") && vi < len(body) && body[vi] == '[' {
			// A repeated key: decoders (and so the upstream) keep the last
			// value, so the engine must edit that one and only that one.
			r.Messages = r.Messages[:0]
			ve, err := walkArray(body, vi, func(ei int) (int, error) {
				msg, end, err := parseMessageAt(body, ei)
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
			r.Model = unquote(v)
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

func parseMessageAt(b []byte, i int) (Message, int, error) {
	var m Message
	end, err := walkObject(b, i, func(k []byte, vi int) (int, error) {
		if keyIs(k, "content") {
			// A repeated key: the last value is the one that counts.
			m.Blocks, m.IsString, m.text = nil, false, nil
		}
		switch {
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
			m.Role = unquote(b[vi:ve])
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

func parseBlocks(arr []byte) ([]Block, error) {
	var out []Block
	_, err := walkArray(arr, 0, func(ei int) (int, error) {
		blk, be, err := parseBlockAt(arr, ei)
		out = append(out, blk)
		return be, err
	})
	return out, err
}

func parseBlock(raw []byte) (Block, error) {
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
		v := b[vi:ve]
		if keyIs(k, "type") {
			blk.Type = unquote(v)
			return ve, nil
		}
		if len(k) > 2 {
			for fi, name := range fieldNames {
				if keyIs(k, name) {
					blk.f[fi] = v
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
	buf.Grow(len(r.body))
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

// Raw returns the message's JSON.
func (m *Message) Raw() []byte {
	if !m.edited && m.raw != nil {
		return m.raw
	}
	var buf bytes.Buffer
	m.write(&buf)
	return buf.Bytes()
}

func (m *Message) write(buf *bytes.Buffer) {
	if !m.edited && m.raw != nil {
		buf.Write(m.raw)
		return
	}
	content := m.contentJSON()
	if m.raw == nil {
		buf.WriteString(`{"role":`)
		buf.Write(quote(m.Role))
		buf.WriteString(`,"content":`)
		buf.Write(content)
		buf.WriteByte('}')
		return
	}
	ms, err := members(m.raw)
	if err != nil {
		// raw parsed once already, so this cannot fail; keep the original.
		buf.Write(m.raw)
		return
	}
	for i := range ms {
		if keyIs(ms[i].key, "content") {
			ms[i].val = content
		}
	}
	writeObject(buf, ms)
}

func (m *Message) contentJSON() []byte {
	if m.IsString {
		return m.text
	}
	var buf bytes.Buffer
	buf.WriteByte('[')
	for i, b := range m.Blocks {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(b.raw)
	}
	buf.WriteByte(']')
	return buf.Bytes()
}

// SetBlocks replaces the content with blocks and marks the message edited.
func (m *Message) SetBlocks(blocks []Block) {
	m.Blocks, m.IsString, m.text, m.edited = blocks, false, nil, true
}

// Text returns the content string, or the text blocks joined by newlines.
func (m *Message) Text() string {
	if m.IsString {
		return unquote(m.text)
	}
	var parts []string
	for _, b := range m.Blocks {
		if b.Type == "text" {
			parts = append(parts, b.Text())
		}
	}
	return joinLines(parts)
}

func joinLines(parts []string) string {
	var buf bytes.Buffer
	for i, p := range parts {
		if i > 0 {
			buf.WriteByte('\n')
		}
		buf.WriteString(p)
	}
	return buf.String()
}

// appendTurn appends m to msgs. When a step removed messages just before m
// (joined) and the last user or assistant message in msgs has m's role, m is
// merged into that message instead: the upstream wants user and assistant
// turns to alternate (system messages aside), and a removal must not leave
// two turns of one role side by side, nor lose what m says. System messages
// in between stay where they are, after the merged turn.
func appendTurn(msgs []Message, m Message, joined bool) []Message {
	if !joined || m.Role == "system" {
		return append(msgs, m)
	}
	k := len(msgs) - 1
	for k >= 0 && msgs[k].Role == "system" {
		k--
	}
	if k < 0 || msgs[k].Role != m.Role || !m.hasContent() || !msgs[k].hasContent() {
		return append(msgs, m)
	}
	// Blocks, not one joined string: each part keeps its own bytes (and any
	// cache_control it carries).
	p := &msgs[k]
	if bs := append(p.contentBlocks(), m.contentBlocks()...); len(bs) > 0 {
		p.SetBlocks(bs)
	}
	return msgs
}

// hasContent reports whether the content is a string or blocks (not absent,
// null or anything else a merge could not carry).
func (m *Message) hasContent() bool { return m.IsString || m.Blocks != nil }

// contentBlocks returns a fresh slice of the content as blocks; a string
// content becomes one text block, or none when it is blank.
func (m *Message) contentBlocks() []Block {
	if !m.IsString {
		return append([]Block(nil), m.Blocks...)
	}
	if t := m.Text(); strings.TrimSpace(t) != "" {
		return []Block{TextBlock(t)}
	}
	return nil
}

// NewMessage builds a message with string content.
func NewMessage(role, text string) Message {
	return Message{Role: role, IsString: true, text: quote(text), index: -1, edited: true}
}

// NewBlockMessage builds a message with block content.
func NewBlockMessage(role string, blocks ...Block) Message {
	return Message{Role: role, Blocks: blocks, index: -1, edited: true}
}

// TextBlock builds a text block.
func TextBlock(text string) Block {
	b, _ := parseBlock(append(append([]byte(`{"type":"text","text":`), quote(text)...), '}'))
	return b
}

// Raw returns the block's JSON.
func (b Block) Raw() json.RawMessage { return b.raw }

func (b Block) Text() string      { return unquote(b.f[fText]) }
func (b Block) Thinking() string  { return unquote(b.f[fThinking]) }
func (b Block) Signature() string { return unquote(b.f[fSignature]) }
func (b Block) ID() string        { return unquote(b.f[fID]) }
func (b Block) ToolUseID() string { return unquote(b.f[fToolUseID]) }
func (b Block) Name() string      { return unquote(b.f[fName]) }

// Input is the raw tool_use input; Content the raw tool_result content
// (a string or an array of blocks); Source the raw image/document source.
func (b Block) Input() json.RawMessage   { return b.f[fInput] }
func (b Block) Content() json.RawMessage { return b.f[fContent] }
func (b Block) Source() json.RawMessage  { return b.f[fSource] }

// ContentBlocks parses an array content (tool_result) into blocks; for a
// string content it returns nil, true.
func (b Block) ContentBlocks() (blocks []Block, isString bool, err error) {
	c := b.f[fContent]
	if len(c) == 0 {
		return nil, false, nil
	}
	if c[0] == '"' {
		return nil, true, nil
	}
	bs, err := parseBlocks(c)
	return bs, false, err
}

// With returns a copy of b with field name set to the raw JSON val; every
// other member keeps its bytes and position.
func (b Block) With(name string, val []byte) (Block, error) {
	raw, err := setMember(b.raw, name, val)
	if err != nil {
		return b, err
	}
	return parseBlock(raw)
}

// WithContentBlocks returns b with its content set to blocks.
func (b Block) WithContentBlocks(blocks []Block) (Block, error) {
	var buf bytes.Buffer
	buf.WriteByte('[')
	for i, c := range blocks {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(c.raw)
	}
	buf.WriteByte(']')
	return b.With("content", buf.Bytes())
}
