package gemini_test

import (
	"bytes"
	"encoding/json"
	"sort"
	"testing"
	"time"

	"longhaul/proxy/gemini"
	"longhaul/proxy/proxytest"
)

const benchSize = 800 << 10

// benchConversations gives an 800 KB Claude Code conversation in both
// shapes: as Messages, and as the Gemini request it translates to.
func benchConversations(tb testing.TB) (messages, geminiReq []byte) {
	tb.Helper()
	messages = proxytest.ClaudeCodeRequest(benchSize, true)
	g, err := gemini.RequestFromAnthropic(messages, gemini.RequestOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	return messages, g
}

// runP50 times each op and reports the median next to the mean: the target
// is a p50.
func runP50(b *testing.B, size int, op func() error) {
	b.SetBytes(int64(size))
	b.ReportAllocs()
	durations := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		if err := op(); err != nil {
			b.Fatal(err)
		}
		durations = append(durations, time.Since(start))
	}
	b.StopTimer()
	sort.Slice(durations, func(i, j int) bool { return durations[i] < durations[j] })
	b.ReportMetric(float64(durations[len(durations)/2].Microseconds())/1000, "p50-ms")
}

func BenchmarkRequestFromAnthropic800KB(b *testing.B) {
	messages, _ := benchConversations(b)
	runP50(b, len(messages), func() error {
		_, err := gemini.RequestFromAnthropic(messages, gemini.RequestOptions{Signature: func(string) (string, bool) { return "", false }})
		return err
	})
}

func BenchmarkRequestToAnthropic800KB(b *testing.B) {
	_, g := benchConversations(b)
	runP50(b, len(g), func() error {
		_, err := gemini.RequestToAnthropic(g, gemini.RequestOptions{Model: "gemini-2.5-pro", OnSignature: func(string, string) {}})
		return err
	})
}

// BenchmarkStreamFirstDelta is the time a Gemini stream's first chunk takes
// to become Messages events (what translation adds before the first delta
// reaches the client).
func BenchmarkStreamFirstDelta(b *testing.B) {
	chunk := []byte(`{"candidates":[{"content":{"role":"model","parts":[{"text":"Hello"}]},"index":0}],"usageMetadata":{"promptTokenCount":200000,"totalTokenCount":200000},"modelVersion":"gemini-2.5-pro","responseId":"r"}`)
	emit := func(string, []byte) error { return nil }
	runP50(b, len(chunk), func() error {
		return gemini.NewStreamToAnthropic(gemini.ReplyOptions{}).Event("", chunk, emit)
	})
}

// BenchmarkStreamFromAnthropicDelta is the same the other way: one
// text_delta event to one Gemini frame.
func BenchmarkStreamFromAnthropicDelta(b *testing.B) {
	ev := []byte(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}`)
	tr := gemini.NewStreamFromAnthropic(gemini.ReplyOptions{SSE: true})
	write := func([]byte) error { return nil }
	runP50(b, len(ev), func() error { return tr.Event("content_block_delta", ev, write) })
}

// FuzzRequestToAnthropic: any input gives valid JSON or a typed error, never
// a panic.
func FuzzRequestToAnthropic(f *testing.F) {
	for _, name := range []string{"request_tools.gemini.json", "request_structured.gemini.json"} {
		f.Add(readTestdata(f, name))
	}
	f.Add([]byte(losslessGemini))
	f.Add([]byte(`{"contents":[{"parts":[{"functionResponse":{"name":"f","response":{}}}]}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		out, err := gemini.RequestToAnthropic(body, gemini.RequestOptions{Model: "m"})
		if err != nil {
			if _, ok := err.(*gemini.Error); !ok {
				t.Fatalf("error %T %v is not a *gemini.Error", err, err)
			}
			return
		}
		if !json.Valid(out) {
			t.Fatalf("invalid JSON out: %s", out)
		}
		// What came out translates back without a panic.
		if back, err := gemini.RequestFromAnthropic(out, gemini.RequestOptions{Original: body}); err == nil && !json.Valid(back) {
			t.Fatalf("invalid JSON back: %s", back)
		}
	})
}

func TestBenchConversationIsRealistic(t *testing.T) {
	messages, g := benchConversations(t)
	if len(messages) < benchSize {
		t.Fatalf("conversation is %d bytes; want at least %d", len(messages), benchSize)
	}
	if bytes.Contains(g, []byte(`"Eq`)) {
		t.Errorf("Anthropic signatures leaked into the Gemini form")
	}
	var req gemini.Request
	if err := json.Unmarshal(g, &req); err != nil || len(req.Contents) < 100 {
		t.Fatalf("Gemini form has %d contents (%v)", len(req.Contents), err)
	}
}
