package proxy

import (
	"longhaul/proxy/anthropic"
	"net/http"
	"net/http/httptest"
	"testing"
)

// BenchmarkGuard measures the guard's check of one proxy API request, as Claude Code sends
// it: without a key, with the key, and with a browser session cookie. (The guard's cost in a
// whole request is in the (a)–(d) suite, where the proxy runs with a key.)
func BenchmarkGuard(b *testing.B) {
	claudeCode := func() *http.Request {
		r := httptest.NewRequest("POST", "http://127.0.0.1:8045/v1/messages?beta=true", nil)
		for k, v := range map[string]string{
			"Content-Type": "application/json", "Accept": "application/json", "User-Agent": "claude-cli/2.0.0 (external, cli)",
			"Anthropic-Version": "2023-06-01", "Anthropic-Beta": "claude-code-20250219,interleaved-thinking-2025-05-14",
			"X-App": "cli", "X-Stainless-Lang": "js", "X-Stainless-Retry-Count": "0", "X-Api-Key": "lh-bench-key-0001",
		} {
			r.Header.Set(k, v)
		}
		return r
	}
	for _, tc := range []struct {
		name string
		key  string
		prep func(g *Guard, r *http.Request)
	}{
		{"no-key", "", nil},
		{"key", "lh-bench-key-0001", nil},
		{"session-cookie", "lh-bench-key-0001", func(g *Guard, r *http.Request) {
			r.Header.Del("X-Api-Key")
			r.AddCookie(&http.Cookie{Name: sessionCookie(""), Value: g.newSession("")})
		}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			g := NewGuard(nil, Timeouts{})
			g.Configure(tc.key, nil)
			r := claudeCode()
			if tc.prep != nil {
				tc.prep(g, r)
			}
			w := httptest.NewRecorder()
			b.ReportAllocs()
			for b.Loop() {
				if e := g.CheckAPI(w, r, true); e != nil {
					b.Fatal(e)
				}
			}
		})
	}
	b.Run("forward-headers", func(b *testing.B) {
		r := claudeCode()
		b.ReportAllocs()
		for b.Loop() {
			if h := forwardHeaders(r.Header, anthropic.ForwardHeader); len(h) == 0 {
				b.Fatal("no headers")
			}
		}
	})
}
