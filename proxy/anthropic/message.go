package anthropic

import (
	"bytes"
	"encoding/json"
	"strings"
)

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
	f    [numFields]fieldSpan // where the fields below are in raw; zero when absent
}

// fieldSpan is where a field's raw value is in its block: [start, end) of raw, end 0 when
// absent. Offsets instead of slices keep a Block at 120 bytes instead of 280: a request may
// hold hundreds of thousands of blocks, and blocks are copied by value throughout the engine.
type fieldSpan struct{ start, end uint32 }

// field is the raw value of field i, nil when absent.
func (b *Block) field(i int) []byte {
	if sp := b.f[i]; sp.end > 0 {
		return b.raw[sp.start:sp.end]
	}
	return nil
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
		buf.Write(Quote(m.Role))
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

// Index is the message's position in the request as received, -1 for a message built here: a
// stable name for it however later edits move it (the ledger's).
func (m *Message) Index() int { return m.index }

// SetBlocks replaces the content with blocks and marks the message edited.
func (m *Message) SetBlocks(blocks []Block) {
	m.Blocks, m.IsString, m.text, m.edited = blocks, false, nil, true
}

// RawText is the raw JSON string of a string content (quotes included), nil
// for block content: what an estimate reads without decoding.
func (m *Message) RawText() []byte { return m.text }

// Text returns the content string, or the text blocks joined by newlines.
func (m *Message) Text() string {
	if m.IsString {
		return Unquote(m.text)
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

// HasContent reports whether the content is a string or blocks (not absent,
// null or anything else a merge of two turns could not carry).
func (m *Message) HasContent() bool { return m.IsString || m.Blocks != nil }

// AsBlocks returns a fresh slice of the content as blocks; a string content
// becomes one text block, or none when it is blank.
func (m *Message) AsBlocks() []Block {
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
	return Message{Role: role, IsString: true, text: Quote(text), index: -1, edited: true}
}

// NewBlockMessage builds a message with block content.
func NewBlockMessage(role string, blocks ...Block) Message {
	return Message{Role: role, Blocks: blocks, index: -1, edited: true}
}

// TextBlock builds a text block.
func TextBlock(text string) Block {
	b, _ := ParseBlock(append(append([]byte(`{"type":"text","text":`), Quote(text)...), '}'))
	return b
}

// Raw returns the block's JSON.
func (b Block) Raw() json.RawMessage { return b.raw }

// Text, Thinking, Signature, ID, ToolUseID and Name decode the block's
// string fields ("" when absent).
func (b Block) Text() string      { return Unquote(b.field(fText)) }
func (b Block) Thinking() string  { return Unquote(b.field(fThinking)) }
func (b Block) Signature() string { return Unquote(b.field(fSignature)) }
func (b Block) ID() string        { return Unquote(b.field(fID)) }
func (b Block) ToolUseID() string { return Unquote(b.field(fToolUseID)) }
func (b Block) Name() string      { return Unquote(b.field(fName)) }

// Input is the raw tool_use input; Content the raw tool_result content
// (a string or an array of blocks); Source the raw image/document source.
func (b Block) Input() json.RawMessage   { return b.field(fInput) }
func (b Block) Content() json.RawMessage { return b.field(fContent) }
func (b Block) Source() json.RawMessage  { return b.field(fSource) }

// RawText, RawThinking, RawSignature, RawData and RawName are those fields
// as raw JSON (quotes and escapes included, nil when absent): what an
// estimate or a byte-for-byte comparison reads without decoding.
func (b Block) RawText() []byte      { return b.field(fText) }
func (b Block) RawThinking() []byte  { return b.field(fThinking) }
func (b Block) RawSignature() []byte { return b.field(fSignature) }
func (b Block) RawData() []byte      { return b.field(fData) }
func (b Block) RawName() []byte      { return b.field(fName) }

// ContentBlocks parses an array content (tool_result) into blocks; for a
// string content it returns nil, true.
func (b Block) ContentBlocks() (blocks []Block, isString bool, err error) {
	c := b.field(fContent)
	if len(c) == 0 {
		return nil, false, nil
	}
	if c[0] == '"' {
		return nil, true, nil
	}
	bs, err := ParseBlocks(c)
	return bs, false, err
}

// With returns a copy of b with field name set to the raw JSON val; every
// other member keeps its bytes and position.
func (b Block) With(name string, val []byte) (Block, error) {
	raw, err := setMember(b.raw, name, val)
	if err != nil {
		return b, err
	}
	return ParseBlock(raw)
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
