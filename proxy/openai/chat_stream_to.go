package openai

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"longhaul/proxy/anthropic"
)

// ChatStreamToAnthropic turns a Chat Completions stream into Messages
// events, chunk by chunk. The chunks are data-only SSE events holding a
// chat.completion.chunk, ended by "data: [DONE]" (openai-node's
// ChatCompletionChunk; checked against the docs corpus). Of choices[0].delta:
// reasoning_content (or "reasoning") becomes a thinking block, content and
// refusal a text block, each tool_calls[i] (keyed by its index; the first
// fragment carries id and name) a tool_use block fed by input_json_delta.
// One block is open at a time, as in a Messages stream: a new one closes the
// last. finish_reason closes them; message_delta (stop reason, usage) and
// message_stop follow once the usage chunk that stream_options.include_usage
// asks for has come (choices [], usage set), or at [DONE]. An error chunk
// ({"error":{…}}) becomes an error event.
type ChatStreamToAnthropic struct {
	opts     ChatReplyOptions
	started  bool
	finished bool
	next     int    // next Messages block index
	open     int    // Messages index of the open block, -1 for none
	openKind string // "text", "thinking" or "tool_use"
	openTool int    // tool_calls index of the open tool_use block
	tools    map[int]bool
	lastTool int
	finish   *string
	usage    *chatUsage
	frame    []byte
}

// NewChatStreamToAnthropic starts a translation.
func NewChatStreamToAnthropic(opts ChatReplyOptions) *ChatStreamToAnthropic {
	return &ChatStreamToAnthropic{opts: opts, open: -1, tools: map[int]bool{}, lastTool: -1}
}

// chatChunk is a chunk's members as raw values; nil when absent.
type chatChunk struct {
	id, model, choices, usage, err []byte
	delta, finish                  []byte
	content, reasoning, refusal    []byte
	toolCalls                      []byte
}

func readChatChunk(data []byte) (chatChunk, error) {
	var c chatChunk
	err := anthropic.EachMember(data, func(k, v []byte) error {
		switch string(k) {
		case "id":
			c.id = v
		case "model":
			c.model = v
		case "choices":
			c.choices = v
		case "usage":
			c.usage = v
		case "error":
			c.err = v
		}
		return nil
	})
	if err != nil || len(c.choices) < 2 || c.choices[0] != '[' {
		return c, err
	}
	// Only the first choice: Longhaul asks for one (n = 1).
	first := true
	err = anthropic.EachElement(c.choices, func(choice []byte) error {
		if !first || len(choice) == 0 || choice[0] != '{' {
			return nil
		}
		first = false
		return anthropic.EachMember(choice, func(k, v []byte) error {
			switch string(k) {
			case "delta":
				c.delta = v
			case "finish_reason":
				c.finish = v
			}
			return nil
		})
	})
	if err != nil || len(c.delta) == 0 || c.delta[0] != '{' {
		return c, err
	}
	err = anthropic.EachMember(c.delta, func(k, v []byte) error {
		switch string(k) {
		case "content":
			c.content = v
		case "reasoning_content":
			c.reasoning = v
		case "reasoning":
			if c.reasoning == nil {
				c.reasoning = v
			}
		case "refusal":
			c.refusal = v
		case "tool_calls":
			c.toolCalls = v
		}
		return nil
	})
	return c, err
}

