package anthropic

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// ReplyBuilder rebuilds the final message of a stream from its events, as
// they pass, for history: a user reading the record wants the message the
// client got, not the raw SSE. It only accumulates (the relay never waits for
// it) and stops accumulating once the message outgrows its limit. The few
// structural events are kept raw and the deltas as escaped string pieces, so
// the relay pays for almost no decoding; the message is assembled once, at
// the end.
type ReplyBuilder struct {
	limit     int
	size      int // bytes accumulated so far, an upper bound of the output
	truncated bool
	message   json.RawMessage   // message_start's message
	deltas    []json.RawMessage // message_delta's delta objects, in order
	usages    []json.RawMessage // message_delta's usage objects, in order
	blocks    []*replyBlock
}

// replyBlock accumulates one content block. Text, thinking and partial JSON are kept as the
// escaped contents of the JSON strings the deltas carried: JSON escaping works character by
// character, so escaped pieces concatenate into the escaped whole, and the hot path never has
// to decode a delta.
type replyBlock struct {
	start     json.RawMessage   // content_block_start's content_block
	text      bytes.Buffer      // text_delta, escaped
	thinking  bytes.Buffer      // thinking_delta, escaped
	signature []byte            // signature_delta, escaped
	inputJSON bytes.Buffer      // input_json_delta partial_json, escaped
	citations []json.RawMessage // citations_delta
}

// NewReplyBuilder returns a builder that stops accumulating past limit bytes
// of event data.
func NewReplyBuilder(limit int) *ReplyBuilder {
	return &ReplyBuilder{limit: limit}
}

// grow accounts for n more bytes and reports whether they still fit.
func (b *ReplyBuilder) grow(n int) bool {
	if b.truncated {
		return false
	}
	if b.size+n > b.limit {
		b.truncated = true
		return false
	}
	b.size += n
	return true
}

// Add takes one event (its name and data) the relay has already written to
// the client.
func (b *ReplyBuilder) Add(name string, data []byte) {
	if !b.grow(len(data)) {
		return
	}
	switch name {
	case "message_start":
		var v object
		if v.decode(data) == nil {
			b.message = v.get("message")
		}
	case "content_block_start":
		var v object
		if v.decode(data) != nil {
			return
		}
		if i, err := strconv.Atoi(string(v.get("index"))); err == nil {
			if blk := b.block(i); blk != nil {
				blk.start = v.get("content_block")
			}
		}
	case "content_block_delta":
		if b.fastDelta(data) {
			return
		}
		var v struct {
			Index int `json:"index"`
			Delta struct {
				Type        string          `json:"type"`
				Text        string          `json:"text"`
				Thinking    string          `json:"thinking"`
				Signature   string          `json:"signature"`
				PartialJSON string          `json:"partial_json"`
				Citation    json.RawMessage `json:"citation"`
			} `json:"delta"`
		}
		if json.Unmarshal(data, &v) != nil {
			return
		}
		blk := b.block(v.Index)
		if blk == nil {
			return
		}
		switch d := v.Delta; d.Type {
		case "text_delta":
			blk.text.Write(escaped(d.Text))
		case "thinking_delta":
			blk.thinking.Write(escaped(d.Thinking))
		case "signature_delta":
			blk.signature = escaped(d.Signature)
		case "input_json_delta":
			blk.inputJSON.Write(escaped(d.PartialJSON))
		case "citations_delta":
			blk.citations = append(blk.citations, d.Citation)
		}
	case "message_delta":
		var v object
		if v.decode(data) == nil {
			b.deltas = append(b.deltas, v.get("delta"))
			b.usages = append(b.usages, v.get("usage"))
		}
	}
}

// block returns the block at index, growing the list; nil for an absurd index.
func (b *ReplyBuilder) block(i int) *replyBlock {
	if i < 0 || i > 4096 {
		return nil
	}
	for len(b.blocks) <= i {
		b.blocks = append(b.blocks, &replyBlock{})
	}
	return b.blocks[i]
}

// Bytes renders the message as the non-stream API would have returned it,
// or nil when no message_start was seen. truncated reports that the stream
// outgrew the limit: the message then holds what arrived before.
func (b *ReplyBuilder) Bytes() (out []byte, truncated bool) {
	msg := object{}
	if msg.decode(b.message) != nil {
		return nil, b.truncated
	}
	for _, d := range b.deltas { // stop_reason, stop_sequence, …
		var delta object
		if delta.decode(d) == nil {
			msg.merge(delta)
		}
	}
	var usage object
	usage.decode(msg.get("usage")) //nolint:errcheck // absent or malformed: start afresh
	for _, u := range b.usages {   // cumulative counts replace the start's
		var delta object
		if delta.decode(u) == nil {
			usage.merge(delta)
		}
	}
	if len(usage) > 0 {
		msg.set("usage", usage.appendTo(nil))
	}
	content := []byte{'['}
	for _, blk := range b.blocks {
		var m object
		if m.decode(blk.start) != nil {
			continue
		}
		var typ string
		json.Unmarshal(m.get("type"), &typ) //nolint:errcheck // unknown types are kept as they started
		switch typ {
		case "text":
			m.set("text", quoted(blk.text.Bytes()))
			if len(blk.citations) > 0 {
				if raw, err := json.Marshal(blk.citations); err == nil {
					m.set("citations", raw)
				}
			}
		case "thinking":
			m.set("thinking", quoted(blk.thinking.Bytes()))
			m.set("signature", quoted(blk.signature))
		case "tool_use", "server_tool_use", "mcp_tool_use":
			var in string
			if json.Unmarshal(quoted(blk.inputJSON.Bytes()), &in) == nil && strings.TrimSpace(in) != "" {
				if json.Valid([]byte(in)) {
					m.set("input", json.RawMessage(in))
				} else if raw, err := json.Marshal(in); err == nil {
					m.set("input_partial", raw) // the stream broke off mid-input
				}
			}
		}
		if len(content) > 1 {
			content = append(content, ',')
		}
		content = m.appendTo(content)
	}
	msg.set("content", append(content, ']'))
	out = msg.appendTo(nil)
	if !json.Valid(out) { // the scans trust their input; a malformed event must not leak out
		return nil, b.truncated
	}
	return out, b.truncated
}

