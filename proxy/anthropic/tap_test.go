package anthropic

import (
	"encoding/json"
	"reflect"
	"testing"
)

type event struct{ name, data string }

func readEvents(evs []event) ReplyFacts {
	var f ReplyFacts
	for _, ev := range evs {
		f.Event(ev.name, []byte(ev.data))
	}
	return f
}

var (
	startEv = event{"message_start", `{"type":"message_start","message":{"id":"m","content":[],"usage":{"input_tokens":1200,"cache_read_input_tokens":900,"cache_creation_input_tokens":40,"output_tokens":1}}}`}
	sigEv   = func(sig string) event {
		return event{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"` + sig + `"}}`}
	}
	toolEv = func(id string) event {
		return event{"content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"` + id + `","name":"Read","input":{}}}`}
	}
)

func TestReplyFactsEvent(t *testing.T) {
	tests := []struct {
		name   string
		events []event
		want   ReplyFacts
	}{
		{"message_start gives the usage", []event{startEv},
			ReplyFacts{Usage: Usage{1200, 1, 900, 40}}},
		{"message_delta replaces only the counts it reports", []event{startEv,
			{"message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":87}}`}},
			ReplyFacts{Usage: Usage{1200, 87, 900, 40}, StopReason: "end_turn"}},
		{"a tool_use pairs with the signature before it", []event{sigEv("s1"), toolEv("t1"), sigEv("s2"), toolEv("t2")},
			ReplyFacts{Signatures: []string{"s1", "s2"}, ToolUseIDs: []string{"t1", "t2"}, ToolUseSignatures: []string{"s1", "s2"}, ToolUseNames: []string{"Read", "Read"}}},
		{"a tool_use before any signature pairs with none", []event{toolEv("t1")},
			ReplyFacts{ToolUseIDs: []string{"t1"}, ToolUseSignatures: []string{""}, ToolUseNames: []string{"Read"}}},
		{"text that mentions tool_use and signature_delta is not a block", []event{
			{"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":"\"tool_use\""}}`},
			{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"\"signature_delta\""}}`}},
			ReplyFacts{}},
		{"message_stop ends the stream", []event{{"message_stop", `{"type":"message_stop"}`}},
			ReplyFacts{Stopped: true}},
		{"an error event is kept", []event{{"error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`}},
			ReplyFacts{Error: &ErrorDetail{Type: "overloaded_error", Message: "Overloaded"}}},
		{"a malformed error event is still an error", []event{{"error", `not json`}},
			ReplyFacts{Error: &ErrorDetail{}}},
		{"a malformed message_delta is ignored", []event{startEv, {"message_delta", `{"usage":`}},
			ReplyFacts{Usage: Usage{1200, 1, 900, 40}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := readEvents(tt.events); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Event(%q) = %+v; want %+v", tt.events, got, tt.want)
			}
		})
	}
}

func TestReplyFactsEventReportsWhatItAdded(t *testing.T) {
	tests := []struct {
		name string
		ev   event
		want bool
	}{
		{"message_start adds", startEv, true},
		{"a text delta adds nothing", event{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}`}, false},
		{"a signature delta adds", sigEv("s"), true},
		{"a text block adds nothing", event{"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`}, false},
		{"a tool_use block adds", toolEv("t"), true},
		{"message_delta adds", event{"message_delta", `{"delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":2}}`}, true},
		{"message_stop adds", event{"message_stop", `{}`}, true},
		{"an error adds", event{"error", `{}`}, true},
		{"ping adds nothing", event{"ping", `{"type":"ping"}`}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var f ReplyFacts
			if got := f.Event(tt.ev.name, []byte(tt.ev.data)); got != tt.want {
				t.Errorf("Event(%q, %q) = %t; want %t", tt.ev.name, tt.ev.data, got, tt.want)
			}
		})
	}
}

