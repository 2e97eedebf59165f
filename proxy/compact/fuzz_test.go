package compact

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"longhaul/proxy/anthropic"
)

// Fuzz tests of the compaction steps over generated conversations.
//
// Random bytes are almost never a Messages request, so the fuzzer's bytes
// drive convGen, a small deterministic generator that always builds a valid,
// plausible conversation (user/assistant turns, tool rounds with parallel
// calls answered out of order, signed thinking, redacted_thinking, images,
// mixed text and tool_result user messages, server tool blocks, unknown
// blocks, cache_control, mid-conversation system messages, odd key orders,
// escapes and indentation); the fuzzer then explores structure instead of
// JSON syntax. An input that is itself a JSON object (the testdata seeds and
// their mutations) is used as the request directly.
//
// Every output must be valid JSON and a valid request (validate), keep every
// signature byte for byte, be no longer than the input, be a fixed point of
// the step (applying it twice equals applying it once), be the same on every
// run, and leave the input bytes alone. Each step adds what it promises.
//
// Run one target for a while with, e.g.
//
//	go test ./proxy/compact -run '^$' -fuzz FuzzLayer1 -fuzztime 3m -fuzzminimizetime 30x
//
// (by default every new interesting input is minimized for up to a minute,
// which with these inputs leaves almost no time for fuzzing). Plain go test
// runs the seeds and testdata/fuzz/<target>/ regressions only.

// step is one compaction step applied to a parsed request.
type stepFn func(r *anthropic.Request)

func runFuzzStep(t *testing.T, s stepFn, body []byte) []byte {
	t.Helper()
	r, err := anthropic.ParseRequest(body)
	if err != nil {
		t.Fatalf("ParseRequest: %v", err)
	}
	s(r)
	return r.Encode()
}

// checkStep applies s to body and checks the properties every step has. It
// returns the output and whether the input was a valid request (the
// properties that need one were checked).
func checkStep(t *testing.T, s func() stepFn, body []byte) (out []byte, valid bool) {
	t.Helper()
	if _, err := anthropic.ParseRequest(body); err != nil {
		return nil, false // not a request the proxy would hand over
	}
	orig := bytes.Clone(body)
	out = runFuzzStep(t, s(), body)
	if !bytes.Equal(body, orig) {
		t.Fatalf("the step modified its input")
	}
	if !json.Valid(out) {
		t.Fatalf("output is not valid JSON:\n%s", out)
	}
	if len(out) > len(body) {
		t.Errorf("output is %d bytes, longer than the %d-byte input:\nin:  %s\nout: %s", len(out), len(body), body, out)
	}
	valid = len(validate(body, body)) == 0
	if valid {
		for _, p := range validate(body, out) {
			t.Errorf("%s\nin:  %s\nout: %s", p, body, out)
		}
	} else {
		for _, p := range validateKept(body, out) {
			t.Errorf("%s\nin:  %s\nout: %s", p, body, out)
		}
	}
	if again := runFuzzStep(t, s(), out); !bytes.Equal(again, out) {
		t.Errorf("not idempotent:\nonce:  %s\ntwice: %s", out, again)
	}
	if det := runFuzzStep(t, s(), body); !bytes.Equal(det, out) {
		t.Errorf("not deterministic:\nfirst:  %s\nsecond: %s", out, det)
	}
	return out, valid
}

// flatBlock is one piece of message content, for comparing what a step kept.
type flatBlock struct {
	role, typ, raw string
}

// flattenContent lists the content of the user and assistant messages in order; a
// string content counts as a text block. System messages are listed apart.
func flattenContent(msgs []anthropic.Message) (blocks []flatBlock, system []string) {
	for i := range msgs {
		m := &msgs[i]
		if m.Role == "system" {
			system = append(system, string(m.Raw()))
			continue
		}
		if m.IsString {
			blocks = append(blocks, flatBlock{m.Role, "text", "text:" + m.Text()})
			continue
		}
		for _, b := range m.Blocks {
			raw := string(b.Raw())
			if b.Type == "text" && !bytes.Contains(b.Raw(), []byte(`"cache_control"`)) {
				raw = "text:" + b.Text() // a merged string content becomes a text block
			}
			blocks = append(blocks, flatBlock{m.Role, b.Type, raw})
		}
	}
	return blocks, system
}

