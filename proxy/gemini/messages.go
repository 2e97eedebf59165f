package gemini

import "encoding/json"

// The Anthropic Messages shapes this package decodes and encodes as structs:
// a request's settings and tools, and a reply. A request's messages, which
// make up nearly all of its bytes, go through raw spans instead (raw.go).

// aRequest is a Messages request without its system and messages.
type aRequest struct {
	Model         string         `json:"model"`
	MaxTokens     int            `json:"max_tokens"`
	Tools         []aTool        `json:"tools,omitempty"`
	ToolChoice    *aToolChoice   `json:"tool_choice,omitempty"`
	Temperature   *float64       `json:"temperature,omitempty"`
	TopP          *float64       `json:"top_p,omitempty"`
	TopK          *int           `json:"top_k,omitempty"`
	StopSequences []string       `json:"stop_sequences,omitempty"`
	Stream        bool           `json:"stream,omitempty"`
	Thinking      *aThinking     `json:"thinking,omitempty"`
	OutputConfig  *aOutputConfig `json:"output_config,omitempty"`
}

// aRequestTail is the small end of a Messages request that
// RequestToAnthropic writes after the messages it builds itself.
type aRequestTail struct {
	Tools         []aTool        `json:"tools,omitempty"`
	ToolChoice    *aToolChoice   `json:"tool_choice,omitempty"`
	Temperature   *float64       `json:"temperature,omitempty"`
	TopP          *float64       `json:"top_p,omitempty"`
	TopK          *int           `json:"top_k,omitempty"`
	StopSequences []string       `json:"stop_sequences,omitempty"`
	Stream        bool           `json:"stream,omitempty"`
	Thinking      *aThinking     `json:"thinking,omitempty"`
	OutputConfig  *aOutputConfig `json:"output_config,omitempty"`
}

// aBlock is any content block; fields unused by its type stay empty.
type aBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	Thinking  *string         `json:"thinking,omitempty"`
	Signature *string         `json:"signature,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   json.RawMessage `json:"content,omitempty"` // tool_result: string or blocks
	IsError   bool            `json:"is_error,omitempty"`
}

type aTool struct {
	Type        string          `json:"type,omitempty"` // server tools: web_search_20250305 …
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
}

type aToolChoice struct {
	Type string `json:"type"` // auto, any, tool, none
	Name string `json:"name,omitempty"`
}

type aThinking struct {
	Type         string `json:"type"` // enabled, adaptive, disabled
	BudgetTokens int    `json:"budget_tokens,omitempty"`
}

type aOutputConfig struct {
	Format *aFormat `json:"format,omitempty"`
	Effort string   `json:"effort,omitempty"`
}

type aFormat struct {
	Type   string          `json:"type"` // json_schema
	Schema json.RawMessage `json:"schema,omitempty"`
}

type aReply struct {
	ID           string   `json:"id"`
	Type         string   `json:"type"`
	Role         string   `json:"role"`
	Model        string   `json:"model"`
	Content      []aBlock `json:"content"`
	StopReason   *string  `json:"stop_reason"`
	StopSequence *string  `json:"stop_sequence"`
	Usage        aUsage   `json:"usage"`
}

type aUsage struct {
	InputTokens              int `json:"input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens,omitempty"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens,omitempty"`
}
