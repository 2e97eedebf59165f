package compact_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"longhaul/proxy/anthropic"
	"longhaul/proxy/compact"
)

// updateGolden reports the -update flag. golden_test.go (package compact,
// linked into the same test binary) defines it; defining it again here
// would panic.
func updateGolden() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// goldenKeepRounds is Layer 1's KeepToolRounds in the shape goldens.
const goldenKeepRounds = 2

// goldenShapeOptions compact the testdata/shapes conversations hard enough
// that the compressor, Layer 1 and (where there is thinking) Layer 2 all
// fire, and never Layer 3: L1 and L2 at 5% of an 8,000-token window, L3 at
// all of it, which no input reaches once its huge tool result is compressed.
// Small compressor limits keep the golden files readable.
func goldenShapeOptions() compact.Options {
	return compact.Options{
		Thresholds:          compact.Thresholds{L1: 0.05, L2: 0.05, L3: 1},
		KeepToolRounds:      goldenKeepRounds,
		ProtectLastMessages: 2,
		Compressor:          compact.CompressorOptions{MaxChars: 1200, LargeChars: 2400, SnapshotHead: 600, SnapshotTail: 300},
		Limits:              compact.NewLimits(nil, 8000),
	}
}

// TestShapeGolden runs each testdata/shapes/<protocol>/*.input.json, a client
// conversation in that protocol, through the proxy's round trip (into
// Messages, the pipeline, back into the protocol) and compares the request
// the upstream would get with *.golden.json. The golden run through again
// must give itself back.
func TestShapeGolden(t *testing.T) {
	for _, s := range clientShapes() {
		inputs, err := filepath.Glob(filepath.Join("testdata", "shapes", s.name, "*.input.json"))
		if err != nil || len(inputs) == 0 {
			t.Fatalf("no inputs in testdata/shapes/%s (%v)", s.name, err)
		}
		for _, in := range inputs {
			t.Run(s.name+"/"+strings.TrimSuffix(filepath.Base(in), ".input.json"), func(t *testing.T) {
				body, err := os.ReadFile(in)
				if err != nil {
					t.Fatal(err)
				}
				once, res, err := compactClient(s, goldenShapeOptions(), body)
				if err != nil {
					t.Fatal(err)
				}
				checkLayersFired(t, s, body, res)
				twice, _, err := compactClient(s, goldenShapeOptions(), once)
				if err != nil {
					t.Fatalf("second pass: %v", err)
				}
				if c1, c2 := canonicalJSON(once), canonicalJSON(twice); c1 != c2 {
					t.Errorf("applied twice differs from once (not idempotent):\nonce:  %.2000s\ntwice: %.2000s", c1, c2)
				}
				checkShapeOutput(t, s, body, once, goldenKeepRounds)

				golden := strings.TrimSuffix(in, ".input.json") + ".golden.json"
				if updateGolden() {
					var buf bytes.Buffer
					if err := json.Indent(&buf, once, "", " "); err != nil {
						t.Fatal(err)
					}
					buf.WriteByte('\n')
					if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatalf("%v (run go test -update)", err)
				}
				if canonicalJSON(once) != canonicalJSON(want) {
					t.Errorf("output differs from %s (run go test -update and review the diff)", golden)
				}
			})
		}
	}
}

// checkLayersFired asserts the golden run exercised what it is for: the
// compressor, Layer 1, Layer 2 when the conversation carries thinking, and
// not Layer 3.
func checkLayersFired(t *testing.T, s clientShape, body []byte, res compact.Result) {
	t.Helper()
	fired := map[compact.Layer]int{}
	for _, st := range res.Stats {
		fired[st.Layer] += st.Items
	}
	messages, err := s.toMessages(body)
	if err != nil {
		t.Fatal(err)
	}
	want := []compact.Layer{compact.LayerToolResults, compact.Layer1Trim}
	if hasThinking(t, messages) {
		want = append(want, compact.Layer2Thinking)
	}
	for _, l := range want {
		if fired[l] == 0 {
			t.Errorf("%s did not fire (stats %+v)", l, res.Stats)
		}
	}
	if fired[compact.Layer3Summary] > 0 {
		t.Errorf("Layer 3 fired; the golden options must keep it out")
	}
	t.Logf("%s: tokens %d -> %d of %d; stats %+v", s.name, res.Before.Calibrated, res.After.Calibrated, res.Limit, fired)
}

func hasThinking(t testing.TB, messages []byte) bool {
	t.Helper()
	r, err := anthropic.ParseRequest(messages)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range r.Messages {
		for _, b := range m.Blocks {
			if b.Type == "thinking" {
				return true
			}
		}
	}
	return false
}

// checkShapeOutput checks out, the compacted form of the client request in:
// nothing its upstream would refuse, exactly keep tool rounds left (when in
// had more), those being in's newest rounds as they were, and every
// signature and encrypted reasoning the input's, in its place.
func checkShapeOutput(t *testing.T, s clientShape, in, out []byte, keep int) {
	t.Helper()
	ic, oc := s.conversation(in), s.conversation(out)
	if len(ic.Problems) > 0 {
		t.Fatalf("the input itself is not valid: %q", ic.Problems)
	}
	for _, p := range oc.Problems {
		t.Errorf("output: %s", p)
	}
	if want := min(keep, len(ic.Rounds)); len(oc.Rounds) != want {
		t.Errorf("%d tool rounds kept of %d; want %d", len(oc.Rounds), len(ic.Rounds), want)
	}
	for _, p := range keptRoundProblems(ic.Rounds, oc.Rounds) {
		t.Error(p)
	}
	for _, p := range opaqueProblems(ic.Opaque, oc.Opaque) {
		t.Error(p)
	}
}