func mustParseT(t *testing.T, body []byte) *anthropic.Request {
	t.Helper()
	r, err := anthropic.ParseRequest(body)
	if err != nil {
		t.Fatalf("ParseRequest: %v", err)
	}
	return r
}

func FuzzCompressor(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		body := fuzzBody(data)
		// Small limits, chosen by the input, so short conversations reach them.
		var o CompressorOptions
		if len(data) > 0 {
			o = CompressorOptions{MaxChars: 40 + int(data[0])*4, LargeChars: 60 + int(data[len(data)-1])*4, SnapshotHead: 30 + int(data[0]%64), SnapshotTail: 20 + int(data[len(data)-1]%32)}
		}
		out, valid := checkStep(t, func() stepFn { return func(r *anthropic.Request) { NewCompressor(o).Apply(r) } }, body)
		maxChars := NewCompressor(o).o.MaxChars
		if out == nil || !valid {
			return
		}
		// Only tool_result blocks change, and no message moves.
		in, got := mustParseT(t, body), mustParseT(t, out)
		if len(in.Messages) != len(got.Messages) {
			t.Fatalf("compressor changed the message count %d -> %d", len(in.Messages), len(got.Messages))
		}
		for i := range in.Messages {
			a, b := &in.Messages[i], &got.Messages[i]
			if a.Role != b.Role || len(a.Blocks) != len(b.Blocks) {
				t.Fatalf("message %d changed shape", i)
			}
			for j := range a.Blocks {
				ab, bb := a.Blocks[j], b.Blocks[j]
				if ab.Type == "tool_result" && a.Role == "user" {
					if ab.ToolUseID() != bb.ToolUseID() || bb.Type != "tool_result" {
						t.Errorf("message %d block %d: tool_result lost its id", i, j)
					}
					if c := bb.Content(); len(c) > 0 && c[0] == '"' && !bytes.Equal(c, ab.Content()) {
						if n := utf8.RuneCountInString(anthropic.Unquote(c)); n > maxChars {
							t.Errorf("message %d block %d: compressed result has %d characters; the cap is %d", i, j, n, maxChars)
						}
					}
					checkToolResultText(t, ab, bb)
					continue
				}
				if !bytes.Equal(ab.Raw(), bb.Raw()) {
					t.Errorf("message %d block %d (%s) changed:\n%s\n%s", i, j, ab.Type, ab.Raw(), bb.Raw())
				}
			}
		}
	})
}

// checkToolResultText checks that every text the compressor shortened is
// clean UTF-8 that does not end inside a character sequence of the original
// (a UTF-8 sequence, a combining mark, an emoji with its modifiers or joiners).
func checkToolResultText(t *testing.T, in, out anthropic.Block) {
	t.Helper()
	if bytes.Equal(in.Raw(), out.Raw()) {
		return
	}
	texts := func(b anthropic.Block) []string {
		c := b.Content()
		if len(c) == 0 {
			return nil
		}
		if c[0] == '"' {
			return []string{anthropic.Unquote(c)}
		}
		inner, err := anthropic.ParseBlocks(c)
		if err != nil {
			return nil
		}
		var out []string
		for _, ib := range inner {
			if ib.Type == "text" {
				out = append(out, ib.Text())
			}
		}
		return out
	}
	const marker = "\n...[truncated "
	unchanged := map[string]bool{}
	for _, s := range texts(in) {
		unchanged[s] = true
	}
	for _, s := range texts(out) {
		if unchanged[s] {
			continue // not rewritten: its bytes are the client's
		}
		if !utf8.ValidString(s) {
			t.Errorf("compressed text is not valid UTF-8: %q", s)
		}
		i := strings.LastIndex(s, marker)
		if i < 0 {
			continue
		}
		kept := s[:i]
		for _, orig := range texts(in) {
			if strings.HasPrefix(orig, kept) && len(orig) > len(kept) {
				if !atCluster(orig, len(kept)) {
					t.Errorf("truncation splits a character sequence: …%q | %q…", tailOf(kept, 12), orig[len(kept):min(len(orig), len(kept)+12)])
				}
			}
		}
	}
}

