package openai

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

// responsesConversation builds a Codex-like Responses request of at least
// size bytes: rounds of a user message, reasoning, a function call and its
// output (shell listings and source text, with escapes and non-ASCII).
func responsesConversation(size int) []byte {
	var b strings.Builder
	b.WriteString(`{"model":"gpt-5-codex","instructions":"You are Codex, a coding agent running in a terminal.","stream":true,"store":false,"input":[`)
	text := strings.Repeat("Read the file and explain \"why\" it fails — naïve 修复\n", 8)
	listing := strings.Repeat("-rw-r--r-- 1 dev dev 4096 main.go\tpackage main\\n\n", 40)
	for i := 0; b.Len() < size; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"type":"message","role":"user","content":[{"type":"input_text","text":%q}]},`, text)
		fmt.Fprintf(&b, `{"type":"reasoning","id":"rs_%d","summary":[{"type":"summary_text","text":"Plan step %d."}],"encrypted_content":"gAAAA%d"},`, i, i, i)
		fmt.Fprintf(&b, `{"type":"function_call","call_id":"call_%d","name":"shell","arguments":%q},`, i, `{"command":["ls","-la","/src"]}`)
		fmt.Fprintf(&b, `{"type":"function_call_output","call_id":"call_%d","output":%q},`, i, listing)
		fmt.Fprintf(&b, `{"type":"message","role":"assistant","content":[{"type":"output_text","text":%q,"annotations":[]}]}`, text)
	}
	b.WriteString(`],"tools":[{"type":"function","name":"shell","parameters":{"type":"object","properties":{"command":{"type":"array","items":{"type":"string"}}}},"strict":false}],"reasoning":{"effort":"medium"}}`)
	return []byte(b.String())
}

const responsesBenchSize = 800 << 10

func BenchmarkResponsesRequestToAnthropic800KB(b *testing.B) {
	body := responsesConversation(responsesBenchSize)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	p50 := responsesP50(b, func() {
		if _, err := ResponsesRequestToAnthropic(body, ResponsesRequestOptions{ForResponses: true}); err != nil {
			b.Fatal(err)
		}
	})
	b.ReportMetric(float64(p50.Microseconds())/1000, "p50-ms")
}

func BenchmarkResponsesRequestFromAnthropic800KB(b *testing.B) {
	msgs, err := ResponsesRequestToAnthropic(responsesConversation(responsesBenchSize), ResponsesRequestOptions{ForResponses: true})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(msgs)))
	b.ReportAllocs()
	p50 := responsesP50(b, func() {
		if _, err := ResponsesRequestFromAnthropic(msgs, ResponsesRequestOptions{}); err != nil {
			b.Fatal(err)
		}
	})
	b.ReportMetric(float64(p50.Microseconds())/1000, "p50-ms")
}

// responsesP50 runs fn b.N times and returns the median duration. It also
// reports the process CPU time per run (cpu-ms), which a busy machine does
// not inflate the way it does wall time.
func responsesP50(b *testing.B, fn func()) time.Duration {
	times := make([]time.Duration, 0, b.N)
	cpu0 := responsesCPUTime()
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		fn()
		times = append(times, time.Since(start))
	}
	b.StopTimer()
	if len(times) > 0 {
		b.ReportMetric(float64((responsesCPUTime()-cpu0).Microseconds())/1000/float64(len(times)), "cpu-ms")
	}
	if len(times) == 0 {
		return 0
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	return times[len(times)/2]
}

// The benchmark conversation is a valid request whose translation keeps every
// round: a check that the benchmark measures real work.
func TestResponsesBenchConversationTranslates(t *testing.T) {
	body := responsesConversation(64 << 10)
	out, err := ResponsesRequestToAnthropic(body, ResponsesRequestOptions{ForResponses: true})
	if err != nil {
		t.Fatal(err)
	}
	back, err := ResponsesRequestFromAnthropic(out, ResponsesRequestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	calls := strings.Count(string(body), `"type":"function_call_output"`)
	if calls < 10 || strings.Count(string(out), `"type":"tool_result"`) != calls || strings.Count(string(back), `"type":"function_call_output"`) != calls ||
		strings.Count(string(back), `"encrypted_content"`) != calls {
		t.Errorf("%d rounds in; %d tool_results, %d outputs, %d reasoning items out", calls,
			strings.Count(string(out), `"type":"tool_result"`), strings.Count(string(back), `"type":"function_call_output"`), strings.Count(string(back), `"encrypted_content"`))
	}
}

// FuzzResponsesRequestToAnthropic: any input gives valid JSON or a typed
// error, never a panic; and valid output translates onward.
func FuzzResponsesRequestToAnthropic(f *testing.F) {
	files, _ := filepath.Glob("testdata/responses/request_to_anthropic/*.input.json")
	for _, file := range files {
		if b, err := os.ReadFile(file); err == nil {
			f.Add(b, false)
			f.Add(b, true)
		}
	}
	f.Add([]byte(`{"model":"m","input":"hi"}`), false)
	f.Add([]byte(`{"model":"m","input":[{"type":"function_call","call_id":"c","name":"f","arguments":"{\"a\":1}"},{"type":"function_call_output","call_id":"c","output":[{"type":"input_text","text":"x"}]}]}`), true)
	f.Fuzz(func(t *testing.T, body []byte, keep bool) {
		out, err := ResponsesRequestToAnthropic(body, ResponsesRequestOptions{ForResponses: keep})
		if err != nil {
			var re *ResponsesRequestError
			if !errors.As(err, &re) || re.Status != 400 || !json.Valid(re.JSON()) {
				t.Fatalf("untyped error %v for %q", err, body)
			}
			return
		}
		if !json.Valid(out) {
			t.Fatalf("invalid JSON %q for %q", out, body)
		}
		back, err := ResponsesRequestFromAnthropic(out, ResponsesRequestOptions{})
		if err != nil {
			var re *ResponsesRequestError
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
func BenchmarkResponsesStreamFromAnthropicTextDelta(b *testing.B) {
	s := NewResponsesStreamFromAnthropic(ResponsesReplyOptions{})
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

func BenchmarkResponsesStreamToAnthropicTextDelta(b *testing.B) {
	s := NewResponsesStreamToAnthropic(ResponsesReplyOptions{})
	discard := func(string, []byte) error { return nil }
	for _, d := range []string{
		`{"type":"response.created","response":{"id":"resp_1","model":"m"}}`,
		`{"type":"response.content_part.added","item_id":"msg_1","output_index":0,"content_index":0,"part":{"type":"output_text","text":""}}`,
	} {
		if err := s.Event("", []byte(d), discard); err != nil {
			b.Fatal(err)
		}
	}
	delta := []byte(`{"type":"response.output_text.delta","sequence_number":7,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"Reading the \"file\" now, ","logprobs":[]}`)
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Event("response.output_text.delta", delta, discard); err != nil {
			b.Fatal(err)
		}
	}
}

// responsesCPUTime is the process's user and system CPU time so far.
func responsesCPUTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
