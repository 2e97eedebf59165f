package openai

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"longhaul/proxy/anthropic"
	"longhaul/proxy/sse"
)

// chatAccumulated is a Chat stream added up the way openai-node's
// ChatCompletionStream does: content and reasoning concatenated, tool calls
// by index.
type chatAccumulated struct {
	Content, Reasoning, Finish string
	Calls                      []chatAccumulatedCall
	Usage                      json.RawMessage
	Error                      json.RawMessage
	Done                       bool
}

type chatAccumulatedCall struct{ ID, Name, Args string }

func accumulateChat(t *testing.T, stream []byte) chatAccumulated {
	t.Helper()
	var acc chatAccumulated
	for _, ev := range readSSE(t, stream) {
		if string(ev.Data) == "[DONE]" {
			acc.Done = true
			continue
		}
		var c struct {
			Choices []struct {
				Delta struct {
					Content          *string `json:"content"`
					ReasoningContent *string `json:"reasoning_content"`
					ToolCalls        []struct {
						Index    int    `json:"index"`
						ID       string `json:"id"`
						Function struct {
							Name      string `json:"name"`
							Arguments string `json:"arguments"`
						} `json:"function"`
					} `json:"tool_calls"`
				} `json:"delta"`
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
			Usage json.RawMessage `json:"usage"`
			Error json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(ev.Data, &c); err != nil {
			t.Fatalf("chunk %s: %v", ev.Data, err)
		}
		if c.Error != nil {
			acc.Error = c.Error
		}
		if len(c.Usage) > 0 && string(c.Usage) != "null" {
			acc.Usage = c.Usage
		}
		for _, ch := range c.Choices {
			d := ch.Delta
			if d.Content != nil {
				acc.Content += *d.Content
			}
			if d.ReasoningContent != nil {
				acc.Reasoning += *d.ReasoningContent
			}
			for _, tc := range d.ToolCalls {
				for len(acc.Calls) <= tc.Index {
					acc.Calls = append(acc.Calls, chatAccumulatedCall{})
				}
				call := &acc.Calls[tc.Index]
				if tc.ID != "" {
					call.ID = tc.ID
				}
				call.Name += tc.Function.Name
				call.Args += tc.Function.Arguments
			}
			if ch.FinishReason != nil {
				acc.Finish = *ch.FinishReason
			}
		}
	}
	return acc
}

// assembleMessages rebuilds the Messages reply a stream of events makes.
func assembleMessages(t *testing.T, stream []byte) []byte {
	t.Helper()
	b := anthropic.NewReplyBuilder(1 << 20)
	for _, ev := range readSSE(t, stream) {
		b.Add(ev.Name, ev.Data)
	}
	out, _ := b.Bytes()
	return out
}

// A Chat stream through Messages and back adds up to the same completion.
func TestChatStreamRoundTripToAnthropic(t *testing.T) {
	// (gemini_no_index is left out, its calls have no index to key them
	// by; ollama_no_done too, its "stop" after tool calls comes back as
	// "tool_calls" and it has no usage.)
	for _, name := range []string{"openai_parallel_tools", "deepseek_reasoning"} {
		t.Run(name, func(t *testing.T) {
			in, err := os.ReadFile("testdata/chat/stream_to_anthropic/" + name + ".input.sse")
			if err != nil {
				t.Fatal(err)
			}
			mid := runChatStreamToAnthropic(t, in, ChatReplyOptions{})
			back := runChatStreamFromAnthropic(t, mid, ChatReplyOptions{IncludeUsage: true})
			want, got := accumulateChat(t, in), accumulateChat(t, back)
			if !reflect.DeepEqual(got.Calls, want.Calls) || got.Content != want.Content || got.Reasoning != want.Reasoning ||
				got.Finish != want.Finish || !got.Done {
				t.Errorf("round trip adds up to\n%+v\nwant\n%+v\nvia\n%s", got, want, mid)
			}
			var gu, wu chatUsage
			if json.Unmarshal(got.Usage, &gu) != nil || json.Unmarshal(want.Usage, &wu) != nil ||
				gu.PromptTokens != wu.PromptTokens || gu.CompletionTokens != wu.CompletionTokens {
				t.Errorf("usage %s; want %s", got.Usage, want.Usage)
			}
		})
	}
}

// A Messages stream through Chat and back assembles to the same reply.
func TestChatStreamRoundTripFromAnthropic(t *testing.T) {
	in := []byte(`event: message_start
data: {"type":"message_start","message":{"id":"msg_01R","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"cache_creation_input_tokens":0,"cache_read_input_tokens":90,"output_tokens":1}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Two \"calls\" — "}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"ok."}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: content_block_start
data: {"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"Read","input":{}}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"path\":"}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"\"a.go\"}"}}

event: content_block_stop
data: {"type":"content_block_stop","index":1}

event: content_block_start
data: {"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_2","name":"Bash","input":{}}}

event: content_block_delta
data: {"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"command\":\"ls\"}"}}

event: content_block_stop
data: {"type":"content_block_stop","index":2}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":42}}

event: message_stop
data: {"type":"message_stop"}

`)
	mid := runChatStreamFromAnthropic(t, in, ChatReplyOptions{IncludeUsage: true})
	back := runChatStreamToAnthropic(t, mid, ChatReplyOptions{})
	want, got := assembleMessages(t, in), assembleMessages(t, back)
	if !reflect.DeepEqual(canonicalJSON(t, got), canonicalJSON(t, want)) {
		t.Errorf("round trip assembles to\n%s\nwant\n%s\nvia\n%s", got, want, mid)
	}
}

// A streamed completion assembles to what the same completion gives as a
// non-stream reply.
func TestChatStreamMatchesReply(t *testing.T) {
	in, err := os.ReadFile("testdata/chat/stream_to_anthropic/openai_parallel_tools.input.sse")
	if err != nil {
		t.Fatal(err)
	}
	completion := `{"id":"chatcmpl-Bx1","object":"chat.completion","created":1741570283,"model":"gpt-4.1",
	"choices":[{"index":0,"message":{"role":"assistant","content":"Checking \"both\" cities.","refusal":null,
	 "tool_calls":[{"id":"call_p","type":"function","function":{"name":"get_weather","arguments":"{\"city\": \"Paris\"}"}},
	  {"id":"call_q","type":"function","function":{"name":"get_weather","arguments":"{\"city\": \"Oslo\"}"}}]},"finish_reason":"tool_calls"}],
	"usage":{"prompt_tokens":320,"completion_tokens":52,"total_tokens":372,"prompt_tokens_details":{"cached_tokens":256}}}`
	reply, err := ChatReplyToAnthropic([]byte(completion), ChatReplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	streamed := assembleMessages(t, runChatStreamToAnthropic(t, in, ChatReplyOptions{}))
	if !reflect.DeepEqual(canonicalJSON(t, streamed), canonicalJSON(t, reply)) {
		t.Errorf("stream assembles to\n%s\nthe reply is\n%s", streamed, reply)
	}
}

// Each chunk is answered in the same call: nothing waits for the stream's end.
func TestChatStreamsDoNotBuffer(t *testing.T) {
	to := NewChatStreamToAnthropic(ChatReplyOptions{})
	var names []string
	emit := func(name string, _ []byte) error {
		names = append(names, name)
		return nil
	}
	for _, c := range []string{
		`{"id":"c1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"He"},"finish_reason":null}]}`,
		`{"id":"c1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"content":"llo"},"finish_reason":null}]}`,
	} {
		before := len(names)
		if err := to.Event("", []byte(c), emit); err != nil {
			t.Fatal(err)
		}
		if names[len(names)-1] != "content_block_delta" || len(names) == before {
			t.Errorf("after chunk %s the events are %v; want its text_delta out at once", c, names)
		}
	}

	from := NewChatStreamFromAnthropic(ChatReplyOptions{})
	var frames []string
	write := func(frame []byte) error {
		frames = append(frames, string(frame))
		return nil
	}
	for _, ev := range [][2]string{
		{"message_start", `{"type":"message_start","message":{"id":"msg_1","model":"m","usage":{"input_tokens":1}}}`},
		{"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`},
		{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}`},
	} {
		if err := from.Event(ev[0], []byte(ev[1]), write); err != nil {
			t.Fatal(err)
		}
	}
	if len(frames) != 2 || !strings.Contains(frames[1], `"delta":{"content":"Hi"}`) {
		t.Errorf("frames = %q; want the role chunk and the text chunk at once", frames)
	}
}

func TestChatStreamToAnthropicErrors(t *testing.T) {
	tests := []struct {
		name, chunk        string
		wantType, wantText string
	}{
		{"context length", `{"error":{"message":"This model's maximum context length is 128000 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`,
			"invalid_request_error", "prompt is too long: This model's maximum context length is 128000 tokens."},
		{"rate limit", `{"error":{"message":"Rate limit reached","type":"rate_limit_error","param":null,"code":"rate_limit_exceeded"}}`, "rate_limit_error", "Rate limit reached"},
		{"a string error", `{"error":"llama runner process has terminated"}`, "api_error", "llama runner process has terminated"},
		{"an empty error", `{"error":{}}`, "api_error", "The upstream stream reported an error."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewChatStreamToAnthropic(ChatReplyOptions{})
			var got []byte
			err := s.Event("", []byte(tt.chunk), func(name string, data []byte) error {
				if name == "error" {
					got = data
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			d, ok := anthropic.ParseError(got)
			if !ok || d.Type != tt.wantType || d.Message != tt.wantText {
				t.Errorf("error event %s; want %s %q", got, tt.wantType, tt.wantText)
			}
			// Nothing follows an error.
			if err := s.End(func(name string, _ []byte) error { t.Errorf("%s after the error", name); return nil }); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// Arguments of a tool call whose block was closed cannot be followed: the
// client gets an error event, never a silently wrong input.
func TestChatStreamToAnthropicRefusesInterleavedCalls(t *testing.T) {
	s := NewChatStreamToAnthropic(ChatReplyOptions{})
	var out []byte
	emit := func(name string, data []byte) error {
		out = sse.AppendEvent(out, name, data)
		return nil
	}
	for _, c := range []string{
		`{"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{\"x\":"}}]}}]}`,
		`{"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"b","function":{"name":"f","arguments":"{}"}}]}}]}`,
		`{"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"1}"}}]}}]}`,
	} {
		if err := s.Event("", []byte(c), emit); err != nil {
			t.Fatal(err)
		}
	}
	evs := readSSE(t, out)
	if last := evs[len(evs)-1]; last.Name != "error" || !strings.Contains(string(last.Data), "interleaved") {
		t.Errorf("events:\n%s\nwant an error event last", out)
	}
}

func TestChatStreamFromAnthropicErrors(t *testing.T) {
	tests := []struct {
		name, event     string
		typ, code, text string
	}{
		{"prompt too long", `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 201000 tokens > 200000 maximum"}}`,
			"invalid_request_error", "context_length_exceeded", "prompt is too long: 201000 tokens > 200000 maximum"},
		{"rate limit", `{"type":"error","error":{"type":"rate_limit_error","message":"Slow down"}}`, "rate_limit_error", "rate_limit_exceeded", "Slow down"},
		{"overloaded", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, "server_error", "server_error", "Overloaded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewChatStreamFromAnthropic(ChatReplyOptions{IncludeUsage: true})
			var frames [][]byte
			write := func(f []byte) error {
				frames = append(frames, append([]byte(nil), f...))
				return nil
			}
			if err := s.Event("error", []byte(tt.event), write); err != nil {
				t.Fatal(err)
			}
			if err := s.End(write); err != nil {
				t.Fatal(err)
			}
			if len(frames) != 1 {
				t.Fatalf("frames = %q; want one error chunk and nothing after it", frames)
			}
			evs := readSSE(t, frames[0])
			var body ErrorBody
			if len(evs) != 1 || json.Unmarshal(evs[0].Data, &body) != nil || body.Error.Type != tt.typ ||
				body.Error.Code == nil || *body.Error.Code != tt.code || body.Error.Message != tt.text {
				t.Errorf("error chunk %s; want type %s code %s message %q", frames[0], tt.typ, tt.code, tt.text)
			}
		})
	}
}
