package openai

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"longhaul/proxy/anthropic"
	"longhaul/proxy/sse"
)

// ChatStreamFromAnthropic turns a Messages stream into Chat Completions
// chunks, event by event, each written at once as "data: {json}\n\n". The
// sequence is the one OpenAI sends and openai-node's ChatCompletionStream
// reads:
//
//	a first chunk with delta {"role":"assistant","content":""}
//	text deltas as delta.content
//	thinking deltas as delta.reasoning_content (the field DeepSeek, vLLM
//	  and the clients that show reasoning read; not in openai-node's types,
//	  whose accumulator keeps the last value of such a field), and at the
//	  end of a signed thinking block one delta.thinking_blocks holding the
//	  whole block under a marked signature (see ChatReplyFromAnthropic)
//	per tool_use: delta.tool_calls [{index, id, type, function {name,
//	  arguments ""}}], then argument fragments [{index, function {arguments}}]
//	a last choice chunk with delta {} and finish_reason
//	with opts.IncludeUsage, a usage chunk (choices []); every earlier chunk
//	  then carries "usage": null, as the API does
//	data: [DONE]
//
// An error event becomes a data chunk {"error":{…}} and the stream stops
// there, as OpenAI-compatible servers end a failed stream.
type ChatStreamFromAnthropic struct {
	opts     ChatReplyOptions
	started  bool
	finished bool
	head     []byte // the chunk up to the delta: {"id":…,"choices":[{"index":0,"delta":
	tail     []byte // after the delta, finish_reason null
	blocks   map[int]*chatFromBlock
	tools    int // tool calls so far
	stop     string
	usage    anthropicUsageWire
	id       string
	model    string
	created  int64
	frame    []byte
	chunk    []byte
}

type chatFromBlock struct {
	kind      string // "text", "thinking", "tool_use"; "" for a block not translated
	tool      int    // tool_calls index
	thinking  strings.Builder
	signature string
}

// NewChatStreamFromAnthropic starts a translation.
func NewChatStreamFromAnthropic(opts ChatReplyOptions) *ChatStreamFromAnthropic {
	return &ChatStreamFromAnthropic{opts: opts, blocks: map[int]*chatFromBlock{}}
}

// Event translates one Messages event, calling write once per chunk. A frame
// is valid only during its write call: its buffer is reused for the next.
func (s *ChatStreamFromAnthropic) Event(name string, data []byte, write func(frame []byte) error) error {
	if s.finished {
		return nil
	}
	if name == "" {
		name = anthropic.Unquote(anthropic.MemberValue(data, "type"))
	}
	switch name {
	case "message_start":
		return s.start(data, write)
	case "content_block_start":
		if err := s.begin("", s.opts.Model, write); err != nil {
			return err
		}
		return s.blockStart(data, write)
	case "content_block_delta":
		return s.blockDelta(data, write)
	case "content_block_stop":
		return s.blockStop(data, write)
	case "message_delta":
		s.messageDelta(data)
		return nil
	case "message_stop":
		if err := s.begin("", s.opts.Model, write); err != nil {
			return err
		}
		return s.complete(write)
	case "error":
		msg, typ := "upstream error", anthropic.APIError
		if d, ok := anthropic.ParseError(data); ok && d.Message != "" {
			msg, typ = d.Message, d.Type
		}
		return s.fail(write, chatStatusForAnthropicType(typ), msg)
	}
	return nil // ping, and events a later API may add
}

// End finishes the stream: an upstream that stopped before message_stop
// leaves the client an error chunk, never a silent end.
func (s *ChatStreamFromAnthropic) End(write func(frame []byte) error) error {
	if s.finished {
		return nil
	}
	return s.fail(write, http.StatusBadGateway, "The upstream closed the stream before it finished.")
}

// chatStatusForAnthropicType is the HTTP status an Anthropic error type
// pairs with, for the OpenAI error type and code of an in-band error.
func chatStatusForAnthropicType(typ string) int {
	switch typ {
	case anthropic.InvalidRequestError:
		return http.StatusBadRequest
	case anthropic.AuthenticationError:
		return http.StatusUnauthorized
	case anthropic.PermissionError:
		return http.StatusForbidden
	case anthropic.NotFoundError:
		return http.StatusNotFound
	case anthropic.RequestTooLarge:
		return http.StatusRequestEntityTooLarge
	case anthropic.RateLimitError:
		return http.StatusTooManyRequests
	case anthropic.OverloadedError:
		return 529
	case anthropic.TimeoutError:
		return http.StatusGatewayTimeout
	}
	return http.StatusInternalServerError
}

func (s *ChatStreamFromAnthropic) start(data []byte, write func([]byte) error) error {
	var ev struct {
		Message anthropicReplyWire `json:"message"`
	}
	if err := json.Unmarshal(data, &ev); err != nil {
		return fmt.Errorf("read message_start: %w", err)
	}
	s.usage = ev.Message.Usage
	model := ev.Message.Model
	if model == "" {
		model = s.opts.Model
	}
	return s.begin(ev.Message.ID, model, write)
}

