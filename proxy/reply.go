package proxy

import (
	"bytes"
	"encoding/json"
	"io"

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
// it) and stops accumulating once the message outgrows its limit.
type replyBuilder struct {
	limit     int
	size      int // bytes accumulated so far, an upper bound of the output
	truncated bool
	message   map[string]json.RawMessage // message_start's message, updated by message_delta
	blocks    []*replyBlock
}

type replyBlock struct {
	start     map[string]json.RawMessage // content_block_start's content_block
	text      bytes.Buffer               // text_delta
	thinking  bytes.Buffer               // thinking_delta
	signature string                     // signature_delta
	inputJSON bytes.Buffer               // input_json_delta partial_json
	citations []json.RawMessage          // citations_delta
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
		var v struct {
			Message map[string]json.RawMessage `json:"message"`
		}
		if json.Unmarshal(ev.Data, &v) == nil {
			b.message = v.Message
		}
	case "content_block_start":
		var v struct {
			Index int                        `json:"index"`
			Block map[string]json.RawMessage `json:"content_block"`
		}
		if json.Unmarshal(ev.Data, &v) == nil {
			if blk := b.block(v.Index); blk != nil {
				blk.start = v.Block
			}
		}
	case "content_block_delta":
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
			blk.text.WriteString(d.Text)
		case "thinking_delta":
			blk.thinking.WriteString(d.Thinking)
		case "signature_delta":
			blk.signature = d.Signature
		case "input_json_delta":
			blk.inputJSON.WriteString(d.PartialJSON)
		case "citations_delta":
			blk.citations = append(blk.citations, d.Citation)
		}
	case "message_delta":
		var v struct {
			Delta map[string]json.RawMessage `json:"delta"`
			Usage map[string]json.RawMessage `json:"usage"`
		}
		if json.Unmarshal(ev.Data, &v) != nil || b.message == nil {
			return
		}
		for k, val := range v.Delta { // stop_reason, stop_sequence, …
			b.message[k] = val
		}
		if len(v.Usage) > 0 {
			var usage map[string]json.RawMessage
			json.Unmarshal(b.message["usage"], &usage) //nolint:errcheck // absent or malformed: start afresh
			if usage == nil {
				usage = map[string]json.RawMessage{}
			}
			for k, val := range v.Usage { // cumulative counts replace the start's
				usage[k] = val
			}
			if raw, err := json.Marshal(usage); err == nil {
				b.message["usage"] = raw
			}
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
	if b.message == nil {
		return nil, b.truncated
	}
	content := make([]json.RawMessage, 0, len(b.blocks))
	for _, blk := range b.blocks {
		if blk.start == nil {
			continue
		}
		m := blk.start
		var typ string
		json.Unmarshal(m["type"], &typ) //nolint:errcheck // unknown types are kept as they started
		set := func(k string, v any) {
			if raw, err := json.Marshal(v); err == nil {
				m[k] = raw
			}
		}
		switch typ {
		case "text":
			set("text", blk.text.String())
			if len(blk.citations) > 0 {
				set("citations", blk.citations)
			}
		case "thinking":
			set("thinking", blk.thinking.String())
			set("signature", blk.signature)
		case "tool_use", "server_tool_use", "mcp_tool_use":
			if in := bytes.TrimSpace(blk.inputJSON.Bytes()); len(in) > 0 {
				if json.Valid(in) {
					m["input"] = json.RawMessage(in)
				} else {
					set("input_partial", string(in)) // the stream broke off mid-input
				}
			}
		}
		if raw, err := json.Marshal(m); err == nil {
			content = append(content, raw)
		}
	}
	msg := b.message
	if raw, err := json.Marshal(content); err == nil {
		msg["content"] = raw
	}
	out, err := json.Marshal(msg)
	if err != nil {
		return nil, b.truncated
	}
	return out, b.truncated
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
// when history wants bodies, and returns what puts it on the exchange. The
// relay is not handed its Config, so the current one decides; a capture
// switched on or off mid-request is harmless.
func (s *Server) captureReply(tap io.Writer) (io.Writer, func(*Exchange)) {
	cfg := s.cfg.Load()
	if !cfg.CaptureBodies {
		return tap, func(*Exchange) {}
	}
	capture := &prefixBuffer{limit: captureLimit(cfg)}
	return io.MultiWriter(tap, capture), func(ex *Exchange) {
		ex.ReplyBody = capture.buf
		ex.BodiesTruncated = ex.BodiesTruncated || capture.truncated
	}
}
