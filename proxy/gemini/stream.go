package gemini

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"strings"
)

// StreamToAnthropic turns a Gemini stream (each chunk a
// GenerateContentResponse, from SSE data lines or the JSON-array stream's
// elements) into Messages SSE events, chunk by chunk: every event is emitted
// as soon as the chunk that causes it arrives.
type StreamToAnthropic struct {
	opts     ReplyOptions
	started  bool
	respID   string
	index    int    // index of the open block; -1 none
	open     string // type of the open block: "text", "thinking" or ""
	next     int    // index of the next block
	textHash hash.Hash
	lastKey  string // TextSignatureKey of the last text block closed
	pending  string // a signature waiting for its text block to close
	calls    int
	toolUse  bool
	finish   string
	usage    *UsageMetadata
	stopped  bool
}

// NewStreamToAnthropic returns a translator for one stream.
func NewStreamToAnthropic(opts ReplyOptions) *StreamToAnthropic {
	return &StreamToAnthropic{opts: opts, index: -1, textHash: sha256.New()}
}

type emitFunc = func(name string, data []byte) error

func emitJSON(emit emitFunc, name string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return emit(name, b)
}

// Event takes one chunk; name is the SSE event name (Gemini sends none).
// A chunk that is a Google error object ends the stream with an error event.
func (s *StreamToAnthropic) Event(name string, data []byte, emit func(name string, data []byte) error) error {
	if s.stopped {
		return nil
	}
	if bytes.HasPrefix(bytes.TrimSpace(data), []byte(`{"error"`)) {
		if d, ok := ParseError(data); ok {
			typ, msg := ErrorToAnthropic(d.Code, data)
			s.stopped = true
			return emitJSON(emit, "error", map[string]any{"type": "error", "error": map[string]string{"type": typ, "message": msg}})
		}
	}
	var r Response
	if err := json.Unmarshal(data, &r); err != nil {
		return &Error{Status: http.StatusBadGateway, Message: fmt.Sprintf("upstream stream chunk is not a GenerateContentResponse: %v", err)}
	}
	if e := BlockedError(&r); e != nil && !s.started {
		return e // before anything was sent: the core answers a plain 400
	}
	if r.UsageMetadata != nil {
		s.usage = r.UsageMetadata
	}
	if !s.started {
		s.started = true
		s.respID = r.ResponseID
		if s.respID == "" {
			s.respID = randomID()
		}
		model := r.ModelVersion
		if model == "" {
			model = s.opts.Model
		}
		u := usageToAnthropic(r.UsageMetadata)
		u.OutputTokens = 0
		msg := map[string]any{"id": "msg_" + s.respID, "type": "message", "role": "assistant", "model": model,
			"content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": u}
		if err := emitJSON(emit, "message_start", map[string]any{"type": "message_start", "message": msg}); err != nil {
			return err
		}
	}
	if len(r.Candidates) == 0 {
		return nil
	}
	c := r.Candidates[0]
	if c.FinishReason != "" {
		s.finish = c.FinishReason
	}
	if c.Content == nil {
		return nil
	}
	for _, p := range c.Content.Parts {
		if err := s.part(p, emit); err != nil {
			return err
		}
	}
	return nil
}

func (s *StreamToAnthropic) report(key, sig string) {
	if s.opts.OnSignature != nil && sig != "" && key != "" {
		s.opts.OnSignature(key, sig)
	}
}