func (s *ChatStreamFromAnthropic) begin(messageID, model string, write func([]byte) error) error {
	if s.started {
		return nil
	}
	s.started = true
	s.id = s.opts.completionID(messageID)
	if messageID == "" && s.opts.CompletionID == "" {
		s.id = "chatcmpl-" + strconv.FormatInt(s.opts.now().UnixNano(), 36)
	}
	s.model, s.created = model, s.opts.now().Unix()
	h := make([]byte, 0, 128)
	h = append(h, `{"id":`...)
	h = append(h, anthropic.Quote(s.id)...)
	h = append(h, `,"object":"chat.completion.chunk","created":`...)
	h = strconv.AppendInt(h, s.created, 10)
	h = append(h, `,"model":`...)
	h = append(h, anthropic.Quote(model)...)
	s.head = append(h, `,"choices":[{"index":0,"delta":`...)
	s.tail = []byte(`,"logprobs":null,"finish_reason":null}]`)
	if s.opts.IncludeUsage {
		s.tail = append(s.tail, `,"usage":null`...)
	}
	s.tail = append(s.tail, '}')
	return s.emitDelta(write, []byte(`{"role":"assistant","content":"","refusal":null}`))
}

// emitDelta writes a choice chunk around delta (a JSON object).
func (s *ChatStreamFromAnthropic) emitDelta(write func([]byte) error, delta ...[]byte) error {
	c := append(s.chunk[:0], s.head...)
	for _, d := range delta {
		c = append(c, d...)
	}
	s.chunk = append(c, s.tail...)
	return s.emit(write, s.chunk)
}

func (s *ChatStreamFromAnthropic) emit(write func([]byte) error, chunk []byte) error {
	s.frame = sse.AppendEvent(s.frame[:0], "", chunk)
	return write(s.frame)
}

var (
	chatContentOpen   = []byte(`{"content":`)
	chatReasoningOpen = []byte(`{"reasoning_content":`)
	chatCloseBrace    = []byte(`}`)
)

func (s *ChatStreamFromAnthropic) blockStart(data []byte, write func([]byte) error) error {
	var ev struct {
		Index        int                `json:"index"`
		ContentBlock anthropicBlockWire `json:"content_block"`
	}
	if err := json.Unmarshal(data, &ev); err != nil {
		return fmt.Errorf("read content_block_start: %w", err)
	}
	b := &chatFromBlock{kind: ev.ContentBlock.Type}
	s.blocks[ev.Index] = b
	switch b.kind {
	case "text":
		if ev.ContentBlock.Text != "" {
			return s.emitDelta(write, chatContentOpen, anthropic.Quote(ev.ContentBlock.Text), chatCloseBrace)
		}
	case "thinking":
		if ev.ContentBlock.Thinking != "" {
			b.thinking.WriteString(ev.ContentBlock.Thinking)
			return s.emitDelta(write, chatReasoningOpen, anthropic.Quote(ev.ContentBlock.Thinking), chatCloseBrace)
		}
	case "redacted_thinking":
		b.kind = ""
		tb, _ := chatThinkingToClient("redacted_thinking", "", "", ev.ContentBlock.Data)
		return s.thinkingBlock(write, tb)
	case "tool_use":
		b.tool = s.tools
		s.tools++
		call := struct {
			Index    int              `json:"index"`
			ID       string           `json:"id"`
			Type     string           `json:"type"`
			Function chatFunctionCall `json:"function"`
		}{b.tool, ev.ContentBlock.ID, "function", chatFunctionCall{Name: ev.ContentBlock.Name}}
		raw, err := responsesMarshal(call)
		if err != nil {
			return err
		}
		if err := s.emitDelta(write, []byte(`{"tool_calls":[`), raw, []byte(`]}`)); err != nil {
			return err
		}
		// The API starts a tool_use with an empty input and streams it; a
		// replayed stream may carry the whole input here instead.
		if in := compactJSON(ev.ContentBlock.Input); len(in) > 0 && string(in) != "{}" {
			return s.arguments(write, b, anthropic.Quote(string(in)))
		}
	default:
		b.kind = "" // server tools and their results: Anthropic's own
	}
	return nil
}

func (s *ChatStreamFromAnthropic) thinkingBlock(write func([]byte) error, tb chatThinkingBlock) error {
	raw, err := responsesMarshal(tb)
	if err != nil {
		return err
	}
	return s.emitDelta(write, []byte(`{"thinking_blocks":[`), raw, []byte(`]}`))
}

func (s *ChatStreamFromAnthropic) arguments(write func([]byte) error, b *chatFromBlock, raw []byte) error {
	d := make([]byte, 0, len(raw)+64)
	d = append(d, `{"tool_calls":[{"index":`...)
	d = strconv.AppendInt(d, int64(b.tool), 10)
	d = append(d, `,"function":{"arguments":`...)
	d = append(d, raw...)
	d = append(d, "}}]}"...)
	return s.emitDelta(write, d)
}

