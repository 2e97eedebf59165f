package proxytest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"unicode/utf8"
	"weak"
)

// Message is a scripted assistant reply. Each *Message is rendered (SSE and
// JSON) once, on first use, and the bytes are cached per pointer; do not
// mutate a Message after it has been served or rendered.
//
// The json tags let tests decode a real non-stream response back into a
// Message for comparison.
type Message struct {
	ID         string  `json:"id"`    // "" = a generated msg_… id
	Model      string  `json:"model"` // "" = DefaultModel
	Content    []Block `json:"content"`
	StopReason string  `json:"stop_reason"` // "" = "tool_use" if any tool_use block, else "end_turn"
	Usage      Usage   `json:"usage"`
	// ChunkSize is the byte size of each text_delta / thinking_delta /
	// input_json_delta chunk. 0 = about four chunks per block (min 8 bytes),
	// which resembles the real API's few-words-per-delta streaming.
	ChunkSize int `json:"-"`
}

// Block is one content block. Which fields matter depends on Type:
// "text" (Text), "thinking" (Thinking, Signature), "redacted_thinking" (Data),
// "tool_use" (ID, Name, Input).
type Block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	Thinking  string          `json:"thinking,omitempty"`
	Signature string          `json:"signature,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	Data      string          `json:"data,omitempty"`
}

// Usage mirrors the API's usage object.
type Usage struct {
	InputTokens              int `json:"input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
	// CacheCreation splits CacheCreationInputTokens by TTL; sent only when not zero.
	CacheCreation CacheCreation `json:"cache_creation,omitzero"`
}

// CacheCreation is usage.cache_creation: the tokens written to the cache, by TTL.
type CacheCreation struct {
	Ephemeral5m int `json:"ephemeral_5m_input_tokens"`
	Ephemeral1h int `json:"ephemeral_1h_input_tokens"`
}

// DefaultModel is used when a Message has no Model.
const DefaultModel = "claude-sonnet-4-5-20250929"

type rendered struct {
	events [][]byte
	sse    []byte
	json   []byte
}

// TextMessage is a single-text-block end_turn reply with plausible usage.
func TextMessage(model, text string) *Message {
	return &Message{
		Model:      model,
		Content:    []Block{Text(text)},
		StopReason: "end_turn",
		Usage:      Usage{InputTokens: 25, OutputTokens: len(text)/4 + 1},
	}
}

// Text is a text block.
func Text(s string) Block { return Block{Type: "text", Text: s} }

// Thinking is an extended-thinking block with its signature.
func Thinking(text, signature string) Block {
	return Block{Type: "thinking", Thinking: text, Signature: signature}
}

// RedactedThinking is a redacted_thinking block carrying opaque data.
func RedactedThinking(data string) Block { return Block{Type: "redacted_thinking", Data: data} }

// ToolUse is a tool_use block. input is encoded with encoding/json (pass a
// json.RawMessage for pre-encoded JSON); it must encode to a JSON object.
// It panics on an encoding error: it is a test fixture builder.
func ToolUse(id, name string, input any) Block {
	raw, err := json.Marshal(input)
	if err != nil {
		panic("proxytest.ToolUse: " + err.Error())
	}
	return Block{Type: "tool_use", ID: id, Name: name, Input: raw}
}

// ManyEvents is a text message whose stream carries exactly n text_delta
// events (n+6 events in all), for event-spacing and throughput benchmarks.
func ManyEvents(n int, model string) *Message {
	const chunk = 8 // every chunk below is exactly 8 bytes
	var b bytes.Buffer
	b.Grow(n * chunk)
	for i := range n {
		fmt.Fprintf(&b, "tok%04d ", i%10000)
	}
	return &Message{
		Model:      model,
		Content:    []Block{Text(b.String())},
		StopReason: "end_turn",
		Usage:      Usage{InputTokens: 25, OutputTokens: n},
		ChunkSize:  chunk,
	}
}

// SSE is the full event stream, exactly as served for "stream": true.
func (m *Message) SSE() []byte { return m.render().sse }

// Events is the stream split per event ("event: X\ndata: {...}\n\n" each).
// The returned slices are shared with the cache and must not be modified.
func (m *Message) Events() [][]byte {
	ev := m.render().events
	return append([][]byte(nil), ev...)
}

// JSON is the non-stream Message body.
func (m *Message) JSON() []byte { return m.render().json }