func (s *StreamToAnthropic) part(p Part, emit emitFunc) error {
	switch {
	case p.FunctionCall != nil:
		if err := s.closeBlock(emit); err != nil {
			return err
		}
		id := p.FunctionCall.ID
		if id == "" {
			id = replyCallID(s.respID, s.calls)
		}
		s.calls++
		s.toolUse = true
		sig := p.ThoughtSignature
		if sig == "" {
			sig, s.pending = s.pending, ""
		}
		s.report(id, sig)
		i := s.next
		s.next++
		if err := emitJSON(emit, "content_block_start", map[string]any{"type": "content_block_start", "index": i,
			"content_block": map[string]any{"type": "tool_use", "id": id, "name": p.FunctionCall.Name, "input": map[string]any{}}}); err != nil {
			return err
		}
		args := p.FunctionCall.Args
		if len(args) == 0 || string(args) == "null" {
			args = json.RawMessage("{}")
		}
		if err := emitJSON(emit, "content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
			"delta": map[string]any{"type": "input_json_delta", "partial_json": string(args)}}); err != nil {
			return err
		}
		return emitJSON(emit, "content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	case p.Thought:
		if p.Text != "" {
			if err := s.delta(emit, "thinking", "thinking_delta", "thinking", p.Text); err != nil {
				return err
			}
		}
	case p.Text != "":
		if err := s.delta(emit, "text", "text_delta", "text", p.Text); err != nil {
			return err
		}
		s.textHash.Write([]byte(p.Text))
	}
	if p.ThoughtSignature != "" && p.FunctionCall == nil {
		if s.open == "text" || (!p.Thought && s.lastKey == "") {
			s.pending = p.ThoughtSignature
		} else if !p.Thought && s.lastKey != "" {
			s.report(s.lastKey, p.ThoughtSignature) // a bare signature after its text closed
		} else {
			s.pending = p.ThoughtSignature
		}
	}
	return nil
}

// delta writes text into a block of typ, opening one (and closing another)
// when needed.
func (s *StreamToAnthropic) delta(emit emitFunc, typ, deltaType, field, text string) error {
	if s.open != typ {
		if err := s.closeBlock(emit); err != nil {
			return err
		}
		s.open, s.index = typ, s.next
		s.next++
		block := map[string]any{"type": typ, field: ""}
		if typ == "thinking" {
			block["signature"] = ""
		}
		if err := emitJSON(emit, "content_block_start", map[string]any{"type": "content_block_start", "index": s.index, "content_block": block}); err != nil {
			return err
		}
	}
	return emitJSON(emit, "content_block_delta", map[string]any{"type": "content_block_delta", "index": s.index,
		"delta": map[string]string{"type": deltaType, field: text}})
}

func (s *StreamToAnthropic) closeBlock(emit emitFunc) error {
	if s.open == "" {
		return nil
	}
	if s.open == "text" {
		s.lastKey = "gtext_" + hex.EncodeToString(s.textHash.Sum(nil)[:12])
		s.textHash.Reset()
		if s.pending != "" {
			s.report(s.lastKey, s.pending)
			s.pending = ""
		}
	}
	s.open = ""
	return emitJSON(emit, "content_block_stop", map[string]any{"type": "content_block_stop", "index": s.index})
}

// ErrStreamEndedEarly is returned by End when the upstream ended before
// sending anything: the core can still answer (or retry) as for a failed
// attempt.
var ErrStreamEndedEarly = errors.New("gemini: upstream stream ended before its first chunk")

// End closes the stream. A stream that ended without a finish reason (the
// connection dropped) ends with an error event after the open block.
func (s *StreamToAnthropic) End(emit func(name string, data []byte) error) error {
	if s.stopped {
		return nil
	}
	s.stopped = true
	if !s.started {
		return ErrStreamEndedEarly
	}
	if err := s.closeBlock(emit); err != nil {
		return err
	}
	if s.finish == "" {
		return emitJSON(emit, "error", map[string]any{"type": "error", "error": map[string]string{"type": "api_error", "message": "the upstream Gemini stream ended before it finished"}})
	}
	u := usageToAnthropic(s.usage)
	if err := emitJSON(emit, "message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stopReason(s.finish, s.toolUse), "stop_sequence": nil},
		"usage": u}); err != nil {
		return err
	}
	return emitJSON(emit, "message_stop", map[string]string{"type": "message_stop"})
}

