package openai

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every frame of a translated Responses stream is well formed the way
// openai-node and Codex read it: the event name equals data.type,
// sequence_number counts up from 0 by one, every item event names an item
// announced by response.output_item.added at the same output_index and not
// yet done, and the stream ends with exactly one terminal event.
func TestResponsesStreamFromAnthropicIsWellFormed(t *testing.T) {
	files, _ := filepath.Glob("testdata/responses/stream_from_anthropic/*.input.sse")
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			in, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			open := map[int]string{} // output_index → item id, while in progress
			terminal := 0
			for i, ev := range readSSE(t, runStreamFromAnthropic(t, in, ResponsesReplyOptions{})) {
				var d struct {
					Type           string
					SequenceNumber *int   `json:"sequence_number"`
					OutputIndex    *int   `json:"output_index"`
					ItemID         string `json:"item_id"`
					Item           struct{ ID string }
				}
				if err := json.Unmarshal(ev.Data, &d); err != nil {
					t.Fatal(err)
				}
				if d.Type != ev.Name {
					t.Errorf("event %d: name %s, data.type %s", i, ev.Name, d.Type)
				}
				if d.SequenceNumber == nil || *d.SequenceNumber != i {
					t.Errorf("event %d (%s): sequence_number %v; want %d", i, ev.Name, d.SequenceNumber, i)
				}
				if terminal > 0 {
					t.Errorf("event %d (%s) after the terminal event", i, ev.Name)
				}
				switch ev.Name {
				case "response.output_item.added":
					if _, dup := open[*d.OutputIndex]; dup {
						t.Errorf("event %d: output_index %d added twice", i, *d.OutputIndex)
					}
					open[*d.OutputIndex] = d.Item.ID
				case "response.output_item.done":
					if _, ok := open[*d.OutputIndex]; !ok {
						t.Errorf("event %d: done for output_index %d never added", i, *d.OutputIndex)
					}
					delete(open, *d.OutputIndex)
				case "response.completed", "response.incomplete", "response.failed":
					terminal++
				case "response.created", "response.in_progress", "error":
				default:
					if id, ok := open[*d.OutputIndex]; !ok || id != d.ItemID {
						t.Errorf("event %d (%s): item %s at output_index %d is not in progress (open: %v)", i, ev.Name, d.ItemID, *d.OutputIndex, open)
					}
				}
			}
			if terminal != 1 {
				t.Errorf("%d terminal events; want 1", terminal)
			}
		})
	}
}

// Nothing is held back: each Messages delta is answered, within the same
// Event call, by a Responses delta carrying its text — and the other way.
func TestResponsesStreamsWriteEachDeltaAtOnce(t *testing.T) {
	from := NewResponsesStreamFromAnthropic(ResponsesReplyOptions{})
	var out strings.Builder
	write := func(f []byte) error { out.Write(f); return nil }
	steps := []struct{ name, data, wantNow string }{
		{"message_start", `{"type":"message_start","message":{"id":"msg_1","model":"m","usage":{"input_tokens":1}}}`, "response.created"},
		{"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`, "response.content_part.added"},
		{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"first-piece"}}`, `"delta":"first-piece"`},
		{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"second-piece"}}`, `"delta":"second-piece"`},
		{"content_block_stop", `{"type":"content_block_stop","index":0}`, "response.content_part.done"},
		{"content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"f","input":{}}}`, `"type":"function_call"`},
		{"content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"a\":"}}`, `"delta":"{\"a\":"`},
	}
	for _, s := range steps {
		before := out.Len()
		if err := from.Event(s.name, []byte(s.data), write); err != nil {
			t.Fatal(err)
		}
		if got := out.String()[before:]; !strings.Contains(got, s.wantNow) {
			t.Errorf("after %s wrote %q; want %s at once", s.name, got, s.wantNow)
		}
	}

	to := NewResponsesStreamToAnthropic(ResponsesReplyOptions{})
	var events []string
	emit := func(name string, data []byte) error { events = append(events, name+" "+string(data)); return nil }
	toSteps := []struct{ data, wantNow string }{
		{`{"type":"response.created","sequence_number":0,"response":{"id":"resp_1","object":"response","model":"m","output":[]}}`, "message_start"},
		{`{"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"id":"msg_1","type":"message","role":"assistant","content":[]}}`, ""},
		{`{"type":"response.content_part.added","sequence_number":2,"item_id":"msg_1","output_index":0,"content_index":0,"part":{"type":"output_text","text":""}}`, "content_block_start"},
		{`{"type":"response.output_text.delta","sequence_number":3,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"first-piece"}`, `"text":"first-piece"`},
		{`{"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"second-piece"}`, `"text":"second-piece"`},
	}
	for _, s := range toSteps {
		before := len(events)
		if err := to.Event("", []byte(s.data), emit); err != nil {
			t.Fatal(err)
		}
		got := strings.Join(events[before:], "\n")
		if s.wantNow == "" && got != "" || !strings.Contains(got, s.wantNow) {
			t.Errorf("after %s emitted %q; want %q", s.data, got, s.wantNow)
		}
	}
}