// object is a JSON object as its members in order, values kept raw: decoding one costs a
// single pass, and writing it back needs no re-validation of values that came from a decoder.
type object []field

type field struct {
	key string
	val json.RawMessage
}

// decode splits a JSON object into its members, finding where each value
// ends without decoding it. Bytes() validates the message it assembles.
func (o *object) decode(raw json.RawMessage) error {
	_, err := walkObject(raw, 0, func(k []byte, vi int) (int, error) {
		end, err := skipValue(raw, vi)
		if err != nil {
			return 0, err
		}
		key := string(k[1 : len(k)-1])
		if bytes.IndexByte(k, '\\') >= 0 { // escaped: rare in keys, decode properly
			if err := json.Unmarshal(k, &key); err != nil {
				return 0, err
			}
		}
		if *o == nil {
			*o = make(object, 0, 12)
		}
		o.set(key, raw[vi:end])
		return end, nil
	})
	return err
}

// plainKey reports a key that needs no escaping (every key the API uses).
func plainKey(k string) bool {
	for i := 0; i < len(k); i++ {
		if c := k[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x7f || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

func (o object) get(key string) json.RawMessage {
	for _, m := range o {
		if m.key == key {
			return m.val
		}
	}
	return nil
}

// set replaces a member in place, or appends it.
func (o *object) set(key string, val json.RawMessage) {
	for i := range *o {
		if (*o)[i].key == key {
			(*o)[i].val = val
			return
		}
	}
	*o = append(*o, field{key, val})
}

func (o *object) merge(from object) {
	for _, m := range from {
		o.set(m.key, m.val)
	}
}

func (o object) appendTo(b []byte) []byte {
	b = append(b, '{')
	for i, m := range o {
		if i > 0 {
			b = append(b, ',')
		}
		if plainKey(m.key) {
			b = append(append(append(b, '"'), m.key...), '"')
		} else {
			k, _ := json.Marshal(m.key) //nolint:errcheck // a string always encodes
			b = append(b, k...)
		}
		b = append(append(b, ':'), m.val...)
	}
	return append(b, '}')
}

// fastDelta takes the common deltas (text, thinking, partial JSON, signature) without decoding
// them: it finds the index, the delta type and the raw string value. It reports false when the
// event does not have the expected shape, and the caller decodes it properly.
func (b *ReplyBuilder) fastDelta(data []byte) bool {
	index, ok := intField(data, `"index":`)
	if !ok {
		return false
	}
	typ, ok := rawString(data, `"delta":{"type":"`)
	if !ok {
		return false
	}
	blk := b.block(index)
	if blk == nil {
		return true
	}
	var key string
	var dst *bytes.Buffer
	switch string(typ) {
	case "text_delta":
		key, dst = `"text":"`, &blk.text
	case "thinking_delta":
		key, dst = `"thinking":"`, &blk.thinking
	case "input_json_delta":
		key, dst = `"partial_json":"`, &blk.inputJSON
	case "signature_delta":
		key = `"signature":"`
	default:
		return false
	}
	v, ok := rawString(data, key)
	if !ok {
		return false
	}
	if dst == nil {
		blk.signature = append(blk.signature[:0], v...)
	} else {
		dst.Write(v)
	}
	return true
}

// rawString returns the escaped contents of the JSON string that starts right after key
// (which ends with the opening quote).
func rawString(data []byte, key string) ([]byte, bool) {
	i := bytes.Index(data, []byte(key))
	if i < 0 {
		return nil, false
	}
	start := i + len(key)
	if end := stringEnd(data, start); end >= 0 {
		return data[start:end], true
	}
	return nil, false
}

func intField(data []byte, key string) (int, bool) {
	i := bytes.Index(data, []byte(key))
	if i < 0 {
		return 0, false
	}
	j := i + len(key)
	for j < len(data) && data[j] == ' ' {
		j++
	}
	n, digits := 0, 0
	for ; j < len(data) && data[j] >= '0' && data[j] <= '9' && digits < 6; j++ {
		n = n*10 + int(data[j]-'0')
		digits++
	}
	return n, digits > 0
}

// escaped is the contents of s's JSON string form, without the quotes.
func escaped(s string) []byte {
	b, _ := json.Marshal(s) //nolint:errcheck // a string always encodes
	return b[1 : len(b)-1]
}

// quoted wraps escaped contents back into a JSON string.
func quoted(esc []byte) json.RawMessage {
	out := make([]byte, 0, len(esc)+2)
	return append(append(append(out, '"'), esc...), '"')
}