// StreamFromAnthropic turns Messages SSE events into a Gemini stream, as
// frames ready to write: SSE data lines (opts.SSE) or the elements of the
// JSON-array stream. Text and thinking deltas become a chunk each as they
// arrive; a tool call becomes one chunk when its block ends (Gemini sends
// whole function calls).
type StreamFromAnthropic struct {
	opts    ReplyOptions
	id      string
	model   string
	usage   aUsage
	stop    string
	tools   map[int]*toolCall
	frames  int
	done    bool
	scratch []byte
}

type toolCall struct {
	id, name string
	args     strings.Builder
}

// NewStreamFromAnthropic returns a translator for one stream.
func NewStreamFromAnthropic(opts ReplyOptions) *StreamFromAnthropic {
	return &StreamFromAnthropic{opts: opts, model: opts.Model, tools: map[int]*toolCall{}}
}

// frame renders one chunk in the stream's form.
func (s *StreamFromAnthropic) frame(v any, write func([]byte) error) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	buf := s.scratch[:0]
	switch {
	case s.opts.SSE:
		buf = append(buf, "data: "...)
		buf = append(buf, data...)
		buf = append(buf, "\r\n\r\n"...)
	case s.frames == 0:
		buf = append(buf, '[')
		buf = append(buf, data...)
	default:
		buf = append(buf, ",\r\n"...)
		buf = append(buf, data...)
	}
	s.frames++
	s.scratch = buf
	return write(buf)
}

func (s *StreamFromAnthropic) chunk(parts []Part, finish string, usage *UsageMetadata) Response {
	return Response{
		Candidates:    []Candidate{{Content: &Content{Role: "model", Parts: parts}, FinishReason: finish}},
		UsageMetadata: usage,
		ModelVersion:  s.model,
		ResponseID:    strings.TrimPrefix(s.id, "msg_"),
	}
}

// Event takes one Messages event.
func (s *StreamFromAnthropic) Event(name string, data []byte, write func(frame []byte) error) error {
	if s.done {
		return nil
	}
	var ev struct {
		Type    string `json:"type"`
		Index   int    `json:"index"`
		Message *aReply
		Block   *aBlock `json:"content_block"`
		Delta   struct {
			Type        string  `json:"type"`
			Text        string  `json:"text"`
			Thinking    string  `json:"thinking"`
			PartialJSON string  `json:"partial_json"`
			StopReason  *string `json:"stop_reason"`
		} `json:"delta"`
		Usage *aUsage `json:"usage"`
	}
	if name == "ping" {
		return nil
	}
	if err := json.Unmarshal(data, &ev); err != nil {
		return &Error{Status: http.StatusBadGateway, Message: fmt.Sprintf("upstream event %q is not JSON: %v", name, err)}
	}
	if name == "" {
		name = ev.Type
	}
	switch name {
	case "message_start":
		if ev.Message != nil {
			s.id = ev.Message.ID
			if ev.Message.Model != "" {
				s.model = ev.Message.Model
			}
			s.usage = ev.Message.Usage
		}
	case "content_block_start":
		if ev.Block != nil && ev.Block.Type == "tool_use" {
			s.tools[ev.Index] = &toolCall{id: ev.Block.ID, name: ev.Block.Name}
		}
	case "content_block_delta":
		switch ev.Delta.Type {
		case "text_delta":
			if ev.Delta.Text != "" {
				return s.frame(s.chunk([]Part{{Text: ev.Delta.Text}}, "", nil), write)
			}
		case "thinking_delta":
			if s.opts.IncludeThoughts && ev.Delta.Thinking != "" {
				return s.frame(s.chunk([]Part{{Text: ev.Delta.Thinking, Thought: true}}, "", nil), write)
			}
		case "input_json_delta":
			if t := s.tools[ev.Index]; t != nil {
				t.args.WriteString(ev.Delta.PartialJSON)
			}
		}
	case "content_block_stop":
		if t := s.tools[ev.Index]; t != nil {
			delete(s.tools, ev.Index)
			args := json.RawMessage(t.args.String())
			if len(bytes.TrimSpace(args)) == 0 {
				args = json.RawMessage("{}")
			} else if !json.Valid(args) {
				return &Error{Status: http.StatusBadGateway, Message: fmt.Sprintf("upstream tool call %s has malformed arguments", t.name)}
			}
			return s.frame(s.chunk([]Part{{FunctionCall: &FunctionCall{ID: t.id, Name: t.name, Args: args}}}, "", nil), write)
		}
	case "message_delta":
		if ev.Delta.StopReason != nil {
			s.stop = *ev.Delta.StopReason
		}
		if ev.Usage != nil {
			if ev.Usage.OutputTokens > 0 {
				s.usage.OutputTokens = ev.Usage.OutputTokens
			}
			if ev.Usage.InputTokens > 0 {
				s.usage.InputTokens = ev.Usage.InputTokens
			}
			if ev.Usage.CacheReadInputTokens > 0 {
				s.usage.CacheReadInputTokens = ev.Usage.CacheReadInputTokens
			}
			if ev.Usage.CacheCreationInputTokens > 0 {
				s.usage.CacheCreationInputTokens = ev.Usage.CacheCreationInputTokens
			}
		}
	case "message_stop":
		s.done = true
		final := s.chunk(nil, finishReason(s.stop), usageFromAnthropic(s.usage))
		final.Candidates[0].Content = nil // as the API ends a stream: finish reason and usage, no parts
		return s.frame(final, write)
	case "error":
		s.done = true
		status := http.StatusInternalServerError
		if d, ok := parseAnthropicError(data); ok && d == "overloaded_error" {
			status = 529
		}
		var body ErrorBody
		if err := json.Unmarshal(ErrorFromAnthropic(status, data), &body); err != nil {
			return err
		}
		return s.frame(body, write)
	}
	return nil
}

