package proxy

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"longhaul/proxy/anthropic"
	"longhaul/proxy/compact"
	"longhaul/proxy/proxytest"
)

// TestScreenAgreesWithPipeline checks the hot path's screen against the
// engine: whenever untouched says a request needs nothing, the full
// pipeline must indeed forward it byte for byte — otherwise the same
// request would be forwarded differently depending on which path it took,
// and prompt caches would break.
func TestScreenAgreesWithPipeline(t *testing.T) {
	inputs, err := filepath.Glob(filepath.Join("compact", "testdata", "*", "*.input.json"))
	if err != nil || len(inputs) == 0 {
		t.Fatalf("no compaction inputs (%v)", err)
	}
	bodies := map[string][]byte{
		"claude-code-800KB": proxytest.ClaudeCodeRequest(800<<10, true),
		"claude-code-60KB":  proxytest.ClaudeCodeRequest(60<<10, false),
	}
	// One request per clause of the screen, each of which the pipeline changes.
	msgs := func(m ...string) []byte {
		return []byte(`{"model":"claude-sonnet-4-5","max_tokens":100,"thinking":{"type":"enabled","budget_tokens":50},"messages":[` + strings.Join(m, ",") + `]}`)
	}
	ask := `{"role":"user","content":"go"}`
	use := func(id string) string {
		return `{"role":"assistant","content":[{"type":"thinking","thinking":"thinking it over","signature":"EqSigA"},{"type":"tool_use","id":"` + id + `","name":"Read","input":{}}]}`
	}
	result := func(id, content string) string {
		return `{"role":"user","content":[{"type":"tool_result","tool_use_id":"` + id + `","content":` + content + `}]}`
	}
	image := `[{"type":"text","text":"shot"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"` + strings.Repeat("QUJD", 400) + `"}}]`
	saved := `"Output too large. Full output saved to: /tmp/out.txt\n` + strings.Repeat(`preview line\n`, 40) + `"`
	huge := `"` + strings.Repeat("x", compact.DefaultMaxToolResultChars+10) + `"`
	bodies["tool-result image"] = msgs(ask, use("t1"), result("t1", image), use("t2"), result("t2", `"ok"`))
	bodies["saved notice"] = msgs(ask, use("t1"), result("t1", saved), use("t2"), result("t2", `"ok"`))
	bodies["huge tool result"] = msgs(ask, use("t1"), result("t1", huge))
	bodies["unsigned thinking"] = msgs(ask, `{"role":"assistant","content":[{"type":"thinking","thinking":"lost its signature"},{"type":"text","text":"done"}]}`, ask)
	bodies["loop without thinking"] = msgs(ask, `{"role":"assistant","content":[{"type":"tool_use","id":"tcached","name":"Read","input":{}}]}`, result("tcached", `"ok"`))
	bodies["thinking to a model without"] = []byte(strings.Replace(string(msgs(ask, use("t1"), result("t1", `"ok"`))), "claude-sonnet-4-5", "claude-3-5-sonnet-20241022", 1))
	// Session "x" was served by Gemini before: its Gemini-signed thinking must go.
	bodies["cross-model"] = msgs(ask, `{"role":"assistant","content":[{"type":"thinking","thinking":"from gemini","signature":"EqSigGemini"},{"type":"text","text":"hi"}]}`, ask)
	for _, in := range inputs {
		b, err := os.ReadFile(in)
		if err != nil {
			t.Fatal(err)
		}
		bodies[in] = b
	}
	screened := 0
	for _, limit := range []int{10_000_000, 200_000, 5_000} {
		srv, err := New(Config{Compaction: CompactionConfig{ContextLimits: map[string]int{"*": limit}}}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		comp := srv.comp.Load()
		comp.sigs.PutToolSignature("tcached", "EqSigCached")
		comp.sigs.NoteFamily("x", "gemini")
		comp.sigs.PutFamily("EqSigGemini", "gemini")
		for name, body := range bodies {
			p, err := anthropic.PeekRequest(body)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			session := "s"
			if name == "cross-model" {
				session = "x"
			}
			_, ok := comp.untouched(p, body, comp.target(p.Model, 0, nil, nil), session)
			res, err := comp.pipe.Run(context.Background(), compact.Input{Body: body, Model: p.Model, Session: session,
				NoThinking: !compact.SupportsThinking(p.Model)})
			if !ok {
				if limit == 10_000_000 && !strings.Contains(name, "testdata") && !strings.HasPrefix(name, "claude-code") && !res.Changed {
					t.Errorf("%s: the pipeline leaves it alone; this case is meant to test a clause of the screen", name)
				}
				continue
			}
			screened++
			if err != nil || res.Changed {
				t.Errorf("limit %d, %s: screened as untouched, but the pipeline changed it (err %v, steps %+v)", limit, name, err, res.Stats)
			}
		}
	}
	if screened < 5 {
		t.Errorf("only %d requests were screened as untouched; the screen is not doing its job", screened)
	}
}

// BenchmarkScreen800KB is what the hot path adds to an 800 KB request that
// needs nothing: the peek (with the block counts the screen reads) and the
// screen itself; BenchmarkPeekRequest800KB in proxy/anthropic is the peek
// alone, for comparison.
func BenchmarkScreen800KB(b *testing.B) {
	body := proxytest.ClaudeCodeRequest(800<<10, false)
	srv, err := New(Config{Compaction: CompactionConfig{ContextLimits: map[string]int{"*": benchContextLimit}}}, Options{})
	if err != nil {
		b.Fatal(err)
	}
	comp := srv.comp.Load()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		p, err := anthropic.PeekRequest(body)
		if err != nil {
			b.Fatal(err)
		}
		if _, ok := comp.untouched(p, body, comp.target(p.Model, 0, nil, nil), "s"); !ok {
			b.Fatal("the benchmark request should be screened as untouched")
		}
	}
}