// Event translates one chunk, calling emit once per Messages event. name is
// the SSE event name ("" for the plain data events Chat servers send). The
// data of a content_block_delta is valid only during its emit call: its
// buffer is reused for the next delta, so an emit that keeps it must copy it.
func (s *ChatStreamToAnthropic) Event(name string, data []byte, emit func(name string, data []byte) error) error {
	if s.finished {
		return nil
	}
	if d := strings.TrimSpace(string(data)); d == "[DONE]" {
		return s.complete(emit)
	} else if d == "" {
		return nil
	}
	c, err := readChatChunk(data)
	if err != nil {
		return fmt.Errorf("read chat completion chunk: %w", err)
	}
	if !isJSONNull(c.err) || name == "error" {
		message, code := chatErrorMessage(data)
		if message == "" {
			message = "The upstream stream reported an error."
		}
		return s.fail(anthropicTypeForCode(code), responsesMessageForAnthropic(code, message), emit)
	}
	if err := s.start(c.id, c.model, emit); err != nil {
		return err
	}
	if nonEmptyJSONString(c.reasoning) {
		if err := s.textual("thinking", "thinking_delta", "thinking", c.reasoning, emit); err != nil {
			return err
		}
	}
	for _, raw := range [][]byte{c.content, c.refusal} {
		if nonEmptyJSONString(raw) {
			if err := s.textual("text", "text_delta", "text", raw, emit); err != nil {
				return err
			}
		}
	}
	if len(c.toolCalls) > 0 && c.toolCalls[0] == '[' {
		err := chatEachElement(c.toolCalls, func(_ int, _ []byte, tc *chatFields) error {
			return s.toolCall(tc, emit)
		})
		if err != nil {
			return err
		}
	}
	if isJSONString(c.finish) {
		f := anthropic.Unquote(c.finish)
		s.finish = &f
		if err := s.closeOpen(emit); err != nil {
			return err
		}
	}
	if len(c.usage) > 0 && c.usage[0] == '{' {
		var u chatUsage
		if err := json.Unmarshal(c.usage, &u); err != nil {
			return fmt.Errorf("read chat completion usage: %w", err)
		}
		s.usage = &u
	}
	if s.finish != nil && s.usage != nil {
		return s.complete(emit)
	}
	return nil
}

// End finishes the stream: a stream that finished but never sent [DONE]
// ends cleanly; one cut before its finish leaves the client an error event,
// never a silent end.
func (s *ChatStreamToAnthropic) End(emit func(name string, data []byte) error) error {
	if s.finished {
		return nil
	}
	if s.finish != nil {
		return s.complete(emit)
	}
	return s.fail(anthropic.APIError, "The upstream closed the stream before it finished.", emit)
}

func nonEmptyJSONString(raw []byte) bool { return isJSONString(raw) && !isEmptyJSONString(raw) }

func (s *ChatStreamToAnthropic) start(id, model []byte, emit func(string, []byte) error) error {
	if s.started {
		return nil
	}
	s.started = true
	m := anthropic.Unquote(model)
	if m == "" {
		m = s.opts.Model
	}
	msgID := s.opts.messageID(anthropic.Unquote(id))
	if !isJSONString(id) && s.opts.MessageID == "" {
		msgID = "msg_" + strconv.FormatInt(s.opts.now().UnixNano(), 36)
	}
	data, err := responsesMarshal(anthropicMessageStartEvent{Type: "message_start", Message: anthropicStartMessage{
		ID: msgID, Type: "message", Role: "assistant", Model: m, Content: []any{}}})
	if err != nil {
		return err
	}
	return emit("message_start", data)
}

// textual forwards a text or reasoning fragment (a raw JSON string, never
// decoded) into the open block of its kind, opening one if needed.
func (s *ChatStreamToAnthropic) textual(kind, deltaType, field string, raw []byte, emit func(string, []byte) error) error {
	if s.openKind != kind {
		block := `{"type":"text","text":""}`
		if kind == "thinking" {
			block = `{"type":"thinking","thinking":"","signature":""}`
		}
		if err := s.openBlock(kind, block, emit); err != nil {
			return err
		}
	}
	return s.delta(deltaType, field, raw, emit)
}

func (s *ChatStreamToAnthropic) openBlock(kind, block string, emit func(string, []byte) error) error {
	if err := s.closeOpen(emit); err != nil {
		return err
	}
	s.open, s.openKind = s.next, kind
	s.next++
	d := make([]byte, 0, len(block)+64)
	d = append(d, `{"type":"content_block_start","index":`...)
	d = strconv.AppendInt(d, int64(s.open), 10)
	d = append(d, `,"content_block":`...)
	d = append(d, block...)
	d = append(d, '}')
	return emit("content_block_start", d)
}

