package openai

import (
	"encoding/json"
	"fmt"
	"strconv"

	"longhaul/proxy/anthropic"
)

// ResponsesStreamToAnthropic turns a Responses stream into Messages events,
// event by event. Each message content part, reasoning item and function
// call becomes one content block (text, thinking, tool_use), opened when the
// Responses stream announces it and closed when it says it is done; the
// response's end becomes message_delta (stop reason, usage) and
// message_stop, a failure an error event. Events it does not translate
// (response.in_progress, the .done events whose content was already sent,
// built-in tool progress) produce nothing.
type ResponsesStreamToAnthropic struct {
	opts     ResponsesReplyOptions
	started  bool
	finished bool
	called   bool // a function call was made: stop reason tool_use
	next     int  // next Messages block index
	open     map[responsesPartKey]*responsesToBlock
	texted   map[int]bool // output indexes whose message parts were announced
}

// responsesPartKey names a Responses item (part -1) or a content part of one.
type responsesPartKey struct{ output, part int }

type responsesToBlock struct {
	index     int
	kind      string
	sent      bool // a delta went out
	summaries int
}

// NewResponsesStreamToAnthropic starts a translation.
func NewResponsesStreamToAnthropic(opts ResponsesReplyOptions) *ResponsesStreamToAnthropic {
	return &ResponsesStreamToAnthropic{opts: opts, open: map[responsesPartKey]*responsesToBlock{}, texted: map[int]bool{}}
}

// responsesStreamEvent is the union of the Responses events read here.
type responsesStreamEvent struct {
	Type         string               `json:"type"`
	Response     *responsesObjectWire `json:"response"`
	OutputIndex  int                  `json:"output_index"`
	ContentIndex int                  `json:"content_index"`
	SummaryIndex int                  `json:"summary_index"`
	Item         *responsesItemWire   `json:"item"`
	Part         *struct {
		Type string `json:"type"`
	} `json:"part"`
	Code    *string         `json:"code"`
	Message string          `json:"message"`
	Error   *responsesError `json:"error"`
}

