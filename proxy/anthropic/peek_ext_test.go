package anthropic_test

import (
	"encoding/json"
	"strings"
	"testing"

	"longhaul/proxy/anthropic"
	"longhaul/proxy/proxytest"
)

// The tests and benchmarks that read proxytest's Claude Code request live
// in the external test package: proxytest imports anthropic.

func TestPeekRequestLarge(t *testing.T) {
	body := proxytest.ClaudeCodeRequest(800<<10, true)
	p, err := anthropic.PeekRequest(body)
	want := anthropic.Peek{Model: "claude-sonnet-4-5-20250929", Stream: true, UserID: "user_3f2a_account_9c1e_session_6d0b8f3e-1111-4222-8333-944455556666"}
	if err != nil || anthropic.Fields(p) != want {
		t.Fatalf("PeekRequest = %+v, %v; want %+v", p, err, want)
	}
	if tools := p.ToolsSpan.Of(body); p.Tools != 25 || !strings.HasPrefix(string(tools), `[{"description"`) || !strings.HasSuffix(string(tools), "}]") {
		t.Errorf("tools = %d in %.60q…; want ClaudeCodeRequest's 25 definitions", p.Tools, tools)
	}
	if got := string(p.FirstMessageSpan.Of(body)); !strings.HasPrefix(got, `{"role":"user"`) || !strings.HasSuffix(got, "}") {
		t.Errorf("first message span = %q", got)
	}
	var cuts []int
	for c := 1; c < len(body); c += 4093 {
		cuts = append(cuts, c)
	}
	anthropic.CheckPeek(t, body, cuts)
}

func BenchmarkPeekRequest800KB(b *testing.B) {
	body := proxytest.ClaudeCodeRequest(800<<10, true)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := anthropic.PeekRequest(body); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPeekRequestShapes covers bodies unlike the code-heavy one: a small
// request (per-string overhead), base64 image data (long runs without
// quotes) and prose (quotes every few hundred bytes, few escapes).
func BenchmarkPeekRequestShapes(b *testing.B) {
	image := `{"model":"m","messages":[{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"` +
		strings.Repeat("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==", 8000) + `"}}]}]}`
	prose := `{"model":"m","messages":[` + strings.Repeat(`{"role":"assistant","content":"`+
		strings.Repeat(`The function returns \"ok\" when the cache is warm; otherwise it refreshes the entry and retries once. `, 40)+`"},`, 100) + `{}]}`
	sparse := `{"model":"m","system":"` + strings.Repeat(strings.Repeat("Keep changes minimal and match the surrounding style. ", 9)+`Say \"done\" at the end.\n`, 2000) + `"}`
	for _, tc := range []struct {
		name string
		body []byte
	}{
		{"small", proxytest.ClaudeCodeRequest(4<<10, true)},
		{"image", []byte(image)},
		{"prose", []byte(prose)},
		{"sparse", []byte(sparse)},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(tc.body)))
			for b.Loop() {
				if _, err := anthropic.PeekRequest(tc.body); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkReadAndPeek800KB reads the body in 16 KB chunks, as from a socket.
func BenchmarkReadAndPeek800KB(b *testing.B) {
	body := proxytest.ClaudeCodeRequest(800<<10, true)
	buf := make([]byte, len(body))
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		var cuts []int
		for c := 16 << 10; c < len(body); c += 16 << 10 {
			cuts = append(cuts, c)
		}
		if _, err := anthropic.ReadAndPeek(anthropic.SplitReader(body, cuts), buf); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkJSONValid800KB(b *testing.B) {
	body := proxytest.ClaudeCodeRequest(800<<10, true)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if !json.Valid(body) {
			b.Fatal("invalid")
		}
	}
}