func TestReplyFactsBody(t *testing.T) {
	tests := []struct {
		name   string
		body   string
		want   ReplyFacts
		wantOK bool
	}{
		{"a reply gives usage, stop reason, signatures and tool ids",
			`{"content":[{"type":"thinking","thinking":"x","signature":"s1"},{"type":"text","text":"y"},{"type":"tool_use","id":"t1","name":"Read","input":{}}],` +
				`"stop_reason":"tool_use","usage":{"input_tokens":10,"output_tokens":5}}`,
			ReplyFacts{Usage: Usage{InputTokens: 10, OutputTokens: 5}, StopReason: "tool_use",
				Signatures: []string{"s1"}, ToolUseIDs: []string{"t1"}, ToolUseSignatures: []string{"s1"}, ToolUseNames: []string{"Read"}}, true},
		{"thinking without a signature is skipped",
			`{"content":[{"type":"thinking","thinking":"x"},{"type":"tool_use","id":"t1"}],"stop_reason":"tool_use"}`,
			ReplyFacts{StopReason: "tool_use", ToolUseIDs: []string{"t1"}, ToolUseSignatures: []string{""}, ToolUseNames: []string{""}}, true},
		{"a body that is not a reply is ignored", `{"stop_reason":"end_turn","usage":"many"}`, ReplyFacts{}, false},
		{"a truncated body is ignored", `{"stop_reason":"end_turn","usage":{"input_tok`, ReplyFacts{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got ReplyFacts
			ok := got.Body([]byte(tt.body))
			if ok != tt.wantOK || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Body(%q) = %+v, %t; want %+v, %t", tt.body, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestUsageMergeKeepsUnreportedCounts(t *testing.T) {
	tests := []struct {
		name     string
		from, by Usage
		want     Usage
	}{
		{"reported counts replace", Usage{1, 2, 3, 4}, Usage{10, 20, 30, 40}, Usage{10, 20, 30, 40}},
		{"zero counts are not reported", Usage{1, 2, 3, 4}, Usage{OutputTokens: 20}, Usage{1, 20, 3, 4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.from
			got.merge(tt.by)
			if got != tt.want {
				t.Errorf("%+v.merge(%+v) = %+v; want %+v", tt.from, tt.by, got, tt.want)
			}
		})
	}
}

// FuzzReplyFactsBody: on any JSON, Body reads what encoding/json reads (bodyDecoded, the
// reference), and accepts the same bodies.
func FuzzReplyFactsBody(f *testing.F) {
	for _, seed := range []string{
		`{"content":[{"type":"thinking","thinking":"x","signature":"s1"},{"type":"tool_use","id":"t1","name":"Read","input":{}}],"stop_reason":"tool_use","usage":{"input_tokens":10,"output_tokens":5,"cache_read_input_tokens":3,"cache_creation_input_tokens":0}}`,
		`{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"hi \"there\"\n"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":2}}`,
		`{"Stop_Reason":"x"}`, `{"stop_reason":"a","stop_reason":"b"}`, `{"usage":{"input_tokens":1.5}}`, `{"usage":{"input_tokens":"7"}}`,
		`{"content":null,"usage":null,"stop_reason":null}`, `{"content":[null,{"type":null}]}`, `null`, `[]`, `{"stop_reason":"\u0065nd"}`,
		`{"st\u006fp_reason":"x"}`, `{"usage":{"input_tokens":99999999999999999999}}`, `{"content":[{"TYPE":"tool_use"}]}`, `{"stop_reason":"é"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if !json.Valid(body) {
			return
		}
		var fast ReplyFacts
		ok := fast.Body(body)
		want, wantOK := bodyDecoded(body)
		var ref ReplyFacts
		if wantOK {
			ref.apply(want)
		}
		if ok != wantOK || !reflect.DeepEqual(fast, ref) {
			t.Fatalf("Body(%q) = %+v, %t; encoding/json reads %+v, %t", body, fast, ok, ref, wantOK)
		}
	})
}

func BenchmarkReplyFactsBody(b *testing.B) {
	body := []byte(`{"id":"msg_01XFDUDYJgAACzvnptvVoYEL","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[{"type":"text","text":"Hello from the benchmark."}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":2095,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":503}}`)
	b.Run("walked", func(b *testing.B) {
		for b.Loop() {
			var f ReplyFacts
			f.Body(body)
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		for b.Loop() {
			bodyDecoded(body)
		}
	})
}