// Event translates one Responses event.
func (s *ResponsesStreamToAnthropic) Event(name string, data []byte, emit func(name string, data []byte) error) error {
	if s.finished {
		return nil
	}
	if name == "" || name == "message" {
		name = anthropic.Unquote(anthropic.MemberValue(data, "type"))
	}
	switch name {
	case "response.output_text.delta", "response.refusal.delta":
		return s.delta(data, emit, "text_delta", "text", responsesPartKey{s.outputIndex(data), s.intField(data, "content_index")})
	case "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
		return s.delta(data, emit, "thinking_delta", "thinking", responsesPartKey{s.outputIndex(data), -1})
	case "response.function_call_arguments.delta":
		k := responsesPartKey{s.outputIndex(data), -1}
		return s.delta(data, emit, "input_json_delta", "partial_json", k)
	case "response.in_progress", "response.queued", "response.output_text.done", "response.refusal.done",
		"response.reasoning_summary_text.done", "response.reasoning_summary_part.done", "response.reasoning_text.done",
		"response.function_call_arguments.done", "response.output_text.annotation.added":
		return nil
	}
	var ev responsesStreamEvent
	if err := json.Unmarshal(data, &ev); err != nil {
		return fmt.Errorf("read %s: %w", name, err)
	}
	switch name {
	case "response.created":
		return s.start(ev.Response, emit)
	case "response.output_item.added":
		if err := s.start(nil, emit); err != nil || ev.Item == nil {
			return err
		}
		switch ev.Item.Type {
		case "reasoning":
			return s.open1(responsesPartKey{ev.OutputIndex, -1}, "thinking", emit, `{"type":"thinking","thinking":"","signature":""}`)
		case "function_call":
			s.called = true
			block, err := responsesMarshal(anthropicToolUseOut{Type: "tool_use", ID: ev.Item.CallID, Name: ev.Item.Name, Input: json.RawMessage("{}")})
			if err != nil {
				return err
			}
			return s.open1(responsesPartKey{ev.OutputIndex, -1}, "tool_use", emit, string(block))
		}
	case "response.content_part.added":
		if err := s.start(nil, emit); err != nil {
			return err
		}
		if ev.Part != nil && (ev.Part.Type == "output_text" || ev.Part.Type == "refusal") {
			s.texted[ev.OutputIndex] = true
			return s.open1(responsesPartKey{ev.OutputIndex, ev.ContentIndex}, "text", emit, `{"type":"text","text":""}`)
		}
	case "response.content_part.done":
		return s.close1(responsesPartKey{ev.OutputIndex, ev.ContentIndex}, emit)
	case "response.reasoning_summary_part.added":
		b := s.open[responsesPartKey{ev.OutputIndex, -1}]
		if b == nil {
			return nil
		}
		b.summaries++
		if b.summaries > 1 { // parts of one summary, as one thinking text
			return s.blockDelta(b, emit, "thinking_delta", "thinking", []byte(`"\n\n"`))
		}
	case "response.output_item.done":
		return s.itemDone(ev, emit)
	case "response.completed", "response.incomplete":
		return s.complete(ev.Response, emit)
	case "response.failed":
		msg, typ := "The upstream response failed.", anthropic.APIError
		if ev.Response != nil && ev.Response.Error != nil && ev.Response.Error.Message != "" {
			msg = responsesMessageForAnthropic(ev.Response.Error.Code, ev.Response.Error.Message)
			typ = anthropicTypeForCode(ev.Response.Error.Code)
		}
		return s.fail(typ, msg, emit)
	case "error":
		code := ""
		if ev.Code != nil {
			code = *ev.Code
		}
		msg := ev.Message
		if msg == "" && ev.Error != nil { // some compatible servers nest it
			msg, code = ev.Error.Message, ev.Error.Code
		}
		if msg == "" {
			msg = "The upstream stream reported an error."
		}
		return s.fail(anthropicTypeForCode(code), responsesMessageForAnthropic(code, msg), emit)
	}
	return nil
}

// End finishes the stream: an upstream that stopped before its terminal
// event leaves the client an error event, never a silent end.
func (s *ResponsesStreamToAnthropic) End(emit func(name string, data []byte) error) error {
	if s.finished {
		return nil
	}
	return s.fail(anthropic.APIError, "The upstream stream ended before the response was complete.", emit)
}

func anthropicTypeForCode(code string) string {
	switch code {
	case "rate_limit_exceeded", "insufficient_quota":
		return anthropic.RateLimitError
	case "context_length_exceeded", "invalid_prompt", "invalid_request_error":
		return anthropic.InvalidRequestError
	case "server_is_overloaded", "slow_down":
		return anthropic.OverloadedError
	}
	return anthropic.APIError
}

func (s *ResponsesStreamToAnthropic) intField(data []byte, key string) int {
	n, err := strconv.Atoi(string(anthropic.MemberValue(data, key)))
	if err != nil {
		return -2 // matches no open block
	}
	return n
}

func (s *ResponsesStreamToAnthropic) outputIndex(data []byte) int {
	return s.intField(data, "output_index")
}

func (s *ResponsesStreamToAnthropic) start(resp *responsesObjectWire, emit func(string, []byte) error) error {
	if s.started {
		return nil
	}
	s.started = true
	id, model := "", s.opts.Model
	if resp != nil {
		id = resp.ID
		if resp.Model != "" {
			model = resp.Model
		}
	}
	msgID := s.opts.messageID(id)
	if id == "" && s.opts.MessageID == "" {
		msgID = "msg_" + strconv.FormatInt(s.opts.now().UnixNano(), 36)
	}
	data, err := responsesMarshal(anthropicMessageStartEvent{Type: "message_start", Message: anthropicStartMessage{
		ID: msgID, Type: "message", Role: "assistant", Model: model, Content: []any{}}})
	if err != nil {
		return err
	}
	return emit("message_start", data)
}