// renderCache maps weak *Message keys to their rendering. Keeping the cache
// out of the struct leaves Message a plain value type (no vet copylocks
// noise when tests print or copy one); weak keys plus a cleanup keep it from
// pinning messages that benchmarks create and drop.
var renderCache sync.Map // weak.Pointer[Message] -> *rendered

func (m *Message) render() *rendered {
	key := weak.Make(m)
	if r, ok := renderCache.Load(key); ok {
		return r.(*rendered)
	}
	r, loaded := renderCache.LoadOrStore(key, m.build())
	if !loaded {
		runtime.AddCleanup(m, func(k weak.Pointer[Message]) { renderCache.Delete(k) }, key)
	}
	return r.(*rendered)
}

// Wire shapes. Structs (not maps) keep the field order of the real API.
type wireUsage struct {
	InputTokens              int           `json:"input_tokens"`
	CacheCreationInputTokens int           `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int           `json:"cache_read_input_tokens"`
	CacheCreation            CacheCreation `json:"cache_creation,omitzero"`
	OutputTokens             int           `json:"output_tokens"`
}

type wireMessage struct {
	ID           string    `json:"id"`
	Type         string    `json:"type"`
	Role         string    `json:"role"`
	Model        string    `json:"model"`
	Content      []any     `json:"content"`
	StopReason   *string   `json:"stop_reason"`
	StopSequence *string   `json:"stop_sequence"`
	Usage        wireUsage `json:"usage"`
}

type wireText struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type wireThinking struct {
	Type      string `json:"type"`
	Thinking  string `json:"thinking"`
	Signature string `json:"signature"`
}

type wireRedacted struct {
	Type string `json:"type"`
	Data string `json:"data"`
}

type wireToolUse struct {
	Type  string          `json:"type"`
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

type evMessageStart struct {
	Type    string      `json:"type"`
	Message wireMessage `json:"message"`
}

type evBlockStart struct {
	Type         string `json:"type"`
	Index        int    `json:"index"`
	ContentBlock any    `json:"content_block"`
}

type evBlockDelta struct {
	Type  string `json:"type"`
	Index int    `json:"index"`
	Delta any    `json:"delta"`
}

type evBlockStop struct {
	Type  string `json:"type"`
	Index int    `json:"index"`
}

type evType struct {
	Type string `json:"type"`
}

type msgDelta struct {
	StopReason   string  `json:"stop_reason"`
	StopSequence *string `json:"stop_sequence"`
}

type evMessageDelta struct {
	Type  string    `json:"type"`
	Delta msgDelta  `json:"delta"`
	Usage wireUsage `json:"usage"`
}

type deltaText struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type deltaThinking struct {
	Type     string `json:"type"`
	Thinking string `json:"thinking"`
}

type deltaSignature struct {
	Type      string `json:"type"`
	Signature string `json:"signature"`
}

type deltaInputJSON struct {
	Type        string `json:"type"`
	PartialJSON string `json:"partial_json"`
}

var msgSeq atomic.Int64

func (m *Message) build() *rendered {
	id := m.ID
	if id == "" {
		id = "msg_01ProxyTest" + pad(msgSeq.Add(1))
	}
	model := m.Model
	if model == "" {
		model = DefaultModel
	}
	stop := m.StopReason
	if stop == "" {
		stop = "end_turn"
		for _, b := range m.Content {
			if b.Type == "tool_use" {
				stop = "tool_use"
			}
		}
	}
	usage := wireUsage{
		InputTokens:              m.Usage.InputTokens,
		CacheCreationInputTokens: m.Usage.CacheCreationInputTokens,
		CacheReadInputTokens:     m.Usage.CacheReadInputTokens,
		CacheCreation:            m.Usage.CacheCreation,
		OutputTokens:             m.Usage.OutputTokens,
	}

	// Non-stream body.
	full := wireMessage{ID: id, Type: "message", Role: "assistant", Model: model,
		Content: make([]any, 0, len(m.Content)), StopReason: &stop, Usage: usage}
	for _, b := range m.Content {
		full.Content = append(full.Content, wireBlock(b, false))
	}
	r := &rendered{json: marshal(full)}
	r.events = m.streamEvents(id, model, stop, usage)
	n := 0
	for _, e := range r.events {
		n += len(e)
	}
	r.sse = make([]byte, 0, n)
	for _, e := range r.events {
		r.sse = append(r.sse, e...)
	}
	return r
}

// streamEvents renders the message as the stream's events, each framed.
// message_start carries an empty message whose output_tokens is the tiny
// initial count the real API reports; message_delta carries the cumulative
// totals (input and cache fields included, as newer APIs do).
func (m *Message) streamEvents(id, model, stop string, usage wireUsage) [][]byte {
	var events [][]byte
	startUsage := usage
	startUsage.OutputTokens = min(usage.OutputTokens, 1)
	add := func(name string, v any) { events = append(events, event(name, v)) }
	add("message_start", evMessageStart{Type: "message_start", Message: wireMessage{
		ID: id, Type: "message", Role: "assistant", Model: model, Content: []any{},
		Usage: startUsage}})
	if len(m.Content) == 0 {
		add("ping", evType{Type: "ping"})
	}
	for i, b := range m.Content {
		add("content_block_start", evBlockStart{Type: "content_block_start", Index: i, ContentBlock: wireBlock(b, true)})
		if i == 0 {
			// The real API emits its ping right after the first content_block_start.
			add("ping", evType{Type: "ping"})
		}
		delta := func(d any) { add("content_block_delta", evBlockDelta{Type: "content_block_delta", Index: i, Delta: d}) }
		switch b.Type {
		case "text":
			for _, c := range chunks(b.Text, m.ChunkSize) {
				delta(deltaText{Type: "text_delta", Text: c})
			}
		case "thinking":
			for _, c := range chunks(b.Thinking, m.ChunkSize) {
				delta(deltaThinking{Type: "thinking_delta", Thinking: c})
			}
			delta(deltaSignature{Type: "signature_delta", Signature: b.Signature})
		case "tool_use":
			// The real API opens every tool input with an empty partial_json.
			delta(deltaInputJSON{Type: "input_json_delta", PartialJSON: ""})
			for _, c := range chunks(string(compactInput(b.Input)), m.ChunkSize) {
				delta(deltaInputJSON{Type: "input_json_delta", PartialJSON: c})
			}
		}
		add("content_block_stop", evBlockStop{Type: "content_block_stop", Index: i})
	}
	add("message_delta", evMessageDelta{Type: "message_delta", Delta: msgDelta{StopReason: stop}, Usage: usage})
	add("message_stop", evType{Type: "message_stop"})
	return events
}

// wireBlock renders a content block; start=true gives the empty shell that
// content_block_start carries (redacted_thinking arrives whole, no deltas).
func wireBlock(b Block, start bool) any {
	switch b.Type {
	case "text":
		if start {
			return wireText{Type: "text"}
		}
		return wireText{Type: "text", Text: b.Text}
	case "thinking":
		if start {
			return wireThinking{Type: "thinking"}
		}
		return wireThinking{Type: "thinking", Thinking: b.Thinking, Signature: b.Signature}
	case "redacted_thinking":
		return wireRedacted{Type: "redacted_thinking", Data: b.Data}
	case "tool_use":
		if start {
			return wireToolUse{Type: "tool_use", ID: b.ID, Name: b.Name, Input: json.RawMessage("{}")}
		}
		return wireToolUse{Type: "tool_use", ID: b.ID, Name: b.Name, Input: compactInput(b.Input)}
	}
	panic("proxytest: unknown block type " + strconv.Quote(b.Type))
}

func compactInput(in json.RawMessage) json.RawMessage {
	if len(in) == 0 {
		return json.RawMessage("{}")
	}
	var b bytes.Buffer
	if err := json.Compact(&b, in); err != nil {
		panic("proxytest: tool_use input is not valid JSON: " + err.Error())
	}
	return b.Bytes()
}

// chunks splits s into pieces of about size bytes on rune boundaries.
func chunks(s string, size int) []string {
	if s == "" {
		return nil
	}
	if size <= 0 {
		size = max(8, (len(s)+3)/4)
	}
	out := make([]string, 0, len(s)/size+1)
	for len(s) > 0 {
		n := min(size, len(s))
		for n < len(s) && !utf8.RuneStart(s[n]) {
			n++
		}
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}

func event(name string, v any) []byte { return frame(name, marshal(v)) }

// frame is the SSE framing the API uses: "event: NAME\ndata: JSON\n\n".
func frame(name string, data []byte) []byte {
	b := make([]byte, 0, len(name)+len(data)+16)
	b = append(b, "event: "...)
	b = append(b, name...)
	b = append(b, "\ndata: "...)
	b = append(b, data...)
	return append(b, "\n\n"...)
}

// marshal encodes without HTML escaping (the real API sends "<" literally).
func marshal(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic("proxytest: " + err.Error())
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

func pad(n int64) string {
	s := strconv.FormatInt(n, 10)
	if len(s) < 10 {
		s = "0000000000"[len(s):] + s
	}
	return s
}