func tailOf(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := len(s) - n
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return s[i:]
}

func FuzzLayer1(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		body := fuzzBody(data)
		keep := 1
		if len(data) > 0 {
			keep = 1 + int(data[len(data)-1]%5)
		}
		out, valid := checkStep(t, func() stepFn { return func(r *anthropic.Request) { NewLayer1(keep, 0).Apply(r, "", nil) } }, body)
		if out == nil || !valid {
			return
		}
		in, got := mustParseT(t, body), mustParseT(t, out)
		// The last keep rounds stay, whole and in order.
		ir, outRounds := findRounds(in.Messages), findRounds(got.Messages)
		var want, kept []string
		for _, rd := range ir[max(0, len(ir)-keep):] {
			want = append(want, rd.firstID)
		}
		for _, rd := range outRounds {
			kept = append(kept, rd.firstID)
		}
		if fmt.Sprint(want) != fmt.Sprint(kept) {
			t.Errorf("rounds kept %v; want the last %d: %v", kept, keep, want)
		}
		checkKeptContent(t, in.Messages, got.Messages, false)
		// A session whose history grows request by request, trimmed with a
		// remembered boundary: every request must come out valid.
		// Apply moves a boundary at once; ApplyInSteps (the pipeline's) waits
		// for rounds to pile up unless urgent.
		l, steps := NewLayer1(keep, 0), NewLayer1(keep, 0)
		limit := Estimator{}.Raw(in) / 2
		over := func(r *anthropic.Request) bool { return Estimator{}.Raw(r) > limit }
		urgent := func(r *anthropic.Request) bool { return Estimator{}.Raw(r) > limit*3/2 }
		prefixes := userPrefixes(body)
		for i, prefix := range prefixes[max(0, len(prefixes)-8):] {
			orig := bytes.Clone(prefix)
			r := mustParseT(t, prefix)
			if i%2 == 0 {
				l.Apply(r, "session", over)
			} else {
				steps.ApplyInSteps(r, "session", over, urgent)
			}
			o := r.Encode()
			if !bytes.Equal(prefix, orig) {
				t.Fatalf("Layer 1 modified its input")
			}
			if len(o) > len(prefix) {
				t.Errorf("session request grew: %d -> %d bytes", len(prefix), len(o))
			}
			for _, p := range validate(prefix, o) {
				t.Errorf("session request: %s\nin:  %s\nout: %s", p, prefix, o)
			}
		}
	})
}

// userPrefixes lists the requests a client would have sent on the way to
// body: its history cut after each user message.
func userPrefixes(body []byte) [][]byte {
	r, err := anthropic.ParseRequest(body)
	if err != nil {
		return nil
	}
	var out [][]byte
	for i := range r.Messages {
		if r.Messages[i].Role != "user" || i == len(r.Messages)-1 {
			continue
		}
		c := r.Clone()
		c.Messages = c.Messages[:i+1]
		out = append(out, c.Encode())
	}
	return out
}

// checkKeptContent checks that a step only removed content: what is left is
// in the input's order, system messages stay, and user text, images and
// documents are never lost — Layer 1 drops whole tool rounds but keeps text
// the user typed next to a tool result. With purify, only thinking may go.
func checkKeptContent(t *testing.T, in, out []anthropic.Message, purify bool) {
	t.Helper()
	ib, isys := flattenContent(in)
	ob, osys := flattenContent(out)
	if fmt.Sprint(isys) != fmt.Sprint(osys) {
		t.Errorf("system messages changed:\n%q\n%q", isys, osys)
	}
	j := 0
	for _, b := range ob {
		for j < len(ib) && ib[j] != b {
			if !purify && ib[j].role == "user" && ib[j].typ != "tool_result" {
				t.Errorf("user content lost: %.200s", ib[j].raw)
			}
			if purify && ib[j].typ != "thinking" && ib[j].typ != "redacted_thinking" {
				t.Errorf("purify removed a block that is not thinking: %.200s", ib[j].raw)
			}
			j++
		}
		if j == len(ib) {
			t.Fatalf("output block not in the input (or out of order): %.300s", b.raw)
		}
		j++
	}
	for ; j < len(ib); j++ {
		if !purify && ib[j].role == "user" && ib[j].typ != "tool_result" {
			t.Errorf("user content lost at the end: %.200s", ib[j].raw)
		}
		if purify && ib[j].typ != "thinking" && ib[j].typ != "redacted_thinking" {
			t.Errorf("purify removed a trailing block that is not thinking: %.200s", ib[j].raw)
		}
	}
}

