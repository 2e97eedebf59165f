package proxy

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"longhaul/proxy/proxytest"
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

// TestRequestBodyIsLentUntilReleased: the finished exchange's RequestBody is the proxy's
// pooled buffer, held for the observer (one reference) until ReleaseBodies gives it back,
// once; a copy without bodies holds no reference to give back.
func TestRequestBodyIsLentUntilReleased(t *testing.T) {
	f := newFixture(t, Config{CaptureBodies: true})
	body := streamRequest("claude-sonnet-4-5")
	resp := f.post(t, "/v1/messages", body)
	readAll(t, resp.Body)
	resp.Body.Close()
	ex := f.obs.last(t)
	if string(ex.RequestBody) != body || ex.lent == nil {
		t.Fatalf("RequestBody = %d bytes, lent %v; want the request, lent", len(ex.RequestBody), ex.lent != nil)
	}
	lent := ex.lent
	// The handler and the transport have let go by now; the observer's loan is what is left.
	waitFor(t, "only the observer's reference left", func() bool { return lent.refs.Load() == 1 })
	view := ex.WithoutBodies()
	if view.RequestBody != nil || view.lent != nil {
		t.Errorf("WithoutBodies kept a body (%d bytes) or the loan (%v)", len(view.RequestBody), view.lent != nil)
	}
	view.ReleaseBodies() // holds no loan: must not give the buffer back
	if n := lent.refs.Load(); n != 1 {
		t.Fatalf("refs after releasing a copy without bodies = %d; want 1", n)
	}
	ex.ReleaseBodies()
	ex.ReleaseBodies()
	if n := lent.refs.Load(); n != 0 || ex.RequestBody != nil {
		t.Errorf("after ReleaseBodies twice: refs %d, RequestBody %d bytes; want 0 and none", n, len(ex.RequestBody))
	}
}