func (s *ChatStreamToAnthropic) closeOpen(emit func(string, []byte) error) error {
	if s.open < 0 {
		return nil
	}
	if s.openKind == "thinking" {
		// The mark that lets the reasoning go back to a Chat upstream (and
		// keeps it from Anthropic), as ChatReplyToAnthropic gives it.
		if err := s.delta("signature_delta", "signature", []byte(`"`+chatReasoningSignature+`"`), emit); err != nil {
			return err
		}
	}
	index := s.open
	s.open, s.openKind = -1, ""
	d := strconv.AppendInt([]byte(`{"type":"content_block_stop","index":`), int64(index), 10)
	return emit("content_block_stop", append(d, '}'))
}

func (s *ChatStreamToAnthropic) delta(deltaType, field string, raw []byte, emit func(string, []byte) error) error {
	d := s.frame[:0]
	d = append(d, `{"type":"content_block_delta","index":`...)
	d = strconv.AppendInt(d, int64(s.open), 10)
	d = append(d, `,"delta":{"type":"`...)
	d = append(d, deltaType...)
	d = append(d, `","`...)
	d = append(d, field...)
	d = append(d, `":`...)
	d = append(d, raw...)
	d = append(d, "}}"...)
	s.frame = d
	return emit("content_block_delta", d)
}

// toolCall handles one element of delta.tool_calls. Its index keys it; a
// server that sends none (Gemini's OpenAI endpoint) starts a call with each
// id and continues the last one otherwise.
func (s *ChatStreamToAnthropic) toolCall(tc *chatFields, emit func(string, []byte) error) error {
	idx, err := strconv.Atoi(string(tc.Index))
	switch {
	case err == nil:
	case isJSONString(tc.ID):
		idx = len(s.tools)
		for s.tools[idx] {
			idx++
		}
	default:
		idx = s.lastTool
	}
	fn, _ := parseChatFields(tc.Function) // absent: no name, no arguments
	if s.openKind != "tool_use" || s.openTool != idx {
		if s.tools[idx] {
			return s.fail(anthropic.APIError, "The upstream interleaved the arguments of parallel tool calls, which this translation cannot follow.", emit)
		}
		if idx < 0 {
			return nil // a fragment before any call started
		}
		s.tools[idx] = true
		s.lastTool = idx
		id := anthropic.Unquote(tc.ID)
		if id == "" {
			id = "call_" + strconv.Itoa(idx)
		}
		block, err := responsesMarshal(anthropicToolUseOut{Type: "tool_use", ID: id, Name: anthropic.Unquote(fn.Name), Input: json.RawMessage("{}")})
		if err != nil {
			return err
		}
		if err := s.openBlock("tool_use", string(block), emit); err != nil {
			return err
		}
		s.openTool = idx
	}
	args := fn.Arguments
	if len(args) > 0 && args[0] == '{' { // an object, as some servers send it
		args = anthropic.Quote(string(compactJSON(args)))
	}
	if !nonEmptyJSONString(args) {
		return nil
	}
	return s.delta("input_json_delta", "partial_json", args, emit)
}

func (s *ChatStreamToAnthropic) complete(emit func(string, []byte) error) error {
	if err := s.start(nil, nil, emit); err != nil {
		return err
	}
	if err := s.closeOpen(emit); err != nil {
		return err
	}
	s.finished = true
	finish := ""
	if s.finish != nil {
		finish = *s.finish
	}
	data, err := responsesMarshal(anthropicMessageDeltaEvent{Type: "message_delta",
		Delta: anthropicStopDelta{StopReason: anthropicStopFromChat(finish, len(s.tools) > 0)},
		Usage: anthropicUsageFromChat(s.usage)})
	if err != nil {
		return err
	}
	if err := emit("message_delta", data); err != nil {
		return err
	}
	return emit("message_stop", []byte(`{"type":"message_stop"}`))
}

func (s *ChatStreamToAnthropic) fail(typ, message string, emit func(string, []byte) error) error {
	s.finished = true
	return emit("error", anthropic.ErrorJSON(typ, message))
}