func FuzzLayer2(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		body := fuzzBody(data)
		protect := 4
		if len(data) > 0 {
			protect = 1 + int(data[0]%6)
		}
		out, valid := checkStep(t, func() stepFn { return func(r *anthropic.Request) { ElideThinking(r, protect) } }, body)
		if out == nil || !valid {
			return
		}
		in, got := mustParseT(t, body), mustParseT(t, out)
		if len(in.Messages) != len(got.Messages) {
			t.Fatalf("Layer 2 changed the message count")
		}
		for i := range in.Messages {
			a, b := &in.Messages[i], &got.Messages[i]
			if i >= len(in.Messages)-protect && !bytes.Equal(a.Raw(), b.Raw()) {
				t.Errorf("protected message %d changed", i)
			}
			for j := range a.Blocks {
				ab, bb := a.Blocks[j], b.Blocks[j]
				if bytes.Equal(ab.Raw(), bb.Raw()) {
					if ab.Type == "thinking" && a.Role == "assistant" && i < len(in.Messages)-protect &&
						ab.Signature() != "" && utf8.RuneCountInString(ab.Thinking()) > minThinkingChars {
						t.Errorf("message %d: signed thinking not elided", i)
					}
					continue
				}
				want, err := ab.With("thinking", elidedThinkingJSON)
				if ab.Type != "thinking" || err != nil || !bytes.Equal(want.Raw(), bb.Raw()) {
					t.Errorf("message %d block %d: changed beyond eliding thinking:\n%s\n%s", i, j, ab.Raw(), bb.Raw())
				}
			}
		}
	})
}

func FuzzPurify(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		body := fuzzBody(data)
		out, valid := checkStep(t, func() stepFn { return func(r *anthropic.Request) { Purify(r) } }, body)
		if out == nil || !valid {
			return
		}
		got := mustParseT(t, out)
		for i, m := range got.Messages {
			for _, b := range m.Blocks {
				if b.Type == "thinking" || b.Type == "redacted_thinking" {
					t.Errorf("message %d still has a %s block", i, b.Type)
				}
			}
		}
		checkKeptContent(t, mustParseT(t, body).Messages, got.Messages, true)
	})
}

// atCluster reports whether s can be cut before byte i without splitting a
// user-perceived character: not inside a UTF-8 sequence, not before a
// combining mark, variation selector, skin-tone modifier, keycap or emoji
// tag, not next to a zero-width joiner, not between two regional indicators
// of a flag. (Written apart from the engine's cut, so one checks the other.)
func atCluster(s string, i int) bool {
	if i <= 0 || i >= len(s) {
		return true
	}
	if !utf8.RuneStart(s[i]) {
		return false
	}
	next, _ := utf8.DecodeRuneInString(s[i:])
	prev, _ := utf8.DecodeLastRuneInString(s[:i])
	extends := func(r rune) bool {
		return r >= 0x300 && r <= 0x36F || r == 0x200D || r >= 0xFE00 && r <= 0xFE0F ||
			r >= 0x1F3FB && r <= 0x1F3FF || r == 0x20E3 || r >= 0xE0020 && r <= 0xE007F
	}
	if extends(next) || prev == 0x200D {
		return false
	}
	isRI := func(r rune) bool { return r >= 0x1F1E6 && r <= 0x1F1FF }
	if isRI(prev) && isRI(next) {
		n := 0 // regional indicators before the cut: an odd count splits a flag
		for j := i; j > 0; {
			r, size := utf8.DecodeLastRuneInString(s[:j])
			if !isRI(r) {
				break
			}
			n++
			j -= size
		}
		return n%2 == 0
	}
	return true
}
