package openai

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"longhaul/proxy/anthropic"
)

// Non-stream replies between a chat.completion object and a Messages reply.
// Shapes checked against openai-node's ChatCompletion, ChatCompletionMessage,
// ChatCompletionMessageFunctionToolCall and CompletionUsage
// (src/resources/completions.ts), and the Messages API's Message object.
// Two fields outside openai-node's types are read and written, as the
// OpenAI-compatible servers and clients that use them do: reasoning_content
// (DeepSeek, vLLM; "reasoning" on newer vLLM and OpenRouter) and
// thinking_blocks (LiteLLM's carrier of Claude's signed thinking).

// ChatReplyOptions is what a Chat reply or stream translation needs from
// outside. The zero value is usable.
type ChatReplyOptions struct {
	// Model names the model when the reply names none.
	Model string
	// CompletionID is the id given to a translated Messages reply ("" =
	// "chatcmpl-" + the message id's tail).
	CompletionID string
	// MessageID is the Messages id given to a translated completion ("" =
	// "msg_" + the completion id's tail).
	MessageID string
	// Now stamps created. nil = time.Now.
	Now func() time.Time
	// IncludeUsage ends a translated stream with the usage chunk (choices
	// []), as a Chat client asks with stream_options.include_usage
	// (ChatIncludeUsage).
	IncludeUsage bool
}

func (o ChatReplyOptions) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

func chatIDTail(id string) string {
	if tail, ok := strings.CutPrefix(id, "chatcmpl-"); ok && tail != "" {
		return tail
	}
	return responsesIDTail(id)
}

func (o ChatReplyOptions) completionID(messageID string) string {
	if o.CompletionID != "" {
		return o.CompletionID
	}
	return "chatcmpl-" + responsesIDTail(messageID)
}

func (o ChatReplyOptions) messageID(completionID string) string {
	if o.MessageID != "" {
		return o.MessageID
	}
	return "msg_" + chatIDTail(completionID)
}

// chatUsage is a Chat usage object as read and written. DeepSeek counts
// cached prompt tokens in prompt_cache_hit_tokens instead of
// prompt_tokens_details.
type chatUsage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	TotalTokens         int `json:"total_tokens"`
	PromptTokensDetails *struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details,omitempty"`
	CompletionTokensDetails *struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details,omitempty"`
	PromptCacheHitTokens *int `json:"prompt_cache_hit_tokens,omitempty"`
}

// Usage: OpenAI's prompt_tokens include cached ones; Anthropic's
// input_tokens exclude cache reads and writes, which it counts apart.
func chatUsageFromAnthropic(u anthropicUsageWire) *chatUsage {
	c := &chatUsage{
		PromptTokens:     u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens,
		CompletionTokens: u.OutputTokens,
	}
	c.TotalTokens = c.PromptTokens + c.CompletionTokens
	c.PromptTokensDetails = &struct {
		CachedTokens int `json:"cached_tokens"`
	}{u.CacheReadInputTokens}
	c.CompletionTokensDetails = &struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	}{0}
	return c
}

func anthropicUsageFromChat(u *chatUsage) anthropicUsageWire {
	if u == nil {
		return anthropicUsageWire{}
	}
	cached := 0
	switch {
	case u.PromptTokensDetails != nil:
		cached = u.PromptTokensDetails.CachedTokens
	case u.PromptCacheHitTokens != nil:
		cached = *u.PromptCacheHitTokens
	}
	return anthropicUsageWire{
		InputTokens:          max(u.PromptTokens-cached, 0),
		CacheReadInputTokens: cached,
		OutputTokens:         u.CompletionTokens,
	}
}

// chatFinishReason maps a Messages stop reason to a finish_reason.
func chatFinishReason(stopReason string, calledTools bool) string {
	switch stopReason {
	case "max_tokens", "model_context_window_exceeded":
		return "length"
	case "tool_use":
		return "tool_calls"
	case "refusal":
		return "content_filter"
	}
	if calledTools {
		return "tool_calls"
	}
	return "stop"
}

// anthropicStopFromChat maps a finish_reason to a Messages stop reason. Some
// servers (Ollama) finish a tool call with "stop": the calls decide.
func anthropicStopFromChat(finish string, calledTools bool) string {
	switch finish {
	case "length":
		return "max_tokens"
	case "content_filter":
		return "refusal"
	case "tool_calls", "function_call":
		return "tool_use"
	}
	if calledTools {
		return "tool_use"
	}
	return "end_turn"
}

