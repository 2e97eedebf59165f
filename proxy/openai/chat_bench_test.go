package openai

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// chatConversation builds an agent-like Chat request of at least size bytes
// in rounds of ~20 KB: a user message, an assistant turn with reasoning,
// text and two parallel tool calls, and their two tool results (shell
// listings and source text, with escapes and non-ASCII).
func chatConversation(size int) []byte {
	var b strings.Builder
	b.WriteString(`{"model":"deepseek-chat","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"system","content":"You are a coding agent running in a terminal."}`)
	text := strings.Repeat("Read the file and explain \"why\" it fails — naïve 修复\n", 8)
	listing := strings.Repeat("-rw-r--r-- 1 dev dev 4096 main.go\tpackage main\\n\n", 190)
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, `,{"role":"user","content":%q}`, text)
		fmt.Fprintf(&b, `,{"role":"assistant","content":%q,"reasoning_content":"Plan step %d.","tool_calls":[`, text, i)
		fmt.Fprintf(&b, `{"id":"call_%d_a","type":"function","function":{"name":"shell","arguments":%q}},`, i, `{"command":["ls","-la","/src"]}`)
		fmt.Fprintf(&b, `{"id":"call_%d_b","type":"function","function":{"name":"shell","arguments":%q}}]}`, i, `{"command":["cat","main.go"]}`)
		fmt.Fprintf(&b, `,{"role":"tool","tool_call_id":"call_%d_a","content":%q}`, i, listing)
		fmt.Fprintf(&b, `,{"role":"tool","tool_call_id":"call_%d_b","content":[{"type":"text","text":%q}]}`, i, listing)
	}
	b.WriteString(`],"tools":[{"type":"function","function":{"name":"shell","parameters":{"type":"object","properties":{"command":{"type":"array","items":{"type":"string"}}}}}}],"reasoning_effort":"medium"}`)
	return []byte(b.String())
}

const chatBenchSize = 800 << 10

func BenchmarkChatRequestToAnthropic800KB(b *testing.B) {
	body := chatConversation(chatBenchSize)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	p50 := responsesP50(b, func() {
		if _, err := ChatRequestToAnthropic(body, ChatRequestOptions{}); err != nil {
			b.Fatal(err)
		}
	})
	b.ReportMetric(float64(p50.Microseconds())/1000, "p50-ms")
}

func BenchmarkChatRequestFromAnthropic800KB(b *testing.B) {
	msgs, err := ChatRequestToAnthropic(chatConversation(chatBenchSize), ChatRequestOptions{ForChat: true})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(msgs)))
	b.ReportAllocs()
	p50 := responsesP50(b, func() {
		if _, err := ChatRequestFromAnthropic(msgs, ChatRequestOptions{}); err != nil {
			b.Fatal(err)
		}
	})
	b.ReportMetric(float64(p50.Microseconds())/1000, "p50-ms")
}

// The benchmark conversation is a valid request whose translation keeps every
// round: a check that the benchmarks measure real work.
func TestChatBenchConversationTranslates(t *testing.T) {
	body := chatConversation(chatBenchSize)
	out, err := ChatRequestToAnthropic(body, ChatRequestOptions{ForChat: true})
	if err != nil {
		t.Fatal(err)
	}
	back, err := ChatRequestFromAnthropic(out, ChatRequestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rounds := strings.Count(string(body), `"reasoning_content"`)
	results := strings.Count(string(body), `"role":"tool"`)
	if rounds < 35 || rounds > 45 || strings.Count(string(out), `"type":"tool_result"`) != results ||
		strings.Count(string(back), `"role":"tool"`) != results || strings.Count(string(back), `"reasoning_content"`) != rounds {
		t.Errorf("%d rounds, %d results in; %d tool_results, %d tool messages, %d reasoning back", rounds, results,
			strings.Count(string(out), `"type":"tool_result"`), strings.Count(string(back), `"role":"tool"`), strings.Count(string(back), `"reasoning_content"`))
	}
}

// FuzzChatRequestToAnthropic: any input gives valid JSON or a typed 400,
// never a panic; and valid output translates onward.
func FuzzChatRequestToAnthropic(f *testing.F) {
	files, _ := filepath.Glob("testdata/chat/request_to_anthropic/*.input.json")
	for _, file := range files {
		if b, err := os.ReadFile(file); err == nil {
			f.Add(b, false)
			f.Add(b, true)
		}
	}
	f.Add([]byte(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`), false)
	f.Add([]byte(`{"model":"m","messages":[{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]},{"role":"tool","tool_call_id":"c","content":[{"type":"text","text":"x"},{"type":"image_url","image_url":{"url":"data:image/png;base64,AA=="}}]}]}`), true)
	f.Fuzz(func(t *testing.T, body []byte, forChat bool) {
		out, err := ChatRequestToAnthropic(body, ChatRequestOptions{ForChat: forChat})
		if err != nil {
			var re *ChatRequestError
			if !errors.As(err, &re) || re.Status != 400 || !json.Valid(re.JSON()) {
				t.Fatalf("untyped error %v for %q", err, body)
			}
			return
		}
		if !json.Valid(out) {
			t.Fatalf("invalid JSON %q for %q", out, body)
		}
		back, err := ChatRequestFromAnthropic(out, ChatRequestOptions{})
		if err != nil {
			var re *ChatRequestError
			if !errors.As(err, &re) {
				t.Fatalf("untyped error %v translating back %q", err, out)
			}
			return
		}
		if !json.Valid(back) {
			t.Fatalf("invalid JSON back %q for %q", back, out)
		}
	})
}

// The per-event cost a translated stream adds: one text delta each way.
func BenchmarkChatStreamFromAnthropicTextDelta(b *testing.B) {
	s := NewChatStreamFromAnthropic(ChatReplyOptions{IncludeUsage: true})
	discard := func([]byte) error { return nil }
	for _, ev := range [][2]string{
		{"message_start", `{"type":"message_start","message":{"id":"msg_1","model":"m","usage":{"input_tokens":1}}}`},
		{"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`},
	} {
		if err := s.Event(ev[0], []byte(ev[1]), discard); err != nil {
			b.Fatal(err)
		}
	}
	delta := []byte(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Reading the \"file\" now, "}}`)
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Event("content_block_delta", delta, discard); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkChatStreamToAnthropicTextDelta(b *testing.B) {
	s := NewChatStreamToAnthropic(ChatReplyOptions{})
	discard := func(string, []byte) error { return nil }
	first := []byte(`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}],"usage":null}`)
	if err := s.Event("", first, discard); err != nil {
		b.Fatal(err)
	}
	delta := []byte(`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"Reading the \"file\" now, "},"logprobs":null,"finish_reason":null}],"usage":null}`)
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Event("", delta, discard); err != nil {
			b.Fatal(err)
		}
	}
}
