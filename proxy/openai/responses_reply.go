package openai

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"longhaul/proxy/anthropic"
)

// Non-stream replies between the Responses API's response object and a
// Messages reply. Shapes checked against openai-node's Response,
// ResponseOutputMessage, ResponseFunctionToolCall, ResponseReasoningItem and
// ResponseUsage, and the Messages API's Message object.

// ResponsesReplyOptions is what a reply or stream translation needs from
// outside. The zero value is usable.
type ResponsesReplyOptions struct {
	// Model names the model when the reply names none.
	Model string
	// ResponseID is the Responses id given to a translated Messages reply
	// ("" = "resp_" + the message id's tail).
	ResponseID string
	// MessageID is the Messages id given to a translated response ("" =
	// "msg_" + the response id's tail).
	MessageID string
	// Now stamps created_at. nil = time.Now.
	Now func() time.Time
	// Echo holds the request parameters a response object repeats
	// (ResponsesEchoOf). The zero value repeats the API's defaults.
	Echo ResponsesEcho
}

func (o ResponsesReplyOptions) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

// ResponsesEcho is what a response object repeats of its request; each field
// is raw JSON, nil when the request did not set it.
type ResponsesEcho struct {
	Instructions, MaxOutputTokens, PreviousResponseID, Reasoning, Text       json.RawMessage
	ToolChoice, Tools, ParallelToolCalls, Temperature, TopP, Store, Metadata json.RawMessage
}

// ResponsesEchoOf reads the parameters a response repeats from a Responses
// request, without decoding its input.
func ResponsesEchoOf(request []byte) ResponsesEcho {
	var e ResponsesEcho
	if len(request) == 0 || request[0] != '{' {
		return e
	}
	if anthropic.EachMember(request, func(k, v []byte) error {
		switch string(k) {
		case "instructions":
			e.Instructions = v
		case "max_output_tokens":
			e.MaxOutputTokens = v
		case "previous_response_id":
			e.PreviousResponseID = v
		case "reasoning":
			e.Reasoning = v
		case "text":
			e.Text = v
		case "tool_choice":
			e.ToolChoice = v
		case "tools":
			e.Tools = v
		case "parallel_tool_calls":
			e.ParallelToolCalls = v
		case "temperature":
			e.Temperature = v
		case "top_p":
			e.TopP = v
		case "store":
			e.Store = v
		case "metadata":
			e.Metadata = v
		}
		return nil
	}) != nil {
		return ResponsesEcho{}
	}
	return e
}

func orJSON(v json.RawMessage, def string) json.RawMessage {
	if len(v) == 0 {
		return json.RawMessage(def)
	}
	return v
}

// The response object, with the members in the API's order.
type responsesObject struct {
	ID                 string               `json:"id"`
	Object             string               `json:"object"`
	CreatedAt          int64                `json:"created_at"`
	Status             string               `json:"status"`
	Error              *responsesError      `json:"error"`
	IncompleteDetails  *responsesIncomplete `json:"incomplete_details"`
	Instructions       json.RawMessage      `json:"instructions"`
	MaxOutputTokens    json.RawMessage      `json:"max_output_tokens"`
	Model              string               `json:"model"`
	Output             []json.RawMessage    `json:"output"`
	ParallelToolCalls  json.RawMessage      `json:"parallel_tool_calls"`
	PreviousResponseID json.RawMessage      `json:"previous_response_id"`
	Reasoning          json.RawMessage      `json:"reasoning"`
	Store              json.RawMessage      `json:"store"`
	Temperature        json.RawMessage      `json:"temperature"`
	Text               json.RawMessage      `json:"text"`
	ToolChoice         json.RawMessage      `json:"tool_choice"`
	Tools              json.RawMessage      `json:"tools"`
	TopP               json.RawMessage      `json:"top_p"`
	Truncation         string               `json:"truncation"`
	Usage              *responsesUsage      `json:"usage"`
	Metadata           json.RawMessage      `json:"metadata"`
}

type responsesError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

type responsesIncomplete struct {
	Reason string `json:"reason"`
}

type responsesUsage struct {
	InputTokens        int `json:"input_tokens"`
	InputTokensDetails struct {
		CachedTokens     int `json:"cached_tokens"`
		CacheWriteTokens int `json:"cache_write_tokens"`
	} `json:"input_tokens_details"`
	OutputTokens        int `json:"output_tokens"`
	OutputTokensDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
	TotalTokens int `json:"total_tokens"`
}