func (s *ResponsesStreamToAnthropic) open1(k responsesPartKey, kind string, emit func(string, []byte) error, block string) error {
	if s.open[k] != nil {
		return nil
	}
	b := &responsesToBlock{index: s.next, kind: kind}
	s.next++
	s.open[k] = b
	d := make([]byte, 0, len(block)+64)
	d = append(d, `{"type":"content_block_start","index":`...)
	d = strconv.AppendInt(d, int64(b.index), 10)
	d = append(d, `,"content_block":`...)
	d = append(d, block...)
	d = append(d, '}')
	return emit("content_block_start", d)
}

func (s *ResponsesStreamToAnthropic) close1(k responsesPartKey, emit func(string, []byte) error) error {
	b := s.open[k]
	if b == nil {
		return nil
	}
	delete(s.open, k)
	return s.stopBlock(b.index, emit)
}

func (s *ResponsesStreamToAnthropic) stopBlock(index int, emit func(string, []byte) error) error {
	d := strconv.AppendInt([]byte(`{"type":"content_block_stop","index":`), int64(index), 10)
	return emit("content_block_stop", append(d, '}'))
}

// delta forwards the raw JSON string of a Responses delta as a Messages delta.
func (s *ResponsesStreamToAnthropic) delta(data []byte, emit func(string, []byte) error, deltaType, field string, k responsesPartKey) error {
	b := s.open[k]
	raw := anthropic.MemberValue(data, "delta")
	if b == nil || !isJSONString(raw) || len(raw) == 2 {
		return nil
	}
	return s.blockDelta(b, emit, deltaType, field, raw)
}

func (s *ResponsesStreamToAnthropic) blockDelta(b *responsesToBlock, emit func(string, []byte) error, deltaType, field string, raw []byte) error {
	if deltaType != "signature_delta" {
		b.sent = true
	}
	d := make([]byte, 0, len(raw)+96)
	d = append(d, `{"type":"content_block_delta","index":`...)
	d = strconv.AppendInt(d, int64(b.index), 10)
	d = append(d, `,"delta":{"type":"`...)
	d = append(d, deltaType...)
	d = append(d, `","`...)
	d = append(d, field...)
	d = append(d, `":`...)
	d = append(d, raw...)
	d = append(d, "}}"...)
	return emit("content_block_delta", d)
}

func (s *ResponsesStreamToAnthropic) itemDone(ev responsesStreamEvent, emit func(string, []byte) error) error {
	k := responsesPartKey{ev.OutputIndex, -1}
	if it := ev.Item; it != nil {
		// Some compatible servers send an item's content only with the
		// finished item: what no delta carried is sent now.
		switch it.Type {
		case "reasoning":
			if err := s.open1(k, "thinking", emit, `{"type":"thinking","thinking":"","signature":""}`); err != nil {
				return err
			}
			b := s.open[k]
			if t := responsesSummaryJoin(it.Summary); !b.sent && t != "" {
				if err := s.blockDelta(b, emit, "thinking_delta", "thinking", anthropic.Quote(t)); err != nil {
					return err
				}
			}
			if it.EncryptedContent != nil && *it.EncryptedContent != "" {
				sig := anthropic.Quote(responsesSignatureForReasoning(it.ID, *it.EncryptedContent))
				if err := s.blockDelta(b, emit, "signature_delta", "signature", sig); err != nil {
					return err
				}
			}
		case "function_call":
			if s.open[k] == nil {
				s.called = true
				block, err := responsesMarshal(anthropicToolUseOut{Type: "tool_use", ID: it.CallID, Name: it.Name, Input: json.RawMessage("{}")})
				if err != nil {
					return err
				}
				if err := s.open1(k, "tool_use", emit, string(block)); err != nil {
					return err
				}
			}
			if b := s.open[k]; !b.sent && it.Arguments != "" {
				if err := s.blockDelta(b, emit, "input_json_delta", "partial_json", anthropic.Quote(it.Arguments)); err != nil {
					return err
				}
			}
		case "message":
			if !s.texted[ev.OutputIndex] {
				for ci, c := range it.Content {
					t := c.Text
					if c.Type == "refusal" {
						t = c.Refusal
					}
					if t == "" {
						continue
					}
					pk := responsesPartKey{ev.OutputIndex, ci}
					if err := s.open1(pk, "text", emit, `{"type":"text","text":""}`); err != nil {
						return err
					}
					if err := s.blockDelta(s.open[pk], emit, "text_delta", "text", anthropic.Quote(t)); err != nil {
						return err
					}
					if err := s.close1(pk, emit); err != nil { // blocks never interleave
						return err
					}
				}
			}
		}
	}
	// The item's blocks end with it, parts never closed included.
	return s.closeWhere(func(pk responsesPartKey) bool { return pk.output == ev.OutputIndex }, emit)
}

