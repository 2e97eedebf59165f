package anthropic_test

import (
	"testing"

	"longhaul/proxy/anthropic"
	"longhaul/proxy/proxytest"
)

func TestEncodeUntouchedReturnsSameSlice(t *testing.T) {
	body := proxytest.ClaudeCodeRequest(200<<10, true)
	r, err := anthropic.ParseRequest(body)
	if err != nil {
		t.Fatal(err)
	}
	out := r.Encode()
	if &out[0] != &body[0] || len(out) != len(body) {
		t.Errorf("Encode of an untouched request returned a copy; want the original slice")
	}
	if len(r.Messages) < 20 || r.Model != "claude-sonnet-4-5-20250929" {
		t.Errorf("parsed %d messages, model %q", len(r.Messages), r.Model)
	}
}

// BenchmarkParseRequest800KB is the compaction engine's first step on a
// large request: every message and block found, nothing decoded.
func BenchmarkParseRequest800KB(b *testing.B) {
	body := proxytest.ClaudeCodeRequest(800<<10, true)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := anthropic.ParseRequest(body); err != nil {
			b.Fatal(err)
		}
	}
}