// An upstream that stops before its terminal event leaves the client an
// error, never a silent end; after a terminal event nothing more is sent.
func TestResponsesStreamsEndWithAnErrorWhenCutShort(t *testing.T) {
	from := NewResponsesStreamFromAnthropic(ResponsesReplyOptions{})
	var out strings.Builder
	write := func(f []byte) error { out.Write(f); return nil }
	if err := from.Event("message_start", []byte(`{"type":"message_start","message":{"id":"msg_1","model":"m","usage":{}}}`), write); err != nil {
		t.Fatal(err)
	}
	if err := from.End(write); err != nil {
		t.Fatal(err)
	}
	evs := readSSE(t, []byte(out.String()))
	if n := len(evs); n != 4 || evs[2].Name != "error" || evs[3].Name != "response.failed" || !strings.Contains(string(evs[3].Data), `"status":"failed"`) {
		t.Errorf("cut-short stream = %s", out.String())
	}
	before := out.Len()
	if err := from.Event("message_stop", []byte(`{"type":"message_stop"}`), write); err != nil || from.End(write) != nil || out.Len() != before {
		t.Errorf("events after the end were written: %q", out.String()[before:])
	}

	to := NewResponsesStreamToAnthropic(ResponsesReplyOptions{Model: "gpt-5"})
	var names []string
	var last []byte
	emit := func(name string, data []byte) error { names = append(names, name); last = data; return nil }
	if err := to.End(emit); err != nil {
		t.Fatal(err)
	}
	if len(names) != 1 || names[0] != "error" || !strings.Contains(string(last), `"type":"api_error"`) {
		t.Errorf("cut-short stream = %v %s", names, last)
	}
	if err := to.Event("", []byte(`{"type":"response.created","response":{"id":"r"}}`), emit); err != nil || len(names) != 1 {
		t.Errorf("events after the end were emitted: %v", names)
	}
}

func TestResponsesStreamToAnthropicMapsIncompleteAndArgumentsOnlyAtDone(t *testing.T) {
	to := NewResponsesStreamToAnthropic(ResponsesReplyOptions{})
	var got []string
	emit := func(name string, data []byte) error { got = append(got, string(data)); return nil }
	for _, d := range []string{
		`{"type":"response.created","response":{"id":"resp_9","model":"m"}}`,
		`{"type":"response.output_item.added","output_index":0,"item":{"type":"function_call","call_id":"call_1","name":"f","arguments":""}}`,
		`{"type":"response.output_item.done","output_index":0,"item":{"type":"function_call","call_id":"call_1","name":"f","arguments":"{\"x\":1}"}}`,
		`{"type":"response.incomplete","response":{"id":"resp_9","status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"usage":{"input_tokens":10,"input_tokens_details":{"cached_tokens":4},"output_tokens":2}}}`,
	} {
		if err := to.Event("", []byte(d), emit); err != nil {
			t.Fatal(err)
		}
	}
	all := strings.Join(got, "\n")
	for _, want := range []string{
		`"id":"msg_9"`,
		`{"type":"input_json_delta","partial_json":"{\"x\":1}"}`,
		`"stop_reason":"max_tokens"`,
		`"input_tokens":6`, `"cache_read_input_tokens":4`,
		`{"type":"message_stop"}`,
	} {
		if !strings.Contains(all, want) {
			t.Errorf("missing %s in\n%s", want, all)
		}
	}
}

