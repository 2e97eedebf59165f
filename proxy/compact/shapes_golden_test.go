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
	"longhaul/proxy/gemini"
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
// fire, and never Layer 3: L1 and L2 at 2% of an 8,000-token window, L3 at
// all of it, which no input reaches once its huge tool result is compressed.
// Small compressor limits keep the golden files readable.
func goldenShapeOptions() compact.Options {
	return compact.Options{
		Thresholds:          compact.Thresholds{L1: 0.02, L2: 0.02, L3: 1},
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
				if c1, c2 := s.canonicalOf(once), s.canonicalOf(twice); c1 != c2 {
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

// TestShapeChecksCatch makes sure the checks the goldens and fuzz targets
// rely on see what an upstream would refuse.
func TestShapeChecksCatch(t *testing.T) {
	shapes := map[string]clientShape{}
	for _, s := range clientShapes() {
		shapes[s.name] = s
	}
	tests := []struct {
		name, shape, body string
	}{
		{"chat tool call unanswered", "chat", `{"model":"m","messages":[{"role":"user","content":"a"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}},{"id":"c2","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"x"}]}`},
		{"chat tool message without its call", "chat", `{"model":"m","messages":[{"role":"user","content":"a"},{"role":"tool","tool_call_id":"c1","content":"x"}]}`},
		{"chat opens with the assistant", "chat", `{"model":"m","messages":[{"role":"system","content":"s"},{"role":"assistant","content":"a"},{"role":"user","content":"b"}]}`},
		{"chat unknown role", "chat", `{"model":"m","messages":[{"role":"user","content":"a"},{"role":"function","content":"b"}]}`},
		{"responses call without output", "responses", `{"model":"m","input":[{"role":"user","content":"a"},{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"}]}`},
		{"responses output without call", "responses", `{"model":"m","input":[{"role":"user","content":"a"},{"type":"function_call_output","call_id":"c1","output":"x"}]}`},
		{"responses reasoning without its following item", "responses", `{"model":"m","input":[{"role":"user","content":"a"},{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"e"},{"role":"user","content":"b"}]}`},
		{"gemini call unanswered", "gemini", `{"contents":[{"role":"user","parts":[{"text":"a"}]},{"role":"model","parts":[{"functionCall":{"id":"c1","name":"f","args":{}}}]},{"role":"user","parts":[{"text":"b"}]}]}`},
		{"gemini two user turns", "gemini", `{"contents":[{"role":"user","parts":[{"text":"a"}]},{"role":"user","parts":[{"text":"b"}]}]}`},
		{"gemini response to no call", "gemini", `{"contents":[{"role":"user","parts":[{"text":"a"}]},{"role":"model","parts":[{"text":"b"}]},{"role":"user","parts":[{"functionResponse":{"id":"c9","name":"f","response":{}}}]}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if c := shapes[tt.shape].conversation([]byte(tt.body)); len(c.Problems) == 0 {
				t.Errorf("%s conversation(%s) found no problem", tt.shape, tt.body)
			}
		})
	}
	t.Run("signature altered or foreign", func(t *testing.T) {
		in := map[string]string{"call c1": "sig-1", "call c2": "", "text hi": "sig-t"}
		for _, out := range []map[string]string{
			{"call c1": "sig-2"},
			{"call c1": ""},
			{"call c3": "sig-3"},
			{"text hi": gemini.SkipSignatureValidator},
		} {
			if len(opaqueProblems(in, out)) == 0 {
				t.Errorf("opaqueProblems(%v, %v) found no problem", in, out)
			}
		}
		if p := opaqueProblems(in, map[string]string{"call c1": "sig-1", "call c2": gemini.SkipSignatureValidator}); len(p) > 0 {
			t.Errorf("a kept signature and the documented skip value: %q", p)
		}
	})
	t.Run("kept round changed", func(t *testing.T) {
		in := []shapeRound{
			{Calls: []shapeCall{{ID: "c1", Name: "f", Args: "{}"}}, Results: map[string]string{"c1": "old"}},
			{Calls: []shapeCall{{ID: "c2", Name: "f", Args: `{"a":1}`}}, Results: map[string]string{"c2": strings.Repeat("x", 500)}},
		}
		for _, out := range [][]shapeRound{
			{{Calls: []shapeCall{{ID: "c2", Name: "f", Args: `{"a":2}`}}, Results: map[string]string{"c2": in[1].Results["c2"]}}},
			{{Calls: in[1].Calls, Results: map[string]string{"c2": "x"}}},
			{in[0]},
		} {
			if len(keptRoundProblems(in, out)) == 0 {
				t.Errorf("keptRoundProblems(%v, %v) found no problem", in, out)
			}
		}
		ok := []shapeRound{{Calls: in[1].Calls, Results: map[string]string{"c2": "xxx\n...[truncated 497 chars]"}}}
		if p := keptRoundProblems(in, ok); len(p) > 0 {
			t.Errorf("a compressed result of the last round: %q", p)
		}
	})
}
