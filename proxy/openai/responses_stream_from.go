package openai

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"longhaul/proxy/anthropic"
	"longhaul/proxy/sse"
)

// ResponsesStreamFromAnthropic turns a Messages stream into a Responses
// stream, event by event: each Messages event is answered at once with the
// Responses events it stands for, none held back. The sequence is the one
// the API sends and openai-node's ResponseStream and Codex CLI read:
//
//	response.created, response.in_progress
//	per text run:    response.output_item.added (message), then per block
//	                 response.content_part.added, response.output_text.delta…,
//	                 response.output_text.done, response.content_part.done;
//	                 response.output_item.done when the run ends
//	per thinking:    response.output_item.added (reasoning),
//	                 response.reasoning_summary_part.added,
//	                 response.reasoning_summary_text.delta…, .done,
//	                 response.reasoning_summary_part.done, response.output_item.done
//	per tool_use:    response.output_item.added (function_call),
//	                 response.function_call_arguments.delta…, .done,
//	                 response.output_item.done
//	then response.completed or response.incomplete (max tokens, refusal),
//	or error + response.failed.
//
// Every event carries sequence_number (0, 1, 2…); item events carry
// output_index and item_id, part events content_index, summary events
// summary_index (openai-node's Response*Event types).
type ResponsesStreamFromAnthropic struct {
	opts     ResponsesReplyOptions
	seq      int
	resp     responsesObject
	tail     string // id tail that item ids derive from
	started  bool
	finished bool
	usage    anthropicUsageWire
	stop     string

	nextOutput int
	outputs    []json.RawMessage // finished items, for the final response
	msg        *responsesOpenMessage
	blocks     map[int]*responsesOpenBlock // by Messages block index
	frame      []byte
}

type responsesOpenMessage struct {
	id          string
	outputIndex int
	parts       []string
}

type responsesOpenBlock struct {
	kind         string // "text", "thinking", "tool_use", or "" for a block that is not translated
	outputIndex  int
	contentIndex int
	itemID       string
	text         strings.Builder
	signature    string
	callID, name string
	summaryOpen  bool
}

// NewResponsesStreamFromAnthropic starts a translation.
func NewResponsesStreamFromAnthropic(opts ResponsesReplyOptions) *ResponsesStreamFromAnthropic {
	return &ResponsesStreamFromAnthropic{opts: opts, blocks: map[int]*responsesOpenBlock{}}
}

// emit writes one event with its sequence number.
func (s *ResponsesStreamFromAnthropic) emit(write func([]byte) error, name string, data []byte) error {
	s.frame = sse.AppendEvent(s.frame[:0], name, data)
	s.seq++
	return write(s.frame)
}

type responsesItemEvent struct {
	Type           string `json:"type"`
	SequenceNumber int    `json:"sequence_number"`
	OutputIndex    int    `json:"output_index"`
	Item           any    `json:"item"`
}

type responsesPartEvent struct {
	Type           string `json:"type"`
	SequenceNumber int    `json:"sequence_number"`
	ItemID         string `json:"item_id"`
	OutputIndex    int    `json:"output_index"`
	ContentIndex   int    `json:"content_index"`
	Part           any    `json:"part"`
}

type responsesTextDoneEvent struct {
	Type           string            `json:"type"`
	SequenceNumber int               `json:"sequence_number"`
	ItemID         string            `json:"item_id"`
	OutputIndex    int               `json:"output_index"`
	ContentIndex   int               `json:"content_index"`
	Text           string            `json:"text"`
	Logprobs       []json.RawMessage `json:"logprobs"`
}

type responsesSummaryEvent struct {
	Type           string  `json:"type"`
	SequenceNumber int     `json:"sequence_number"`
	ItemID         string  `json:"item_id"`
	OutputIndex    int     `json:"output_index"`
	SummaryIndex   int     `json:"summary_index"`
	Part           any     `json:"part,omitempty"`
	Text           *string `json:"text,omitempty"`
}

type responsesArgumentsDoneEvent struct {
	Type           string `json:"type"`
	SequenceNumber int    `json:"sequence_number"`
	ItemID         string `json:"item_id"`
	OutputIndex    int    `json:"output_index"`
	Name           string `json:"name"`
	Arguments      string `json:"arguments"`
}

