package proxytest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
)

// sseEvent is one parsed server-sent event.
type sseEvent struct {
	Name string
	Data []byte
}

// readEvent reads one "event: X\ndata: Y\n\n" frame. A stream that ends
// mid-frame yields io.ErrUnexpectedEOF; a clean end yields io.EOF.
func readEvent(br *bufio.Reader) (sseEvent, error) {
	var ev sseEvent
	started := false
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			if err == io.EOF && (started || line != "") {
				err = io.ErrUnexpectedEOF
			}
			return ev, err
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "":
			if started {
				return ev, nil
			}
		case strings.HasPrefix(line, "event: "):
			ev.Name, started = line[len("event: "):], true
		case strings.HasPrefix(line, "data: "):
			ev.Data, started = []byte(line[len("data: "):]), true
		default:
			return ev, fmt.Errorf("unexpected SSE line %q", line)
		}
	}
}

func parseSSE(t *testing.T, r io.Reader) ([]sseEvent, error) {
	t.Helper()
	br := bufio.NewReader(r)
	var out []sseEvent
	for {
		ev, err := readEvent(br)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		// Every data payload must carry a "type" equal to the event name.
		var typ struct{ Type string }
		if err := json.Unmarshal(ev.Data, &typ); err != nil || typ.Type != ev.Name {
			t.Fatalf("event %q has data %s (type %q, err %v)", ev.Name, ev.Data, typ.Type, err)
		}
		out = append(out, ev)
	}
}

func names(evs []sseEvent) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.Name)
	}
	return out
}

func fullMessage() *Message {
	return &Message{
		Model: "claude-test",
		Content: []Block{
			Thinking("Let me think about <this> step by step, carefully.", "sig-EqQBCgIYAhIM"),
			Text("Hello, wörld! This text is long enough to be chunked."),
			ToolUse("toolu_01", "get_weather", map[string]any{"location": "San Francisco, CA", "unit": "celsius"}),
		},
		Usage: Usage{InputTokens: 100, OutputTokens: 42, CacheCreationInputTokens: 7, CacheReadInputTokens: 9},
	}
}

type deltaPayload struct {
	Index int `json:"index"`
	Delta struct {
		Type        string  `json:"type"`
		Text        string  `json:"text"`
		Thinking    string  `json:"thinking"`
		Signature   string  `json:"signature"`
		PartialJSON *string `json:"partial_json"`
	} `json:"delta"`
}