func TestResponsesStreamsCarryWholeInputsAndNestedErrors(t *testing.T) {
	from := NewResponsesStreamFromAnthropic(ResponsesReplyOptions{})
	var out strings.Builder
	write := func(f []byte) error { out.Write(f); return nil }
	for _, ev := range []struct{ name, data string }{
		{"message_start", `{"type":"message_start","message":{"id":"msg_1","model":"m","usage":{}}}`},
		{"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"f","input":{"path": "/a"}}}`},
		{"content_block_stop", `{"type":"content_block_stop","index":0}`},
	} {
		if err := from.Event(ev.name, []byte(ev.data), write); err != nil {
			t.Fatal(err)
		}
	}
	if !strings.Contains(out.String(), `"name":"f","arguments":"{\"path\":\"/a\"}"`) {
		t.Errorf("a tool_use whose input came whole lost it:\n%s", out.String())
	}

	to := NewResponsesStreamToAnthropic(ResponsesReplyOptions{})
	var last string
	emit := func(name string, data []byte) error { last = name + " " + string(data); return nil }
	if err := to.Event("error", []byte(`{"type":"error","error":{"code":"rate_limit_exceeded","message":"Slow down."}}`), emit); err != nil {
		t.Fatal(err)
	}
	if last != `error {"type":"error","error":{"type":"rate_limit_error","message":"Slow down."}}` {
		t.Errorf("nested error became %s", last)
	}
}

func TestResponsesStreamToAnthropicSaysPromptIsTooLong(t *testing.T) {
	to := NewResponsesStreamToAnthropic(ResponsesReplyOptions{})
	var last string
	emit := func(name string, data []byte) error { last = string(data); return nil }
	if err := to.Event("", []byte(`{"type":"response.failed","response":{"id":"r","status":"failed","error":{"code":"context_length_exceeded","message":"Your input exceeds the context window of this model."}}}`), emit); err != nil {
		t.Fatal(err)
	}
	if last != `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: Your input exceeds the context window of this model."}}` {
		t.Errorf("error event = %s", last)
	}
}

// Compatible servers that send content only with the finished item still
// give the client every text, in block order.
func TestResponsesStreamToAnthropicTakesContentFromFinishedItems(t *testing.T) {
	to := NewResponsesStreamToAnthropic(ResponsesReplyOptions{})
	var got []string
	emit := func(name string, data []byte) error { got = append(got, name+" "+string(data)); return nil }
	for _, d := range []string{
		`{"type":"response.created","response":{"id":"resp_d","model":"m"}}`,
		`{"type":"response.output_item.added","output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[]}}`,
		`{"type":"response.output_item.done","output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[{"type":"summary_text","text":"Think."}]}}`,
		`{"type":"response.output_item.added","output_index":1,"item":{"id":"msg_1","type":"message","role":"assistant","content":[]}}`,
		`{"type":"response.output_item.done","output_index":1,"item":{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"output_text","text":"One."},{"type":"output_text","text":"Two."}]}}`,
		`{"type":"response.completed","response":{"id":"resp_d","status":"completed","usage":{"input_tokens":3,"output_tokens":2}}}`,
	} {
		if err := to.Event("", []byte(d), emit); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{
		`message_start`,
		`content_block_start {"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`,
		`content_block_delta {"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Think."}}`,
		`content_block_stop {"type":"content_block_stop","index":0}`,
		`content_block_start {"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}`,
		`content_block_delta {"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"One."}}`,
		`content_block_stop {"type":"content_block_stop","index":1}`,
		`content_block_start {"type":"content_block_start","index":2,"content_block":{"type":"text","text":""}}`,
		`content_block_delta {"type":"content_block_delta","index":2,"delta":{"type":"text_delta","text":"Two."}}`,
		`content_block_stop {"type":"content_block_stop","index":2}`,
		`message_delta`,
		`message_stop`,
	}
	if len(got) != len(want) {
		t.Fatalf("events:\n%s", strings.Join(got, "\n"))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("event %d = %s; want %s", i, got[i], want[i])
		}
	}
}

// Claude's redacted thinking reaches a Responses client as a finished
// reasoning item carrying its data, and comes back as the same block.
func TestResponsesRedactedThinkingMakesTheTrip(t *testing.T) {
	from := NewResponsesStreamFromAnthropic(ResponsesReplyOptions{})
	var out strings.Builder
	write := func(f []byte) error { out.Write(f); return nil }
	for _, ev := range []struct{ name, data string }{
		{"message_start", `{"type":"message_start","message":{"id":"msg_r","model":"m","usage":{}}}`},
		{"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"redacted_thinking","data":"EmwKAhgBopaque"}}`},
		{"content_block_stop", `{"type":"content_block_stop","index":0}`},
		{"message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":1}}`},
		{"message_stop", `{"type":"message_stop"}`},
	} {
		if err := from.Event(ev.name, []byte(ev.data), write); err != nil {
			t.Fatal(err)
		}
	}
	var item json.RawMessage
	for _, ev := range readSSE(t, []byte(out.String())) {
		if ev.Name == "response.output_item.done" {
			var d struct{ Item json.RawMessage }
			if err := json.Unmarshal(ev.Data, &d); err != nil {
				t.Fatal(err)
			}
			item = d.Item
		}
	}
	if !strings.Contains(string(item), `"encrypted_content":"anthropic-redacted:EmwKAhgBopaque"`) {
		t.Fatalf("reasoning item = %s", item)
	}
	next := `{"model":"claude-sonnet-4-5","input":[{"role":"user","content":"q"},` + string(item) + `,{"role":"user","content":"more"}]}`
	req, err := ResponsesRequestToAnthropic([]byte(next), ResponsesRequestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(req), `{"role":"assistant","content":[{"type":"redacted_thinking","data":"EmwKAhgBopaque"}]}`) {
		t.Errorf("request back to Anthropic = %s", req)
	}
}