func newResponsesObject(id, model, status string, createdAt int64, echo ResponsesEcho) responsesObject {
	return responsesObject{
		ID: id, Object: "response", CreatedAt: createdAt, Status: status, Model: model,
		Output:             []json.RawMessage{},
		Instructions:       orJSON(echo.Instructions, "null"),
		MaxOutputTokens:    orJSON(echo.MaxOutputTokens, "null"),
		ParallelToolCalls:  orJSON(echo.ParallelToolCalls, "true"),
		PreviousResponseID: orJSON(echo.PreviousResponseID, "null"),
		Reasoning:          orJSON(echo.Reasoning, `{"effort":null,"summary":null}`),
		Store:              orJSON(echo.Store, "true"),
		Temperature:        orJSON(echo.Temperature, "1"),
		Text:               orJSON(echo.Text, `{"format":{"type":"text"}}`),
		ToolChoice:         orJSON(echo.ToolChoice, `"auto"`),
		Tools:              orJSON(echo.Tools, "[]"),
		TopP:               orJSON(echo.TopP, "1"),
		Truncation:         "disabled",
		Metadata:           orJSON(echo.Metadata, "{}"),
	}
}

// Output items as the API writes them.
type responsesMessageItem struct {
	ID      string                `json:"id"`
	Type    string                `json:"type"`
	Status  string                `json:"status"`
	Role    string                `json:"role"`
	Content []responsesOutputText `json:"content"`
}

type responsesOutputText struct {
	Type        string            `json:"type"`
	Text        string            `json:"text"`
	Annotations []json.RawMessage `json:"annotations"`
}

func newResponsesOutputText(text string) responsesOutputText {
	return responsesOutputText{Type: "output_text", Text: text, Annotations: []json.RawMessage{}}
}

type responsesFunctionCallItem struct {
	ID        string `json:"id"`
	Type      string `json:"type"`
	Status    string `json:"status"`
	Arguments string `json:"arguments"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
}

type responsesReasoningItem struct {
	ID               string                 `json:"id"`
	Type             string                 `json:"type"`
	Summary          []responsesSummaryPart `json:"summary"`
	EncryptedContent *string                `json:"encrypted_content,omitempty"`
}

type responsesSummaryPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// An output item as read: the union of the three kinds.
type responsesItemWire struct {
	Type    string `json:"type"`
	ID      string `json:"id"`
	Status  string `json:"status"`
	Role    string `json:"role"`
	Content []struct {
		Type    string `json:"type"`
		Text    string `json:"text"`
		Refusal string `json:"refusal"`
	} `json:"content"`
	CallID           string                 `json:"call_id"`
	Name             string                 `json:"name"`
	Arguments        string                 `json:"arguments"`
	Summary          []responsesSummaryPart `json:"summary"`
	EncryptedContent *string                `json:"encrypted_content"`
}

type responsesObjectWire struct {
	ID                string               `json:"id"`
	Object            string               `json:"object"`
	Status            string               `json:"status"`
	Model             string               `json:"model"`
	Error             *responsesError      `json:"error"`
	IncompleteDetails *responsesIncomplete `json:"incomplete_details"`
	Output            []responsesItemWire  `json:"output"`
	Usage             *responsesUsage      `json:"usage"`
}

// The Messages side.
type anthropicReplyWire struct {
	ID           string               `json:"id"`
	Type         string               `json:"type"`
	Role         string               `json:"role"`
	Model        string               `json:"model"`
	Content      []anthropicBlockWire `json:"content"`
	StopReason   *string              `json:"stop_reason"`
	StopSequence *string              `json:"stop_sequence"`
	Usage        anthropicUsageWire   `json:"usage"`
}

type anthropicBlockWire struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	Thinking  string          `json:"thinking,omitempty"`
	Signature string          `json:"signature,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	Data      string          `json:"data,omitempty"`
}

type anthropicRedactedOut struct {
	Type string `json:"type"`
	Data string `json:"data"`
}

