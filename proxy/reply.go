package proxy

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"

	"longhaul/proxy/sse"
)

// defaultMaxCapture caps each captured body when Config.MaxCaptureBytes is 0.
const defaultMaxCapture = 2 << 20

func captureLimit(cfg *Config) int {
	if cfg.MaxCaptureBytes > 0 {
		return cfg.MaxCaptureBytes
	}
	return defaultMaxCapture
}

// replyBuilder rebuilds the final message of a stream from its events, as
// they pass, for history: a user reading the record wants the message the
// client got, not the raw SSE. It only accumulates (the relay never waits for
// it) and stops accumulating once the message outgrows its limit. The few
// structural events are kept raw and the deltas as escaped string pieces, so
// the relay pays for almost no decoding; the message is assembled once, at
// the end.
type replyBuilder struct {
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

func newReplyBuilder(limit int) *replyBuilder {
	return &replyBuilder{limit: limit}
}

// grow accounts for n more bytes and reports whether they still fit.
func (b *replyBuilder) grow(n int) bool {
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

// add takes one event the relay has already written to the client.
func (b *replyBuilder) add(ev sse.Event) {
	if !b.grow(len(ev.Data)) {
		return
	}
	switch ev.Name {
	case "message_start":
		var v object
		if v.decode(ev.Data) == nil {
			b.message = v.get("message")
		}
	case "content_block_start":
		var v object
		if v.decode(ev.Data) != nil {
			return
		}
		if i, err := strconv.Atoi(string(v.get("index"))); err == nil {
			if blk := b.block(i); blk != nil {
				blk.start = v.get("content_block")
			}
		}
	case "content_block_delta":
		if b.fastDelta(ev.Data) {
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
		if json.Unmarshal(ev.Data, &v) != nil {
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
		if v.decode(ev.Data) == nil {
			b.deltas = append(b.deltas, v.get("delta"))
			b.usages = append(b.usages, v.get("usage"))
		}
	}
}

// block returns the block at index, growing the list; nil for an absurd index.
func (b *replyBuilder) block(i int) *replyBlock {
	if i < 0 || i > 4096 {
		return nil
	}
	for len(b.blocks) <= i {
		b.blocks = append(b.blocks, &replyBlock{})
	}
	return b.blocks[i]
}

// bytes renders the message as the non-stream API would have returned it,
// or nil when no message_start was seen. truncated reports that the stream
// outgrew the limit: the message then holds what arrived before.
func (b *replyBuilder) bytes() (out []byte, truncated bool) {
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
type object []member

type member struct {
	key string
	val json.RawMessage
}

// decode splits a JSON object into its members, finding where each value ends without
// decoding it. It does not validate: bytes() checks the message it assembles.
func (o *object) decode(raw json.RawMessage) error {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return errors.New("not an object")
	}
	i = skipSpace(raw, i+1)
	if *o == nil {
		*o = make(object, 0, 12)
	}
	for i < len(raw) && raw[i] != '}' {
		end := skipValue(raw, i) // the key, a string
		if end < 0 {
			return errors.New("bad key")
		}
		key := string(raw[i+1 : end-1])
		if bytes.IndexByte(raw[i:end], '\\') >= 0 { // escaped: rare in keys, decode properly
			if err := json.Unmarshal(raw[i:end], &key); err != nil {
				return err
			}
		}
		i = skipSpace(raw, end)
		if i >= len(raw) || raw[i] != ':' {
			return errors.New("missing colon")
		}
		i = skipSpace(raw, i+1)
		end = skipValue(raw, i)
		if end < 0 {
			return errors.New("bad value")
		}
		o.set(key, raw[i:end])
		i = skipSpace(raw, end)
		if i < len(raw) && raw[i] == ',' {
			i = skipSpace(raw, i+1)
		}
	}
	return nil
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

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t') {
		i++
	}
	return i
}

// skipValue returns the end of the JSON value starting at i, or -1.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		for j := i + 1; j < len(b); j++ {
			switch b[j] {
			case '\\':
				j++
			case '"':
				return j + 1
			}
		}
		return -1
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end := skipValue(b, j)
				if end < 0 {
					return -1
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	}
	j := i // number, true, false, null
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\n' && b[j] != '\r' && b[j] != '\t' {
		j++
	}
	return j
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
	*o = append(*o, member{key, val})
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
func (b *replyBuilder) fastDelta(data []byte) bool {
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
	for j := start; j < len(data); j++ {
		switch data[j] {
		case '\\':
			j++ // skip the escaped character
		case '"':
			return data[start:j], true
		}
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

// prefixBuffer keeps the first limit bytes written to it, for a non-stream
// reply the relay copies to the client while it arrives.
type prefixBuffer struct {
	buf       []byte
	limit     int
	truncated bool
}

// Write never fails and always reports the whole write, so the copy to the
// client is never cut short by the capture.
func (p *prefixBuffer) Write(b []byte) (int, error) {
	n := len(b)
	if room := p.limit - len(p.buf); room < n {
		p.truncated = true
		b = b[:max(room, 0)]
	}
	p.buf = append(p.buf, b...)
	return n, nil
}

// keepReply puts the reconstructed stream message on the exchange.
func (t *streamTap) keepReply() {
	body, truncated := t.reply.bytes()
	t.ex.ReplyBody = body
	t.ex.BodiesTruncated = t.ex.BodiesTruncated || truncated
}

// captureReply adds a capped copy of a non-stream reply to the relay's tap
// when history wants bodies, and returns what puts it on the exchange.
func captureReply(cfg *Config, tap io.Writer) (io.Writer, func(*Exchange)) {
	if !cfg.CaptureBodies {
		return tap, func(*Exchange) {}
	}
	capture := &prefixBuffer{limit: captureLimit(cfg)}
	return io.MultiWriter(tap, capture), func(ex *Exchange) {
		ex.ReplyBody = capture.buf
		ex.BodiesTruncated = ex.BodiesTruncated || capture.truncated
	}
}
