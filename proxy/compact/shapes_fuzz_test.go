package compact_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"longhaul/proxy/anthropic"
	"longhaul/proxy/compact"
)

// Fuzz targets of the round trip a client of another protocol takes through
// the compaction engine (shapes_check_test.go compactClient). The fuzzer's
// bytes drive shapeGen (shapes_fuzz_gen_test.go), which always builds a
// valid conversation of the protocol; an input that is itself a JSON object
// (the testdata/shapes seeds and their mutations) is used as the request.
// The pipeline's options come from the bytes too, so every layer gets its
// turn, Layer 3 with a fixed-summary test double.
//
// Every output must be a request the protocol's upstream takes (conversation
// finds no problem), keep the newest tool rounds as they were, keep every
// signature and encrypted reasoning where it was, be the same on every run,
// leave the input alone, and — when Layer 3 did not fork the conversation —
// come back unchanged when run through again.
//
// Run one target for a while with, e.g.
//
//	go test ./proxy/compact -run '^$' -fuzz FuzzChatCompaction -fuzztime 2m -fuzzminimizetime 30x
//
// Plain go test runs the seeds and testdata/fuzz/<target>/ regressions only.

// fixedSummarizer is Layer 3's summary model as a test double: a short,
// fixed XML summary naming how many messages it covers.
type fixedSummarizer struct{}

func (fixedSummarizer) Summarize(_ context.Context, h compact.History) (string, error) {
	return "<conversation_summary><current_work>summarised " + strings.Repeat("m", min(len(h.Messages), 40)) +
		"</current_work></conversation_summary>", nil
}

// fuzzShapeOptions are pipeline options chosen by the input's last bytes,
// with a window sized to the conversation so the thresholds are reached:
// from a fifth of its estimate (Layer 3 forks it) to three times it
// (nothing runs but the compressor).
func fuzzShapeOptions(data []byte, tokens int) compact.Options {
	pick := func(i int) byte {
		if len(data) <= i {
			return 0
		}
		return data[len(data)-1-i]
	}
	o := compact.Options{
		Thresholds:          compact.Thresholds{L1: 0.3, L2: 0.5, L3: 1},
		KeepToolRounds:      1 + int(pick(0)%5),
		ProtectLastMessages: 1 + int(pick(1)%6),
		Compressor:          compact.CompressorOptions{MaxChars: 200 + int(pick(2))*8, LargeChars: 300 + int(pick(2))*8, SnapshotHead: 100, SnapshotTail: 60},
		Summarizer:          fixedSummarizer{},
	}
	if pick(3)%4 == 0 {
		o.Thresholds = compact.Thresholds{L1: 0.2, L2: 0.3, L3: 0.6}
	}
	if pick(5)%2 == 1 {
		o.FoldDuplicates = true
		o.Dedupe.MinChars = []int{1, 50, 300}[int(pick(6))%3]
	}
	scale := []float64{0.2, 0.5, 0.8, 1.5, 3}[int(pick(4))%5]
	o.Limits = compact.NewLimits(nil, max(200, int(float64(tokens)*scale)))
	return o
}

// fuzzShapeBody is the request a fuzz input stands for.
func fuzzShapeBody(data []byte, generate func([]byte) []byte) []byte {
	if d := bytes.TrimSpace(data); len(d) > 0 && d[0] == '{' && json.Valid(d) {
		return data
	}
	return generate(data)
}

