package proxy

import (
	"bufio"
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"longhaul/proxy/proxytest"
	"longhaul/proxy/sse"
)

// canonical decodes JSON into plain values so two encodings compare equal.
func canonical(tb testing.TB, b []byte) any {
	tb.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		tb.Fatalf("decode %q: %v", b, err)
	}
	return v
}

func TestReplyBodyIsTheReconstructedMessage(t *testing.T) {
	msg := &proxytest.Message{
		ID: "msg_reply_1", Model: "claude-sonnet-4-5",
		Content: []proxytest.Block{
			proxytest.Thinking("Let me think about the weather in Paris.", "sig-abc-123"),
			proxytest.Text("I will look it up. ✓ \"quoted\""),
			proxytest.ToolUse("toolu_01", "get_weather", map[string]any{"city": "Paris", "days": 3}),
		},
		Usage:     proxytest.Usage{InputTokens: 120, OutputTokens: 45, CacheReadInputTokens: 7},
		ChunkSize: 5,
	}
	for _, tc := range []struct {
		name   string
		stream bool
	}{{"stream", true}, {"non-stream", false}} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, Config{CaptureBodies: true})
			f.up.Enqueue(proxytest.Reply{Message: msg})
			body := strings.Replace(streamRequest("claude-sonnet-4-5"), `"stream":true`, `"stream":`+map[bool]string{true: "true", false: "false"}[tc.stream], 1)
			resp := f.post(t, "/v1/messages", body)
			readAll(t, resp.Body)
			resp.Body.Close()
			ex := f.obs.last(t)
			if ex.BodiesTruncated {
				t.Errorf("BodiesTruncated = true; want false")
			}
			got, want := canonical(t, ex.ReplyBody), canonical(t, msg.JSON())
			if !reflect.DeepEqual(got, want) {
				t.Errorf("ReplyBody = %s\nwant %s", ex.ReplyBody, msg.JSON())
			}
		})
	}
}

func TestReplyBodyOffWithoutCapture(t *testing.T) {
	f := newFixture(t, Config{})
	resp := f.post(t, "/v1/messages", streamRequest("claude-sonnet-4-5"))
	readAll(t, resp.Body)
	resp.Body.Close()
	if ex := f.obs.last(t); ex.ReplyBody != nil {
		t.Errorf("ReplyBody = %q; want nil when CaptureBodies is off", ex.ReplyBody)
	}
}

func TestReplyBodyIsCapped(t *testing.T) {
	long := strings.Repeat("long text ", 2000) // 20 KB
	msg := &proxytest.Message{Content: []proxytest.Block{proxytest.Text(long)}, ChunkSize: 100}
	for _, stream := range []bool{true, false} {
		f := newFixture(t, Config{CaptureBodies: true, MaxCaptureBytes: 4096})
		f.up.Enqueue(proxytest.Reply{Message: msg})
		body := streamRequest("claude-sonnet-4-5")
		if !stream {
			body = strings.Replace(body, `"stream":true`, `"stream":false`, 1)
		}
		resp := f.post(t, "/v1/messages", body)
		if got := readAll(t, resp.Body); !strings.Contains(got, "long text") {
			t.Fatalf("client got %q; the capture must not cut the reply", got[:min(len(got), 200)])
		}
		resp.Body.Close()
		ex := f.obs.last(t)
		if !ex.BodiesTruncated || len(ex.ReplyBody) > 4096 || len(ex.ReplyBody) == 0 {
			t.Errorf("stream=%t: truncated=%t len(ReplyBody)=%d; want truncated, 0 < len <= 4096", stream, ex.BodiesTruncated, len(ex.ReplyBody))
		}
	}
}

func TestReplyBuilderKeepsPartialToolInput(t *testing.T) {
	b := newReplyBuilder(1 << 20)
	for _, ev := range []struct{ name, data string }{
		{"message_start", `{"type":"message_start","message":{"id":"m","role":"assistant","content":[],"usage":{"input_tokens":3}}}`},
		{"content_block_start", `{"index":0,"content_block":{"type":"tool_use","id":"t","name":"n","input":{}}}`},
		{"content_block_delta", `{"index":0,"delta":{"type":"input_json_delta","partial_json":"{\"a\":"}}`},
	} {
		b.add(sse.Event{Name: ev.name, Data: []byte(ev.data)})
	}
	out, _ := b.bytes()
	if !bytes.Contains(out, []byte(`"input_partial":"{\"a\":"`)) {
		t.Errorf("bytes() = %s; want the broken-off input kept as input_partial", out)
	}
}

// TestReplyBuilderFastAndSlowPathsAgree feeds the same deltas compact (the fast path reads
// them raw) and spaced out (decoded), with escapes that must survive concatenation.
func TestReplyBuilderFastAndSlowPathsAgree(t *testing.T) {
	deltas := []string{`a \"quoted\" `, `back\\slash \u00e9 `, `\n✓ line`, `\ud83d\ude00`}
	build := func(sep string) []byte {
		b := newReplyBuilder(1 << 20)
		b.add(sse.Event{Name: "message_start", Data: []byte(`{"type":"message_start","message":{"id":"m","content":[]}}`)})
		b.add(sse.Event{Name: "content_block_start", Data: []byte(`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)})
		for _, d := range deltas {
			b.add(sse.Event{Name: "content_block_delta", Data: []byte(`{"type":"content_block_delta",` + sep + `"index":0,"delta":{` + sep + `"type":"text_delta","text":"` + d + `"}}`)})
		}
		out, _ := b.bytes()
		return out
	}
	fast, slow := build(""), build(" ")
	var v struct {
		Content []struct{ Text string } `json:"content"`
	}
	if err := json.Unmarshal(fast, &v); err != nil || len(v.Content) != 1 || v.Content[0].Text != "a \"quoted\" back\\slash é \n✓ line😀" {
		t.Errorf("fast path = %s, %v", fast, err)
	}
	if !reflect.DeepEqual(canonical(t, fast), canonical(t, slow)) {
		t.Errorf("fast %s != slow %s", fast, slow)
	}
}

// BenchmarkReplyBuilder is the cost a captured stream adds to its request: every event
// through the builder, then the final message.
func BenchmarkReplyBuilder(b *testing.B) {
	msg := proxytest.TextMessage("claude-sonnet-4-5", "Hello from proxytest.")
	var evs []sse.Event
	rd := sse.NewReader(bufio.NewReader(bytes.NewReader(msg.SSE())), 0)
	for {
		ev, err := rd.Next()
		if err != nil {
			break
		}
		ev.Data = bytes.Clone(ev.Data)
		evs = append(evs, ev)
	}
	b.ReportAllocs()
	for b.Loop() {
		rb := newReplyBuilder(2 << 20)
		for _, ev := range evs {
			rb.add(ev)
		}
		rb.bytes()
	}
}