type responsesResponseEvent struct {
	Type           string           `json:"type"`
	SequenceNumber int              `json:"sequence_number"`
	Response       *responsesObject `json:"response"`
}

type responsesErrorEvent struct {
	Type           string  `json:"type"`
	SequenceNumber int     `json:"sequence_number"`
	Code           *string `json:"code"`
	Message        string  `json:"message"`
	Param          *string `json:"param"`
}

func (s *ResponsesStreamFromAnthropic) emitJSON(write func([]byte) error, name string, v any) error {
	b, err := responsesMarshal(v)
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	return s.emit(write, name, b)
}

// Event translates one Messages event, calling write once per Responses
// event. A frame is valid only during its write call: its buffer is reused
// for the next one, so a writer that keeps it must copy it.
func (s *ResponsesStreamFromAnthropic) Event(name string, data []byte, write func(frame []byte) error) error {
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
		if err := s.ensureStarted(write); err != nil {
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
		if err := s.ensureStarted(write); err != nil {
			return err
		}
		return s.complete(write)
	case "error":
		msg := "upstream error"
		typ := anthropic.APIError
		if d, ok := anthropic.ParseError(data); ok {
			msg, typ = d.Message, d.Type
		}
		return s.fail(write, responsesCodeForAnthropicType(typ), msg)
	}
	return nil // ping, and events a later API may add
}

// End finishes the stream: an upstream that stopped before message_stop
// leaves the client an error and response.failed, never a silent end.
func (s *ResponsesStreamFromAnthropic) End(write func(frame []byte) error) error {
	if s.finished {
		return nil
	}
	if err := s.ensureStarted(write); err != nil {
		return err
	}
	return s.fail(write, "server_error", "The upstream stream ended before the response was complete.")
}

func responsesCodeForAnthropicType(typ string) string {
	switch typ {
	case anthropic.RateLimitError:
		return CodeRateLimitExceeded
	case anthropic.InvalidRequestError:
		return "invalid_request_error"
	}
	return "server_error"
}

