package proxy

import (
	"strings"
	"testing"
	"time"

	"longhaul/proxy/anthropic"
	"longhaul/proxy/compact"
	"longhaul/proxy/proxytest"
)

// cacheTTL is an hour when a breakpoint of the system prompt, the tools or the last messages
// asks for "1h", else five minutes; a "1h" that is not that string, or not beside a "ttl", is
// not one.
func TestCacheTTL(t *testing.T) {
	long := strings.Repeat(`{"role":"user","content":"filler text, 11h and 1h\" of it"},`, 600) // beyond the tail read
	for _, c := range []struct {
		name, body string
		want       time.Duration
	}{
		{"none", `{"model":"m","system":"s","messages":[{"role":"user","content":"hi"}]}`, compact.DefaultCacheTTL},
		{"system", `{"model":"m","system":[{"type":"text","text":"s","cache_control":{"type":"ephemeral","ttl":"1h"}}],"messages":[` + long + `{"role":"user","content":"hi"}]}`, compact.LongCacheTTL},
		{"tools", `{"model":"m","tools":[{"name":"t","input_schema":{},"cache_control":{"type":"ephemeral","ttl":"1h"}}],"messages":[` + long + `{"role":"user","content":"hi"}]}`, compact.LongCacheTTL},
		{"last message", `{"model":"m","messages":[` + long + `{"role":"user","content":[{"type":"text","text":"hi","cache_control":{"type":"ephemeral","ttl":"1h"}}]}]}`, compact.LongCacheTTL},
		{"five minutes asked", `{"model":"m","system":[{"type":"text","text":"s","cache_control":{"type":"ephemeral","ttl":"5m"}}],"messages":[{"role":"user","content":"hi"}]}`, compact.DefaultCacheTTL},
		{"11h beside a ttl", `{"model":"m","system":[{"type":"text","text":"s","cache_control":{"type":"ephemeral","ttl":"11h"}}],"messages":[{"role":"user","content":"hi"}]}`, compact.DefaultCacheTTL},
		{"1h without a ttl", `{"model":"m","system":[{"type":"text","text":"1h"}],"messages":[{"role":"user","content":"hi"}]}`, compact.DefaultCacheTTL},
	} {
		body := []byte(c.body)
		p, _ := anthropic.PeekRequest(body)
		if got := cacheTTL(body, p); got != c.want {
			t.Errorf("%s: cacheTTL = %v; want %v", c.name, got, c.want)
		}
	}
	for _, c := range []struct {
		text string
		want bool
	}{
		{`"1h"`, true}, {`x"1h"`, true}, {`1h"`, false}, {`"11h"`, false}, {`"1h`, false}, {`1h" "1h"`, true}, {``, false},
	} {
		if got := holdsOneHour([]byte(c.text)); got != c.want {
			t.Errorf("holdsOneHour(%s) = %v; want %v", c.text, got, c.want)
		}
	}
}

// BenchmarkCacheTTL reads the cache TTL of a Claude Code request, as every Messages request
// does.
func BenchmarkCacheTTL(b *testing.B) {
	body := proxytest.ClaudeCodeRequest(800<<10, false)
	p, err := anthropic.PeekRequest(body)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(p.SystemSpan.Of(body)) + len(p.ToolsSpan.Of(body)) + cacheTTLTail))
	for b.Loop() {
		cacheTTL(body, p)
	}
}