func (s *ChatStreamFromAnthropic) blockDelta(data []byte, write func([]byte) error) error {
	var index, delta []byte
	err := anthropic.EachMember(data, func(k, v []byte) error {
		switch string(k) {
		case "index":
			index = v
		case "delta":
			delta = v
		}
		return nil
	})
	idx, aerr := strconv.Atoi(string(index))
	if err != nil || aerr != nil {
		return fmt.Errorf("read content_block_delta: no index")
	}
	b := s.blocks[idx]
	if b == nil || b.kind == "" || len(delta) == 0 || delta[0] != '{' {
		return nil
	}
	var typ, text, thinking, signature, partial []byte
	if err := anthropic.EachMember(delta, func(k, v []byte) error {
		switch string(k) {
		case "type":
			typ = v
		case "text":
			text = v
		case "thinking":
			thinking = v
		case "signature":
			signature = v
		case "partial_json":
			partial = v
		}
		return nil
	}); err != nil {
		return fmt.Errorf("read content_block_delta: %w", err)
	}
	switch string(responsesName(typ)) {
	case "text_delta":
		if nonEmptyJSONString(text) {
			return s.emitDelta(write, chatContentOpen, text, chatCloseBrace)
		}
	case "thinking_delta":
		if nonEmptyJSONString(thinking) {
			b.thinking.WriteString(anthropic.Unquote(thinking))
			return s.emitDelta(write, chatReasoningOpen, thinking, chatCloseBrace)
		}
	case "signature_delta":
		b.signature += anthropic.Unquote(signature)
	case "input_json_delta":
		if nonEmptyJSONString(partial) {
			return s.arguments(write, b, partial)
		}
	}
	return nil
}

func (s *ChatStreamFromAnthropic) blockStop(data []byte, write func([]byte) error) error {
	idx, err := strconv.Atoi(string(anthropic.MemberValue(data, "index")))
	if err != nil {
		return fmt.Errorf("read content_block_stop: no index")
	}
	b := s.blocks[idx]
	delete(s.blocks, idx)
	if b == nil || b.kind != "thinking" {
		return nil
	}
	if tb, ok := chatThinkingToClient("thinking", b.thinking.String(), b.signature, ""); ok {
		return s.thinkingBlock(write, tb)
	}
	return nil
}

func (s *ChatStreamFromAnthropic) messageDelta(data []byte) {
	var ev struct {
		Delta struct {
			StopReason *string `json:"stop_reason"`
		} `json:"delta"`
		Usage *struct {
			InputTokens              *int `json:"input_tokens"`
			CacheCreationInputTokens *int `json:"cache_creation_input_tokens"`
			CacheReadInputTokens     *int `json:"cache_read_input_tokens"`
			OutputTokens             *int `json:"output_tokens"`
		} `json:"usage"`
	}
	if json.Unmarshal(data, &ev) != nil {
		return
	}
	if ev.Delta.StopReason != nil {
		s.stop = *ev.Delta.StopReason
	}
	if u := ev.Usage; u != nil {
		// message_delta's usage is cumulative; fields it leaves out keep
		// message_start's values.
		for _, f := range []struct {
			v   *int
			dst *int
		}{{u.InputTokens, &s.usage.InputTokens}, {u.CacheCreationInputTokens, &s.usage.CacheCreationInputTokens},
			{u.CacheReadInputTokens, &s.usage.CacheReadInputTokens}, {u.OutputTokens, &s.usage.OutputTokens}} {
			if f.v != nil {
				*f.dst = *f.v
			}
		}
	}
}

func (s *ChatStreamFromAnthropic) complete(write func([]byte) error) error {
	s.finished = true
	d := append(s.chunk[:0], s.head...)
	d = append(d, `{},"logprobs":null,"finish_reason":"`...)
	d = append(d, chatFinishReason(s.stop, s.tools > 0)...)
	d = append(d, `"}]`...)
	if s.opts.IncludeUsage {
		d = append(d, `,"usage":null`...)
	}
	s.chunk = append(d, '}')
	if err := s.emit(write, s.chunk); err != nil {
		return err
	}
	if s.opts.IncludeUsage {
		usage, err := responsesMarshal(chatUsageFromAnthropic(s.usage))
		if err != nil {
			return err
		}
		u := append(s.chunk[:0], `{"id":`...)
		u = append(u, anthropic.Quote(s.id)...)
		u = append(u, `,"object":"chat.completion.chunk","created":`...)
		u = strconv.AppendInt(u, s.created, 10)
		u = append(u, `,"model":`...)
		u = append(u, anthropic.Quote(s.model)...)
		u = append(u, `,"choices":[],"usage":`...)
		u = append(u, usage...)
		s.chunk = append(u, '}')
		if err := s.emit(write, s.chunk); err != nil {
			return err
		}
	}
	return write([]byte("data: [DONE]\n\n"))
}

func (s *ChatStreamFromAnthropic) fail(write func([]byte) error, status int, message string) error {
	s.finished = true
	return s.emit(write, ErrorJSON(status, responsesErrorCode(status, message), "", message))
}