func parseAnthropicError(data []byte) (string, bool) {
	var e struct {
		Error struct {
			Type string `json:"type"`
		} `json:"error"`
	}
	if json.Unmarshal(data, &e) != nil {
		return "", false
	}
	return e.Error.Type, true
}

// End closes the stream: the JSON array's closing bracket (an empty array
// when nothing came), and an error chunk first when the upstream ended
// before message_stop.
func (s *StreamFromAnthropic) End(write func(frame []byte) error) error {
	if !s.done {
		s.done = true
		body := ErrorBody{Error: ErrorDetail{Code: http.StatusBadGateway, Status: StatusUnavailable, Message: "the upstream stream ended before it finished"}}
		if err := s.frame(body, write); err != nil {
			return err
		}
	}
	if s.opts.SSE {
		return nil
	}
	if s.frames == 0 {
		return write([]byte("[]"))
	}
	return write([]byte("]"))
}

// ArrayReader reads the JSON-array stream (streamGenerateContent without
// alt=sse) element by element, each returned as soon as it is complete.
type ArrayReader struct {
	dec     *json.Decoder
	started bool
}

// NewArrayReader returns a reader of the array stream on r.
func NewArrayReader(r io.Reader) *ArrayReader { return &ArrayReader{dec: json.NewDecoder(r)} }

// Next returns the next element; io.EOF after the closing bracket,
// io.ErrUnexpectedEOF when the stream broke off.
func (a *ArrayReader) Next() (json.RawMessage, error) {
	if !a.started {
		tok, err := a.dec.Token()
		if err != nil {
			if err == io.EOF {
				return nil, io.ErrUnexpectedEOF
			}
			return nil, err
		}
		if d, ok := tok.(json.Delim); !ok || d != '[' {
			return nil, fmt.Errorf("gemini stream: want a JSON array, got %v", tok)
		}
		a.started = true
	}
	if !a.dec.More() {
		if _, err := a.dec.Token(); err != nil {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, io.EOF
	}
	var raw json.RawMessage
	if err := a.dec.Decode(&raw); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return raw, nil
}