func TestSSEShape(t *testing.T) {
	m := fullMessage()
	if !bytes.Equal(bytes.Join(m.Events(), nil), m.SSE()) {
		t.Fatal("Events() joined differs from SSE()")
	}
	evs, err := parseSSE(t, bytes.NewReader(m.SSE()))
	if err != nil {
		t.Fatal(err)
	}
	// Collapse runs of deltas to check the documented order.
	var seq []string
	for _, n := range names(evs) {
		if n == "content_block_delta" && seq[len(seq)-1] == "delta*" {
			continue
		}
		if n == "content_block_delta" {
			n = "delta*"
		}
		seq = append(seq, n)
	}
	want := []string{"message_start", "content_block_start", "ping", "delta*", "content_block_stop",
		"content_block_start", "delta*", "content_block_stop",
		"content_block_start", "delta*", "content_block_stop", "message_delta", "message_stop"}
	if !reflect.DeepEqual(seq, want) {
		t.Fatalf("sequence\n got %v\nwant %v", seq, want)
	}

	var start struct {
		Message struct {
			ID, Type, Role, Model string
			Content               []any
			StopReason            *string `json:"stop_reason"`
			Usage                 map[string]int
		}
	}
	json.Unmarshal(evs[0].Data, &start)
	sm := start.Message
	if sm.Type != "message" || sm.Role != "assistant" || sm.Model != "claude-test" || sm.Content == nil ||
		len(sm.Content) != 0 || sm.StopReason != nil || !strings.HasPrefix(sm.ID, "msg_") {
		t.Fatalf("message_start = %s", evs[0].Data)
	}
	for _, k := range []string{"input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens"} {
		if _, ok := sm.Usage[k]; !ok {
			t.Fatalf("message_start usage lacks %s: %s", k, evs[0].Data)
		}
	}

	// Reassemble each block from its deltas.
	var thinking, sig, text, input strings.Builder
	var kinds []string
	var firstPartial *string
	for _, e := range evs {
		if e.Name != "content_block_delta" {
			continue
		}
		var d deltaPayload
		json.Unmarshal(e.Data, &d)
		kinds = append(kinds, fmt.Sprintf("%d %s", d.Index, d.Delta.Type))
		switch d.Delta.Type {
		case "thinking_delta":
			thinking.WriteString(d.Delta.Thinking)
		case "signature_delta":
			sig.WriteString(d.Delta.Signature)
		case "text_delta":
			text.WriteString(d.Delta.Text)
		case "input_json_delta":
			if firstPartial == nil {
				firstPartial = d.Delta.PartialJSON
			}
			input.WriteString(*d.Delta.PartialJSON)
		}
	}
	if thinking.String() != m.Content[0].Thinking || sig.String() != m.Content[0].Signature {
		t.Fatalf("thinking %q sig %q", thinking.String(), sig.String())
	}
	if text.String() != m.Content[1].Text {
		t.Fatalf("text %q", text.String())
	}
	if input.String() != `{"location":"San Francisco, CA","unit":"celsius"}` {
		t.Fatalf("input %q", input.String())
	}
	if firstPartial == nil || *firstPartial != "" {
		t.Fatal(`first input_json_delta must be ""`)
	}
	// Several chunks per block, and the signature comes last in block 0.
	count := map[string]int{}
	for _, k := range kinds {
		count[k]++
	}
	if count["0 thinking_delta"] < 2 || count["1 text_delta"] < 2 || count["2 input_json_delta"] < 3 ||
		count["0 signature_delta"] != 1 {
		t.Fatalf("delta counts %v", count)
	}
	for i, k := range kinds {
		if k == "0 signature_delta" && kinds[i+1] != "1 text_delta" {
			t.Fatal("signature_delta is not the last delta of the thinking block")
		}
	}

	var md struct {
		Delta struct {
			StopReason   string  `json:"stop_reason"`
			StopSequence *string `json:"stop_sequence"`
		}
		Usage Usage
	}
	json.Unmarshal(evs[len(evs)-2].Data, &md)
	if md.Delta.StopReason != "tool_use" || md.Usage != m.Usage {
		t.Fatalf("message_delta = %s", evs[len(evs)-2].Data)
	}
	if !bytes.Contains(evs[len(evs)-2].Data, []byte(`"stop_sequence":null`)) {
		t.Fatalf("message_delta lacks stop_sequence null: %s", evs[len(evs)-2].Data)
	}
}

func TestBlockStarts(t *testing.T) {
	m := &Message{Content: []Block{RedactedThinking("opaque=="), Thinking("t", "s"), ToolUse("toolu_9", "f", json.RawMessage(`{ "a" : 1 }`))}}
	var starts []string
	evs, _ := parseSSE(t, bytes.NewReader(m.SSE()))
	for _, e := range evs {
		if e.Name == "content_block_start" {
			var s struct {
				ContentBlock json.RawMessage `json:"content_block"`
			}
			json.Unmarshal(e.Data, &s)
			starts = append(starts, string(s.ContentBlock))
		}
	}
	want := []string{`{"type":"redacted_thinking","data":"opaque=="}`, `{"type":"thinking","thinking":"","signature":""}`,
		`{"type":"tool_use","id":"toolu_9","name":"f","input":{}}`}
	if !reflect.DeepEqual(starts, want) {
		t.Fatalf("starts %v", starts)
	}
}

func TestManyEvents(t *testing.T) {
	m := ManyEvents(500, "m")
	evs, err := parseSSE(t, bytes.NewReader(m.SSE()))
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 506 {
		t.Fatalf("%d events", len(evs))
	}
}