type anthropicUsageWire struct {
	InputTokens              int `json:"input_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
	OutputTokens             int `json:"output_tokens"`
}

// Messages blocks as written (every member present, as the API sends them).
type anthropicTextOut struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type anthropicThinkingOut struct {
	Type      string `json:"type"`
	Thinking  string `json:"thinking"`
	Signature string `json:"signature"`
}

type anthropicToolUseOut struct {
	Type  string          `json:"type"`
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

type anthropicReplyOut struct {
	ID           string             `json:"id"`
	Type         string             `json:"type"`
	Role         string             `json:"role"`
	Model        string             `json:"model"`
	Content      []any              `json:"content"`
	StopReason   string             `json:"stop_reason"`
	StopSequence *string            `json:"stop_sequence"`
	Usage        anthropicUsageWire `json:"usage"`
}

// Usage: OpenAI's input_tokens include cached ones; Anthropic's exclude
// cache reads and writes, which it counts apart.
func responsesUsageFromAnthropic(u anthropicUsageWire) *responsesUsage {
	var r responsesUsage
	r.InputTokens = u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens
	r.InputTokensDetails.CachedTokens = u.CacheReadInputTokens
	r.InputTokensDetails.CacheWriteTokens = u.CacheCreationInputTokens
	r.OutputTokens = u.OutputTokens
	r.TotalTokens = r.InputTokens + r.OutputTokens
	return &r
}

func anthropicUsageFromResponses(u *responsesUsage) anthropicUsageWire {
	if u == nil {
		return anthropicUsageWire{}
	}
	cached, written := u.InputTokensDetails.CachedTokens, u.InputTokensDetails.CacheWriteTokens
	return anthropicUsageWire{
		InputTokens:              max(u.InputTokens-cached-written, 0),
		CacheReadInputTokens:     cached,
		CacheCreationInputTokens: written,
		OutputTokens:             u.OutputTokens,
	}
}

func responsesIDTail(id string) string {
	if _, tail, ok := strings.Cut(id, "_"); ok && tail != "" {
		return tail
	}
	return id
}

func (o ResponsesReplyOptions) responseID(messageID string) string {
	if o.ResponseID != "" {
		return o.ResponseID
	}
	return "resp_" + responsesIDTail(messageID)
}

func (o ResponsesReplyOptions) messageID(responseID string) string {
	if o.MessageID != "" {
		return o.MessageID
	}
	return "msg_" + responsesIDTail(responseID)
}

// responsesStatus maps a Messages stop reason to a response status.
func responsesStatus(stopReason string) (string, *responsesIncomplete) {
	switch stopReason {
	case "max_tokens", "model_context_window_exceeded":
		return "incomplete", &responsesIncomplete{Reason: "max_output_tokens"}
	case "refusal":
		return "incomplete", &responsesIncomplete{Reason: "content_filter"}
	}
	return "completed", nil
}

// anthropicStopReason maps a response's end to a Messages stop reason.
func anthropicStopReason(status string, incomplete *responsesIncomplete, calledTools bool) string {
	if status == "incomplete" && incomplete != nil {
		switch incomplete.Reason {
		case "max_output_tokens":
			return "max_tokens"
		case "content_filter":
			return "refusal"
		}
	}
	if calledTools {
		return "tool_use"
	}
	return "end_turn"
}

// responsesCallArguments turns a tool_use input into function_call arguments.
func responsesCallArguments(input json.RawMessage) string {
	if isJSONNull(input) {
		return "{}"
	}
	return string(compactJSON(input))
}

// anthropicToolInput turns function_call arguments into a tool_use input,
// which Messages requires to be an object: anything else is kept as a
// string under "arguments" so nothing the model wrote is lost.
func anthropicToolInput(arguments string) json.RawMessage {
	s := strings.TrimSpace(arguments)
	if s == "" {
		return json.RawMessage("{}")
	}
	if s[0] == '{' && json.Valid([]byte(s)) {
		return compactJSON([]byte(s))
	}
	b, _ := json.Marshal(map[string]string{"arguments": arguments}) // a string map cannot fail
	return b
}

func responsesFunctionCallID(callID string) string { return "fc_" + responsesIDTail(callID) }

// ResponsesReplyFromAnthropic translates a Messages reply into a response
// object.
func ResponsesReplyFromAnthropic(body []byte, opts ResponsesReplyOptions) ([]byte, error) {
	var msg anthropicReplyWire
	if err := json.Unmarshal(body, &msg); err != nil {
		return nil, fmt.Errorf("read Messages reply: %w", err)
	}
	if msg.Type != "message" {
		return nil, fmt.Errorf("read Messages reply: type %q, want message", msg.Type)
	}
	model := msg.Model
	if model == "" {
		model = opts.Model
	}
	stop := ""
	if msg.StopReason != nil {
		stop = *msg.StopReason
	}
	status, incomplete := responsesStatus(stop)
	id := opts.responseID(msg.ID)
	resp := newResponsesObject(id, model, status, opts.now().Unix(), opts.Echo)
	resp.IncompleteDetails = incomplete
	resp.Usage = responsesUsageFromAnthropic(msg.Usage)

	var text *responsesMessageItem
	flush := func() error {
		if text == nil {
			return nil
		}
		b, err := responsesMarshal(text)
		resp.Output = append(resp.Output, b)
		text = nil
		return err
	}
	add := func(item any) error {
		if err := flush(); err != nil {
			return err
		}
		b, err := responsesMarshal(item)
		resp.Output = append(resp.Output, b)
		return err
	}
	for i, blk := range msg.Content {
		var err error
		switch blk.Type {
		case "text":
			if text == nil {
				text = &responsesMessageItem{ID: "msg_" + responsesIDTail(id) + "_" + strconv.Itoa(i), Type: "message", Status: status, Role: "assistant"}
			}
			text.Content = append(text.Content, newResponsesOutputText(blk.Text))
		case "thinking":
			item := responsesReasoningItem{ID: "rs_" + responsesIDTail(id) + "_" + strconv.Itoa(i), Type: "reasoning", Summary: []responsesSummaryPart{}}
			if rid, enc, ok := parseResponsesReasoningSignature(blk.Signature); ok {
				item.ID, item.EncryptedContent = rid, &enc
			} else if enc := responsesEncryptedForThinking(blk.Signature); enc != "" {
				item.EncryptedContent = &enc
			}
			if blk.Thinking != "" {
				item.Summary = append(item.Summary, responsesSummaryPart{Type: "summary_text", Text: blk.Thinking})
			}
			err = add(item)
		case "redacted_thinking":
			enc := responsesAnthropicRedactedPrefix + blk.Data
			err = add(responsesReasoningItem{ID: "rs_" + responsesIDTail(id) + "_" + strconv.Itoa(i), Type: "reasoning", Summary: []responsesSummaryPart{}, EncryptedContent: &enc})
		case "tool_use":
			err = add(responsesFunctionCallItem{ID: responsesFunctionCallID(blk.ID), Type: "function_call", Status: "completed",
				Arguments: responsesCallArguments(blk.Input), CallID: blk.ID, Name: blk.Name})
		}
		if err != nil {
			return nil, fmt.Errorf("write response: %w", err)
		}
	}
	if err := flush(); err != nil {
		return nil, fmt.Errorf("write response: %w", err)
	}
	return responsesMarshal(resp)
}

// ResponsesReplyToAnthropic translates a response object into a Messages
// reply. A failed response is returned as a *ResponsesRequestError carrying
// the upstream's message.
func ResponsesReplyToAnthropic(body []byte, opts ResponsesReplyOptions) ([]byte, error) {
	var resp responsesObjectWire
	if err := json.Unmarshal(body, &resp); err != nil {
		return nil, fmt.Errorf("read response: %w", err)
	}
	if resp.Object != "response" {
		return nil, fmt.Errorf("read response: object %q, want response", resp.Object)
	}
	if resp.Status == "failed" {
		e := &ResponsesRequestError{Status: http.StatusBadGateway, Message: "the upstream response failed"}
		if resp.Error != nil {
			e.Code, e.Message = resp.Error.Code, resp.Error.Message
		}
		return nil, e
	}
	model := resp.Model
	if model == "" {
		model = opts.Model
	}
	out := anthropicReplyOut{ID: opts.messageID(resp.ID), Type: "message", Role: "assistant", Model: model, Content: []any{}}
	called := false
	for _, item := range resp.Output {
		switch item.Type {
		case "message":
			for _, c := range item.Content {
				t := c.Text
				if c.Type == "refusal" {
					t = c.Refusal
				}
				if t != "" {
					out.Content = append(out.Content, anthropicTextOut{Type: "text", Text: t})
				}
			}
		case "reasoning":
			enc := ""
			if item.EncryptedContent != nil {
				enc = *item.EncryptedContent
			}
			if data, ok := strings.CutPrefix(enc, responsesAnthropicRedactedPrefix); ok {
				out.Content = append(out.Content, anthropicRedactedOut{Type: "redacted_thinking", Data: data})
				continue
			}
			th := anthropicThinkingOut{Type: "thinking", Thinking: responsesSummaryJoin(item.Summary)}
			if enc != "" {
				th.Signature = responsesSignatureForReasoning(item.ID, enc)
			} else if th.Thinking == "" {
				continue
			}
			out.Content = append(out.Content, th)
		case "function_call":
			called = true
			out.Content = append(out.Content, anthropicToolUseOut{Type: "tool_use", ID: item.CallID, Name: item.Name, Input: anthropicToolInput(item.Arguments)})
		}
	}
	out.StopReason = anthropicStopReason(resp.Status, resp.IncompleteDetails, called)
	out.Usage = anthropicUsageFromResponses(resp.Usage)
	return responsesMarshal(out)
}

func responsesSummaryJoin(parts []responsesSummaryPart) string {
	texts := make([]string, 0, len(parts))
	for _, p := range parts {
		texts = append(texts, p.Text)
	}
	return strings.Join(texts, "\n\n")
}