// closeWhere closes the open blocks whose key matches, in block order.
func (s *ResponsesStreamToAnthropic) closeWhere(match func(responsesPartKey) bool, emit func(string, []byte) error) error {
	for {
		var first responsesPartKey
		lowest := -1
		for k, b := range s.open {
			if match(k) && (lowest < 0 || b.index < lowest) {
				first, lowest = k, b.index
			}
		}
		if lowest < 0 {
			return nil
		}
		if err := s.close1(first, emit); err != nil {
			return err
		}
	}
}

func (s *ResponsesStreamToAnthropic) closeAll(emit func(string, []byte) error) error {
	return s.closeWhere(func(responsesPartKey) bool { return true }, emit)
}

func (s *ResponsesStreamToAnthropic) complete(resp *responsesObjectWire, emit func(string, []byte) error) error {
	if err := s.start(resp, emit); err != nil {
		return err
	}
	if err := s.closeAll(emit); err != nil {
		return err
	}
	s.finished = true
	var (
		usage      *responsesUsage
		status     = "completed"
		incomplete *responsesIncomplete
	)
	if resp != nil {
		usage, status, incomplete = resp.Usage, resp.Status, resp.IncompleteDetails
		for _, item := range resp.Output {
			if item.Type == "function_call" {
				s.called = true
			}
		}
	}
	data, err := responsesMarshal(anthropicMessageDeltaEvent{Type: "message_delta",
		Delta: anthropicStopDelta{StopReason: anthropicStopReason(status, incomplete, s.called)},
		Usage: anthropicUsageFromResponses(usage)})
	if err != nil {
		return err
	}
	if err := emit("message_delta", data); err != nil {
		return err
	}
	return emit("message_stop", []byte(`{"type":"message_stop"}`))
}

func (s *ResponsesStreamToAnthropic) fail(typ, message string, emit func(string, []byte) error) error {
	s.finished = true
	return emit("error", anthropic.ErrorJSON(typ, message))
}

type anthropicStartMessage struct {
	ID           string             `json:"id"`
	Type         string             `json:"type"`
	Role         string             `json:"role"`
	Model        string             `json:"model"`
	Content      []any              `json:"content"`
	StopReason   *string            `json:"stop_reason"`
	StopSequence *string            `json:"stop_sequence"`
	Usage        anthropicUsageWire `json:"usage"`
}

type anthropicMessageStartEvent struct {
	Type    string                `json:"type"`
	Message anthropicStartMessage `json:"message"`
}

type anthropicStopDelta struct {
	StopReason   string  `json:"stop_reason"`
	StopSequence *string `json:"stop_sequence"`
}

type anthropicMessageDeltaEvent struct {
	Type  string             `json:"type"`
	Delta anthropicStopDelta `json:"delta"`
	Usage anthropicUsageWire `json:"usage"`
}
