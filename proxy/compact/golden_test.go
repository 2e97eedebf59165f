package compact

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/*/*.golden.json")

// goldenLayers maps a testdata directory to the step it exercises. Each runs
// with no session (no remembered state) and as if always over its threshold.
// The compressor uses small limits so the golden files stay readable; the
// SPEC defaults are covered by unit tests.
var goldenLayers = map[string]func(t *testing.T, r *Request){
	"toolresults": func(t *testing.T, r *Request) {
		NewCompressor(CompressorOptions{MaxChars: 300, LargeChars: 400, SnapshotHead: 120, SnapshotTail: 60}).Apply(r)
	},
	"layer1": func(t *testing.T, r *Request) { NewLayer1(3, 0).Apply(r, "", nil) },
	"layer2": func(t *testing.T, r *Request) { ElideThinking(r, 4) },
	"purify": func(t *testing.T, r *Request) { Purify(r) },
	"layer3": func(t *testing.T, r *Request) {
		if _, err := NewLayer3(fixedSummary{}, 0).Apply(context.Background(), r, "", nil); err != nil {
			t.Fatalf("Layer3.Apply: %v", err)
		}
	},
}

type fixedSummary struct{}

func (fixedSummary) Summarize(_ context.Context, h History) (string, error) {
	return "<conversation_summary><primary_request_and_intent>" + firstUserText(h.Messages) +
		"</primary_request_and_intent><current_work>summarised " + itoa(len(h.Messages)) +
		" messages</current_work></conversation_summary>", nil
}

func firstUserText(ms []Message) string {
	for i := range ms {
		if ms[i].Role == "user" {
			return ms[i].Text()
		}
	}
	return ""
}

func itoa(n int) string { return strings.TrimSpace(string(must(json.Marshal(n)))) }

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestGolden(t *testing.T) {
	for dir, apply := range goldenLayers {
		inputs, err := filepath.Glob(filepath.Join("testdata", dir, "*.input.json"))
		if err != nil || len(inputs) == 0 {
			t.Fatalf("no inputs in testdata/%s (%v)", dir, err)
		}
		for _, in := range inputs {
			name := dir + "/" + strings.TrimSuffix(filepath.Base(in), ".input.json")
			t.Run(name, func(t *testing.T) {
				body, err := os.ReadFile(in)
				if err != nil {
					t.Fatal(err)
				}
				once := runStep(t, apply, body)
				twice := runStep(t, apply, once)
				if !bytes.Equal(canonical(t, once), canonical(t, twice)) {
					t.Errorf("%s applied twice differs from once (not idempotent)", dir)
				}
				checkValid(t, body, once)
				golden := strings.TrimSuffix(in, ".input.json") + ".golden.json"
				if *update {
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
				if !bytes.Equal(canonical(t, once), canonical(t, want)) {
					t.Errorf("output differs from %s (run go test -update and review the diff)", golden)
				}
			})
		}
	}
}

func runStep(t *testing.T, apply func(*testing.T, *Request), body []byte) []byte {
	t.Helper()
	r, err := ParseRequest(body)
	if err != nil {
		t.Fatalf("ParseRequest: %v", err)
	}
	apply(t, r)
	out := r.Encode()
	if !json.Valid(out) {
		t.Fatalf("Encode produced invalid JSON:\n%s", out)
	}
	return out
}

// canonical re-encodes JSON with sorted keys and no insignificant space.
func canonical(t testing.TB, b []byte) []byte {
	t.Helper()
	var v any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		t.Fatalf("canonical: %v", err)
	}
	return must(json.Marshal(v))
}

// checkValid asserts what the upstream validates and what must survive:
// first message user, no empty content, every tool_result answered by a
// tool_use in the previous assistant message and vice versa, and every
// signature in the output present in the input.
func checkValid(t testing.TB, in, out []byte) {
	t.Helper()
	for _, p := range validate(in, out) {
		t.Error(p)
	}
}

func validate(in, out []byte) []string {
	var probs []string
	r, err := ParseRequest(out)
	if err != nil {
		return []string{"output does not parse: " + err.Error()}
	}
	orig, err := ParseRequest(in)
	if err != nil {
		return []string{"input does not parse: " + err.Error()}
	}
	sigs := map[string]bool{}
	for _, m := range orig.Messages {
		for _, b := range m.Blocks {
			if s := b.Signature(); s != "" {
				sigs[s] = true
			}
		}
	}
	ms := r.Messages
	if len(ms) == 0 {
		return []string{"no messages"}
	}
	if ms[0].Role != "user" {
		probs = append(probs, "first message is "+ms[0].Role)
	}
	pending := map[string]bool{} // tool_use ids awaiting results
	for i, m := range ms {
		if m.IsString && m.Text() == "" || !m.IsString && len(m.Blocks) == 0 {
			probs = append(probs, "empty message at "+itoa(i))
		}
		switch m.Role {
		case "assistant":
			if len(pending) > 0 {
				probs = append(probs, "unanswered tool_use before message "+itoa(i))
			}
			pending = map[string]bool{}
			for _, b := range m.Blocks {
				if b.Type == "tool_use" {
					pending[b.ID()] = true
				}
				if s := b.Signature(); s != "" && !sigs[s] {
					probs = append(probs, "signature not from the input at "+itoa(i))
				}
			}
		case "user":
			for _, b := range m.Blocks {
				if b.Type == "tool_result" {
					if !pending[b.ToolUseID()] {
						probs = append(probs, "tool_result "+b.ToolUseID()+" without its tool_use at "+itoa(i))
					}
					delete(pending, b.ToolUseID())
				}
			}
		}
	}
	return probs
}