// addShapeSeeds seeds a target with the protocol's testdata/shapes inputs
// and a few generator seeds.
func addShapeSeeds(f *testing.F, shape string) {
	inputs, err := filepath.Glob(filepath.Join("testdata", "shapes", shape, "*.input.json"))
	if err != nil {
		f.Fatal(err)
	}
	for _, in := range inputs {
		b, err := os.ReadFile(in)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range []string{"", "\x01", "\xff\xff\xff\xff\xff\xff\xff\xff", "\x80\x40\xc0\x10\xf0\x33\x99\x07"} {
		f.Add([]byte(s))
	}
	x := uint32(2463534242) // longer pseudo-random seeds reach many tool rounds
	for _, n := range []int{300, 1500, 4000} {
		seed := make([]byte, n)
		for i := range seed {
			x ^= x << 13
			x ^= x >> 17
			x ^= x << 5
			seed[i] = byte(x)
		}
		f.Add(seed)
	}
}

func shapeByName(tb testing.TB, name string) clientShape {
	tb.Helper()
	for _, s := range clientShapes() {
		if s.name == name {
			return s
		}
	}
	tb.Fatalf("no client shape %q", name)
	return clientShape{}
}

func FuzzChatCompaction(f *testing.F) {
	addShapeSeeds(f, "chat")
	f.Fuzz(func(t *testing.T, data []byte) { checkShapeRoundTrip(t, shapeByName(t, "chat"), data, generateChat) })
}

func FuzzResponsesCompaction(f *testing.F) {
	addShapeSeeds(f, "responses")
	f.Fuzz(func(t *testing.T, data []byte) {
		checkShapeRoundTrip(t, shapeByName(t, "responses"), data, generateResponses)
	})
}

func FuzzGeminiCompaction(f *testing.F) {
	addShapeSeeds(f, "gemini")
	f.Fuzz(func(t *testing.T, data []byte) {
		checkShapeRoundTrip(t, shapeByName(t, "gemini"), data, generateGemini)
	})
}

// checkShapeRoundTrip runs one fuzz input through the round trip and checks
// what every output must meet (see the top of this file).
func checkShapeRoundTrip(t *testing.T, s clientShape, data []byte, generate func([]byte) []byte) {
	body := fuzzShapeBody(data, generate)
	in := s.conversation(body)
	messages, err := s.toMessages(body)
	if err != nil || len(in.Problems) > 0 {
		if generated := !bytes.Equal(body, data); generated {
			t.Fatalf("the generator built a request that is not valid (%v, %q):\n%s", err, in.Problems, body)
		}
		return // a mutated seed the proxy would refuse
	}
	r, err := anthropic.ParseRequest(messages)
	if err != nil {
		t.Fatalf("the Messages translation does not parse: %v", err)
	}
	o := fuzzShapeOptions(data, int(compact.Estimator{}.Raw(r)))
	orig := bytes.Clone(body)
	out, res, err := compactClient(s, o, body)
	if compact.IsSummaryFailure(err) {
		return // the proxy answers 400: nothing is forwarded
	}
	if err != nil {
		t.Fatalf("%v\nin: %s", err, body)
	}
	if !bytes.Equal(body, orig) {
		t.Fatalf("the round trip modified its input")
	}
	forked := false
	for _, st := range res.Stats {
		forked = forked || st.Layer == compact.Layer3Summary
	}
	var probs []string
	oc := s.conversation(out)
	for _, p := range oc.Problems {
		probs = append(probs, "output: "+p)
	}
	probs = append(probs, keptRoundProblems(in.Rounds, oc.Rounds)...)
	probs = append(probs, foldProblems(in.Rounds, oc.Rounds)...)
	if want := min(o.KeepToolRounds, len(in.Rounds)); !forked && len(oc.Rounds) < want {
		probs = append(probs, fmt.Sprintf("%d tool rounds kept of %d; want at least %d", len(oc.Rounds), len(in.Rounds), want))
	}
	probs = append(probs, opaqueProblems(in.Opaque, oc.Opaque)...)
	if again, _, err := compactClient(s, o, body); err != nil || !bytes.Equal(again, out) {
		probs = append(probs, fmt.Sprintf("not deterministic (%v): %s", err, firstDifference(out, again)))
	}
	if !forked { // a fork run again is summarised again: it is not a fixed point
		twice, _, err := compactClient(s, o, out)
		if err != nil {
			probs = append(probs, fmt.Sprintf("second pass: %v", err))
		} else if c1, c2 := s.canonicalOf(out), s.canonicalOf(twice); c1 != c2 {
			probs = append(probs, "not idempotent: "+firstDifference([]byte(c1), []byte(c2)))
		}
	}
	if len(probs) > 0 {
		t.Errorf("%s\nin:  %.4000s\nout: %.4000s", strings.Join(probs, "\n"), body, out)
	}
}

// firstDifference shows where two outputs part, with some context.
func firstDifference(a, b []byte) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	from := max(0, i-200)
	return fmt.Sprintf("at byte %d:\n  first:  …%s…\n  second: …%s…", i, a[from:min(len(a), i+200)], b[from:min(len(b), i+200)])
}