func (s *ResponsesStreamFromAnthropic) start(data []byte, write func([]byte) error) error {
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

func (s *ResponsesStreamFromAnthropic) ensureStarted(write func([]byte) error) error {
	if s.started {
		return nil
	}
	return s.begin("", s.opts.Model, write)
}

func (s *ResponsesStreamFromAnthropic) begin(messageID, model string, write func([]byte) error) error {
	if s.started {
		return nil
	}
	s.started = true
	id := s.opts.responseID(messageID)
	if messageID == "" && s.opts.ResponseID == "" {
		id = "resp_" + strconv.FormatInt(s.opts.now().UnixNano(), 36)
	}
	s.tail = responsesIDTail(id)
	s.resp = newResponsesObject(id, model, "in_progress", s.opts.now().Unix(), s.opts.Echo)
	if err := s.emitJSON(write, "response.created", responsesResponseEvent{Type: "response.created", SequenceNumber: s.seq, Response: &s.resp}); err != nil {
		return err
	}
	return s.emitJSON(write, "response.in_progress", responsesResponseEvent{Type: "response.in_progress", SequenceNumber: s.seq, Response: &s.resp})
}

func (s *ResponsesStreamFromAnthropic) blockStart(data []byte, write func([]byte) error) error {
	var ev struct {
		Index        int                `json:"index"`
		ContentBlock anthropicBlockWire `json:"content_block"`
	}
	if err := json.Unmarshal(data, &ev); err != nil {
		return fmt.Errorf("read content_block_start: %w", err)
	}
	b := &responsesOpenBlock{kind: ev.ContentBlock.Type}
	s.blocks[ev.Index] = b
	switch b.kind {
	case "text":
		if s.msg == nil {
			s.msg = &responsesOpenMessage{id: "msg_" + s.tail + "_" + strconv.Itoa(s.nextOutput), outputIndex: s.nextOutput}
			s.nextOutput++
			item := responsesMessageItem{ID: s.msg.id, Type: "message", Status: "in_progress", Role: "assistant", Content: []responsesOutputText{}}
			if err := s.emitJSON(write, "response.output_item.added", responsesItemEvent{Type: "response.output_item.added", SequenceNumber: s.seq, OutputIndex: s.msg.outputIndex, Item: item}); err != nil {
				return err
			}
		}
		b.itemID, b.outputIndex, b.contentIndex = s.msg.id, s.msg.outputIndex, len(s.msg.parts)
		s.msg.parts = append(s.msg.parts, "")
		if err := s.emitJSON(write, "response.content_part.added", responsesPartEvent{Type: "response.content_part.added", SequenceNumber: s.seq,
			ItemID: b.itemID, OutputIndex: b.outputIndex, ContentIndex: b.contentIndex, Part: newResponsesOutputText("")}); err != nil {
			return err
		}
		if ev.ContentBlock.Text != "" {
			return s.textDelta(b, anthropic.Quote(ev.ContentBlock.Text), write)
		}
		return nil
	case "thinking":
		if err := s.closeMessage(write); err != nil {
			return err
		}
		b.itemID, b.outputIndex = "rs_"+s.tail+"_"+strconv.Itoa(s.nextOutput), s.nextOutput
		s.nextOutput++
		item := responsesReasoningItem{ID: b.itemID, Type: "reasoning", Summary: []responsesSummaryPart{}}
		return s.emitJSON(write, "response.output_item.added", responsesItemEvent{Type: "response.output_item.added", SequenceNumber: s.seq, OutputIndex: b.outputIndex, Item: item})
	case "tool_use":
		if err := s.closeMessage(write); err != nil {
			return err
		}
		b.callID, b.name = ev.ContentBlock.ID, ev.ContentBlock.Name
		b.itemID, b.outputIndex = responsesFunctionCallID(b.callID), s.nextOutput
		s.nextOutput++
		item := responsesFunctionCallItem{ID: b.itemID, Type: "function_call", Status: "in_progress", CallID: b.callID, Name: b.name}
		if err := s.emitJSON(write, "response.output_item.added", responsesItemEvent{Type: "response.output_item.added", SequenceNumber: s.seq, OutputIndex: b.outputIndex, Item: item}); err != nil {
			return err
		}
		// The API starts a tool_use with an empty input and streams it; a
		// replayed stream may carry the whole input here instead.
		if in := compactJSON(ev.ContentBlock.Input); len(in) > 0 && string(in) != "{}" {
			b.text.Write(in)
			return s.deltaFrame(write, "response.function_call_arguments.delta", b, "", 0, anthropic.Quote(string(in)), false)
		}
		return nil
	case "redacted_thinking":
		// Complete at its start: announced and finished at once, its data
		// carried for the way back to Anthropic.
		if err := s.closeMessage(write); err != nil {
			return err
		}
		b.kind = ""
		oi := s.nextOutput
		s.nextOutput++
		id := "rs_" + s.tail + "_" + strconv.Itoa(oi)
		enc := responsesAnthropicRedactedPrefix + ev.ContentBlock.Data
		if err := s.emitJSON(write, "response.output_item.added", responsesItemEvent{Type: "response.output_item.added", SequenceNumber: s.seq, OutputIndex: oi,
			Item: responsesReasoningItem{ID: id, Type: "reasoning", Summary: []responsesSummaryPart{}}}); err != nil {
			return err
		}
		return s.itemDone(write, oi, responsesReasoningItem{ID: id, Type: "reasoning", Summary: []responsesSummaryPart{}, EncryptedContent: &enc})
	}
	b.kind = "" // server tools and their results: Anthropic's own
	return nil
}

// deltaFrame writes a delta event by hand around the raw JSON string of the
// Messages delta: the text is never decoded and re-encoded on the way.
func (s *ResponsesStreamFromAnthropic) deltaFrame(write func([]byte) error, typ string, b *responsesOpenBlock, index string, indexValue int, rawDelta []byte, logprobs bool) error {
	d := make([]byte, 0, len(rawDelta)+160)
	d = append(d, `{"type":"`...)
	d = append(d, typ...)
	d = append(d, `","sequence_number":`...)
	d = strconv.AppendInt(d, int64(s.seq), 10)
	d = append(d, `,"item_id":`...)
	d = append(d, anthropic.Quote(b.itemID)...)
	d = append(d, `,"output_index":`...)
	d = strconv.AppendInt(d, int64(b.outputIndex), 10)
	if index != "" {
		d = append(d, `,"`...)
		d = append(d, index...)
		d = append(d, `":`...)
		d = strconv.AppendInt(d, int64(indexValue), 10)
	}
	d = append(d, `,"delta":`...)
	d = append(d, rawDelta...)
	if logprobs {
		d = append(d, `,"logprobs":[]`...)
	}
	d = append(d, '}')
	return s.emit(write, typ, d)
}

func (s *ResponsesStreamFromAnthropic) textDelta(b *responsesOpenBlock, raw []byte, write func([]byte) error) error {
	b.text.WriteString(anthropic.Unquote(raw))
	return s.deltaFrame(write, "response.output_text.delta", b, "content_index", b.contentIndex, raw, true)
}

func (s *ResponsesStreamFromAnthropic) blockDelta(data []byte, write func([]byte) error) error {
	idx, err := strconv.Atoi(string(anthropic.MemberValue(data, "index")))
	if err != nil {
		return fmt.Errorf("read content_block_delta: no index")
	}
	b := s.blocks[idx]
	if b == nil || b.kind == "" {
		return nil
	}
	delta := anthropic.MemberValue(data, "delta")
	switch anthropic.Unquote(anthropic.MemberValue(delta, "type")) {
	case "text_delta":
		if raw := anthropic.MemberValue(delta, "text"); isJSONString(raw) {
			return s.textDelta(b, raw, write)
		}
	case "thinking_delta":
		raw := anthropic.MemberValue(delta, "thinking")
		if !isJSONString(raw) || len(raw) == 2 {
			return nil
		}
		if !b.summaryOpen {
			b.summaryOpen = true
			if err := s.emitJSON(write, "response.reasoning_summary_part.added", responsesSummaryEvent{Type: "response.reasoning_summary_part.added", SequenceNumber: s.seq,
				ItemID: b.itemID, OutputIndex: b.outputIndex, Part: responsesSummaryPart{Type: "summary_text"}}); err != nil {
				return err
			}
		}
		b.text.WriteString(anthropic.Unquote(raw))
		return s.deltaFrame(write, "response.reasoning_summary_text.delta", b, "summary_index", 0, raw, false)
	case "signature_delta":
		b.signature += anthropic.Unquote(anthropic.MemberValue(delta, "signature"))
	case "input_json_delta":
		raw := anthropic.MemberValue(delta, "partial_json")
		if !isJSONString(raw) || len(raw) == 2 {
			return nil
		}
		b.text.WriteString(anthropic.Unquote(raw))
		return s.deltaFrame(write, "response.function_call_arguments.delta", b, "", 0, raw, false)
	}
	return nil
}

func (s *ResponsesStreamFromAnthropic) blockStop(data []byte, write func([]byte) error) error {
	idx, err := strconv.Atoi(string(anthropic.MemberValue(data, "index")))
	if err != nil {
		return fmt.Errorf("read content_block_stop: no index")
	}
	b := s.blocks[idx]
	delete(s.blocks, idx)
	if b == nil {
		return nil
	}
	switch b.kind {
	case "text":
		text := b.text.String()
		if s.msg != nil && b.contentIndex < len(s.msg.parts) {
			s.msg.parts[b.contentIndex] = text
		}
		if err := s.emitJSON(write, "response.output_text.done", responsesTextDoneEvent{Type: "response.output_text.done", SequenceNumber: s.seq,
			ItemID: b.itemID, OutputIndex: b.outputIndex, ContentIndex: b.contentIndex, Text: text, Logprobs: []json.RawMessage{}}); err != nil {
			return err
		}
		return s.emitJSON(write, "response.content_part.done", responsesPartEvent{Type: "response.content_part.done", SequenceNumber: s.seq,
			ItemID: b.itemID, OutputIndex: b.outputIndex, ContentIndex: b.contentIndex, Part: newResponsesOutputText(text)})
	case "thinking":
		text := b.text.String()
		item := responsesReasoningItem{ID: b.itemID, Type: "reasoning", Summary: []responsesSummaryPart{}}
		if b.summaryOpen {
			part := responsesSummaryPart{Type: "summary_text", Text: text}
			item.Summary = append(item.Summary, part)
			if err := s.emitJSON(write, "response.reasoning_summary_text.done", responsesSummaryEvent{Type: "response.reasoning_summary_text.done", SequenceNumber: s.seq,
				ItemID: b.itemID, OutputIndex: b.outputIndex, Text: &text}); err != nil {
				return err
			}
			if err := s.emitJSON(write, "response.reasoning_summary_part.done", responsesSummaryEvent{Type: "response.reasoning_summary_part.done", SequenceNumber: s.seq,
				ItemID: b.itemID, OutputIndex: b.outputIndex, Part: part}); err != nil {
				return err
			}
		}
		// Only OpenAI's own reasoning (carried in a marked signature) goes
		// back as encrypted_content; an Anthropic signature never does.
		if rid, enc, ok := parseResponsesReasoningSignature(b.signature); ok {
			item.ID, item.EncryptedContent = rid, &enc
		} else if enc := responsesEncryptedForThinking(b.signature); enc != "" {
			item.EncryptedContent = &enc
		}
		return s.itemDone(write, b.outputIndex, item)
	case "tool_use":
		args := b.text.String()
		if strings.TrimSpace(args) == "" {
			args = "{}"
		}
		if err := s.emitJSON(write, "response.function_call_arguments.done", responsesArgumentsDoneEvent{Type: "response.function_call_arguments.done", SequenceNumber: s.seq,
			ItemID: b.itemID, OutputIndex: b.outputIndex, Name: b.name, Arguments: args}); err != nil {
			return err
		}
		return s.itemDone(write, b.outputIndex, responsesFunctionCallItem{ID: b.itemID, Type: "function_call", Status: "completed", Arguments: args, CallID: b.callID, Name: b.name})
	}
	return nil
}

func (s *ResponsesStreamFromAnthropic) itemDone(write func([]byte) error, outputIndex int, item any) error {
	raw, err := responsesMarshal(item)
	if err != nil {
		return fmt.Errorf("write output item: %w", err)
	}
	s.outputs = append(s.outputs, raw)
	return s.emit(write, "response.output_item.done", responsesItemDoneFrame(s.seq, outputIndex, raw))
}

func responsesItemDoneFrame(seq, outputIndex int, item []byte) []byte {
	d := make([]byte, 0, len(item)+96)
	d = append(d, `{"type":"response.output_item.done","sequence_number":`...)
	d = strconv.AppendInt(d, int64(seq), 10)
	d = append(d, `,"output_index":`...)
	d = strconv.AppendInt(d, int64(outputIndex), 10)
	d = append(d, `,"item":`...)
	d = append(d, item...)
	return append(d, '}')
}

// closeMessage ends the open message item (a run of text blocks).
func (s *ResponsesStreamFromAnthropic) closeMessage(write func([]byte) error) error {
	m := s.msg
	if m == nil {
		return nil
	}
	s.msg = nil
	status, _ := responsesStatus(s.stop)
	item := responsesMessageItem{ID: m.id, Type: "message", Status: status, Role: "assistant", Content: make([]responsesOutputText, 0, len(m.parts))}
	for _, p := range m.parts {
		item.Content = append(item.Content, newResponsesOutputText(p))
	}
	return s.itemDone(write, m.outputIndex, item)
}

func (s *ResponsesStreamFromAnthropic) messageDelta(data []byte) {
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

func (s *ResponsesStreamFromAnthropic) complete(write func([]byte) error) error {
	if err := s.closeMessage(write); err != nil {
		return err
	}
	s.finished = true
	status, incomplete := responsesStatus(s.stop)
	s.resp.Status, s.resp.IncompleteDetails = status, incomplete
	s.resp.Output = append([]json.RawMessage{}, s.outputs...)
	s.resp.Usage = responsesUsageFromAnthropic(s.usage)
	name := "response.completed"
	if status == "incomplete" {
		name = "response.incomplete"
	}
	return s.emitJSON(write, name, responsesResponseEvent{Type: name, SequenceNumber: s.seq, Response: &s.resp})
}

func (s *ResponsesStreamFromAnthropic) fail(write func([]byte) error, code, message string) error {
	if err := s.ensureStarted(write); err != nil {
		return err
	}
	s.finished = true
	c := code
	if err := s.emitJSON(write, "error", responsesErrorEvent{Type: "error", SequenceNumber: s.seq, Code: &c, Message: message}); err != nil {
		return err
	}
	s.resp.Status = "failed"
	s.resp.Error = &responsesError{Code: "server_error", Message: message}
	if code == CodeRateLimitExceeded {
		s.resp.Error.Code = "rate_limit_exceeded"
	}
	s.resp.Output = append([]json.RawMessage{}, s.outputs...)
	return s.emitJSON(write, "response.failed", responsesResponseEvent{Type: "response.failed", SequenceNumber: s.seq, Response: &s.resp})
}
