package anthropic_test

import (
	"bufio"
	"bytes"
	"testing"

	"longhaul/proxy/anthropic"
	"longhaul/proxy/proxytest"
	"longhaul/proxy/sse"
)

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
		rb := anthropic.NewReplyBuilder(2 << 20)
		for _, ev := range evs {
			rb.Add(ev.Name, ev.Data)
		}
		rb.Bytes()
	}
}