// chatArguments reads function.arguments: a JSON string as the API sends
// it, or an object as some compatible servers do.
func chatArguments(raw json.RawMessage) string {
	if len(raw) > 0 && raw[0] == '{' {
		return string(raw)
	}
	return anthropic.Unquote(raw)
}

// The chat.completion object as read: the union of what compatible servers send.
type chatCompletionWire struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Model   string `json:"model"`
	Choices []struct {
		Message      chatMessageWire `json:"message"`
		FinishReason *string         `json:"finish_reason"`
	} `json:"choices"`
	Usage *chatUsage       `json:"usage"`
	Error *json.RawMessage `json:"error"`
}

type chatMessageWire struct {
	Content          json.RawMessage     `json:"content"` // a string, or text parts
	Refusal          *string             `json:"refusal"`
	ReasoningContent *string             `json:"reasoning_content"`
	Reasoning        *string             `json:"reasoning"`
	ThinkingBlocks   []chatThinkingBlock `json:"thinking_blocks"`
	ToolCalls        []struct {
		ID       string `json:"id"`
		Function struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
}

// chatThinkingBlock is an element of thinking_blocks (LiteLLM's shape): a
// Claude thinking or redacted_thinking block whose signature or data
// carries our mark.
type chatThinkingBlock struct {
	Type      string  `json:"type"`
	Thinking  *string `json:"thinking,omitempty"`
	Signature string  `json:"signature,omitempty"`
	Data      string  `json:"data,omitempty"`
}

func (m chatMessageWire) reasoning() string {
	switch {
	case m.ReasoningContent != nil:
		return *m.ReasoningContent
	case m.Reasoning != nil:
		return *m.Reasoning
	}
	return ""
}

// text reads content: a string, or text parts as some servers send them.
func (m chatMessageWire) text() string {
	if len(m.Content) == 0 || m.Content[0] != '[' {
		return anthropic.Unquote(m.Content)
	}
	var parts []struct{ Type, Text string }
	if json.Unmarshal(m.Content, &parts) != nil {
		return ""
	}
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

// chatThinkingFromBlocks restores Claude's thinking from thinking_blocks
// whose signatures carry our mark; nil when none does.
func chatThinkingFromBlocks(blocks []chatThinkingBlock) []any {
	var out []any
	for _, tb := range blocks {
		switch tb.Type {
		case "thinking":
			sig, ok := strings.CutPrefix(tb.Signature, responsesAnthropicThinkingPrefix)
			if ok && tb.Thinking != nil {
				out = append(out, anthropicThinkingOut{Type: "thinking", Thinking: *tb.Thinking, Signature: sig})
			}
		case "redacted_thinking":
			if data, ok := strings.CutPrefix(tb.Data, responsesAnthropicRedactedPrefix); ok {
				out = append(out, anthropicRedactedOut{Type: "redacted_thinking", Data: data})
			}
		}
	}
	return out
}

// ChatReplyToAnthropic translates a chat.completion object into a Messages
// reply. An error object answered with 200 (some compatible servers do) is
// returned as a *ChatRequestError carrying the upstream's message.
func ChatReplyToAnthropic(body []byte, opts ChatReplyOptions) ([]byte, error) {
	var c chatCompletionWire
	if err := json.Unmarshal(body, &c); err != nil {
		return nil, fmt.Errorf("read chat completion: %w", err)
	}
	if c.Error != nil && len(c.Choices) == 0 {
		_, msg := ChatErrorToAnthropic(http.StatusBadGateway, body)
		return nil, &ChatRequestError{Status: http.StatusBadGateway, Message: msg}
	}
	if c.Object != "" && c.Object != "chat.completion" {
		return nil, fmt.Errorf("read chat completion: object %q, want chat.completion", c.Object)
	}
	if len(c.Choices) == 0 {
		return nil, errors.New("read chat completion: no choices")
	}
	model := c.Model
	if model == "" {
		model = opts.Model
	}
	choice := c.Choices[0]
	msg := choice.Message
	out := anthropicReplyOut{ID: opts.messageID(c.ID), Type: "message", Role: "assistant", Model: model, Content: []any{}}
	if restored := chatThinkingFromBlocks(msg.ThinkingBlocks); restored != nil {
		out.Content = append(out.Content, restored...)
	} else if r := msg.reasoning(); r != "" {
		out.Content = append(out.Content, anthropicThinkingOut{Type: "thinking", Thinking: r, Signature: chatReasoningSignature})
	}
	if t := msg.text(); t != "" {
		out.Content = append(out.Content, anthropicTextOut{Type: "text", Text: t})
	}
	if msg.Refusal != nil && *msg.Refusal != "" {
		out.Content = append(out.Content, anthropicTextOut{Type: "text", Text: *msg.Refusal})
	}
	for _, tc := range msg.ToolCalls {
		out.Content = append(out.Content, anthropicToolUseOut{Type: "tool_use", ID: tc.ID, Name: tc.Function.Name,
			Input: anthropicToolInput(chatArguments(tc.Function.Arguments))})
	}
	finish := ""
	if choice.FinishReason != nil {
		finish = *choice.FinishReason
	}
	out.StopReason = anthropicStopFromChat(finish, len(msg.ToolCalls) > 0)
	out.Usage = anthropicUsageFromChat(c.Usage)
	return responsesMarshal(out)
}

// The chat.completion object as written, members in the API's order.
type chatCompletionOut struct {
	ID      string          `json:"id"`
	Object  string          `json:"object"`
	Created int64           `json:"created"`
	Model   string          `json:"model"`
	Choices []chatChoiceOut `json:"choices"`
	Usage   *chatUsage      `json:"usage"`
}

type chatChoiceOut struct {
	Index        int            `json:"index"`
	Message      chatMessageOut `json:"message"`
	Logprobs     *struct{}      `json:"logprobs"`
	FinishReason string         `json:"finish_reason"`
}

type chatMessageOut struct {
	Role             string              `json:"role"`
	Content          *string             `json:"content"`
	Refusal          *string             `json:"refusal"`
	ReasoningContent *string             `json:"reasoning_content,omitempty"`
	ThinkingBlocks   []chatThinkingBlock `json:"thinking_blocks,omitempty"`
	ToolCalls        []chatToolCallOut   `json:"tool_calls,omitempty"`
	Annotations      []json.RawMessage   `json:"annotations"`
}

type chatToolCallOut struct {
	ID       string           `json:"id"`
	Type     string           `json:"type"`
	Function chatFunctionCall `json:"function"`
}

type chatFunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// chatThinkingToClient is how a Claude thinking block reaches a Chat
// client: its text in reasoning_content (which DeepSeek-aware clients show)
// and, when signed, the block itself in thinking_blocks with a marked
// signature, so a client that sends the message back keeps the tool loop's
// signed chain. A Chat upstream's own reasoning has nothing to sign.
func chatThinkingToClient(typ, thinking, signature, data string) (chatThinkingBlock, bool) {
	switch {
	case typ == "redacted_thinking":
		return chatThinkingBlock{Type: "redacted_thinking", Data: responsesAnthropicRedactedPrefix + data}, true
	case signature == "" || ChatIsReasoningSignature(signature) || ResponsesIsReasoningSignature(signature):
		return chatThinkingBlock{}, false
	}
	return chatThinkingBlock{Type: "thinking", Thinking: &thinking, Signature: responsesAnthropicThinkingPrefix + signature}, true
}

// ChatReplyFromAnthropic translates a Messages reply into a chat.completion
// object.
func ChatReplyFromAnthropic(body []byte, opts ChatReplyOptions) ([]byte, error) {
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
	var text, reasoning strings.Builder
	hasText, hasReasoning := false, false
	m := chatMessageOut{Role: "assistant", Annotations: []json.RawMessage{}}
	for _, blk := range msg.Content {
		switch blk.Type {
		case "text":
			text.WriteString(blk.Text)
			hasText = true
		case "thinking", "redacted_thinking":
			if blk.Type == "thinking" && blk.Thinking != "" {
				reasoning.WriteString(blk.Thinking)
				hasReasoning = true
			}
			if tb, ok := chatThinkingToClient(blk.Type, blk.Thinking, blk.Signature, blk.Data); ok {
				m.ThinkingBlocks = append(m.ThinkingBlocks, tb)
			}
		case "tool_use":
			m.ToolCalls = append(m.ToolCalls, chatToolCallOut{ID: blk.ID, Type: "function",
				Function: chatFunctionCall{Name: blk.Name, Arguments: responsesCallArguments(blk.Input)}})
		}
	}
	if hasText {
		s := text.String()
		m.Content = &s
	}
	if hasReasoning {
		s := reasoning.String()
		m.ReasoningContent = &s
	}
	stop := ""
	if msg.StopReason != nil {
		stop = *msg.StopReason
	}
	return responsesMarshal(chatCompletionOut{
		ID: opts.completionID(msg.ID), Object: "chat.completion", Created: opts.now().Unix(), Model: model,
		Choices: []chatChoiceOut{{Index: 0, Message: m, FinishReason: chatFinishReason(stop, len(m.ToolCalls) > 0)}},
		Usage:   chatUsageFromAnthropic(msg.Usage),
	})
}
