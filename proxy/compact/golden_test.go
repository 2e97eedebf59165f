package compact

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"longhaul/proxy/anthropic"
)

var update = flag.Bool("update", false, "rewrite testdata/*/*.golden.json")

// goldenLayers maps a testdata directory to the step it exercises. Each runs
// with no session (no remembered state) and as if always over its threshold.
// The compressor uses small limits so the golden files stay readable; the
// defaults are covered by unit tests.
var goldenLayers = map[string]func(t *testing.T, r *anthropic.Request){
	"toolresults": func(t *testing.T, r *anthropic.Request) {
		NewCompressor(CompressorOptions{MaxChars: 300, LargeChars: 400, SnapshotHead: 120, SnapshotTail: 60}).Apply(r)
	},
	"layer1": func(t *testing.T, r *anthropic.Request) { NewLayer1(3, 0).Apply(r, "", nil) },
	"layer2": func(t *testing.T, r *anthropic.Request) { ElideThinking(r, 4) },
	"purify": func(t *testing.T, r *anthropic.Request) { Purify(r) },
	"dedupe": func(t *testing.T, r *anthropic.Request) { FoldDuplicateResults(r, DedupeOptions{MinChars: 200}) },
	"layer3": func(t *testing.T, r *anthropic.Request) {
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

func firstUserText(ms []anthropic.Message) string {
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

func runStep(t *testing.T, apply func(*testing.T, *anthropic.Request), body []byte) []byte {
	t.Helper()
	r, err := anthropic.ParseRequest(body)
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

// checkValid asserts what the upstream validates and what must survive (see
// validate).
func checkValid(t testing.TB, in, out []byte) {
	t.Helper()
	for _, p := range validate(in, out) {
		t.Error(p)
	}
}

// validate checks out, the result of a step applied to the valid request in:
// everything validateKept checks, plus what the upstream validates — first
// message user; roles user, assistant or system; user and assistant
// alternating (system messages aside) wherever the input did; no empty
// content, no empty or blank text; every tool_use answered in the very next
// message, which is a user message whose tool_result blocks come first and
// answer only the tool_use blocks of the message before it; and a tool loop's
// last assistant turn still starting with its thinking block.
func validate(in, out []byte) []string {
	probs := validateKept(in, out)
	r, err := anthropic.ParseRequest(out)
	if err != nil {
		return probs
	}
	orig, err := anthropic.ParseRequest(in)
	if err != nil {
		return probs
	}
	probs = append(probs, shapeProblems(r.Messages)...)
	if len(alternation(orig.Messages)) == 0 {
		probs = append(probs, alternation(r.Messages)...)
	}
	if loopStartsWithThinking(orig.Messages) && anyThinking(r.Messages) && !loopStartsWithThinking(r.Messages) {
		probs = append(probs, "the tool loop's last assistant turn lost its leading thinking block")
	}
	return probs
}

// validateKept checks what must hold whatever the input: out is JSON that
// parses; its members other than messages are the input's, byte for byte and
// in order; every thinking signature and redacted_thinking payload in it is
// one of the input's, byte for byte; server tool and unknown blocks are the
// input's; and there are no more cache_control breakpoints than before.
func validateKept(in, out []byte) []string {
	var probs []string
	if !json.Valid(out) {
		return []string{"output is not valid JSON"}
	}
	r, err := anthropic.ParseRequest(out)
	if err != nil {
		return []string{"output does not parse: " + err.Error()}
	}
	orig, err := anthropic.ParseRequest(in)
	if err != nil {
		return []string{"input does not parse: " + err.Error()}
	}
	var im, om []string
	for _, m := range orig.Members() {
		im = append(im, string(m.Key)+":"+string(m.Value))
	}
	for _, m := range r.Members() {
		om = append(om, string(m.Key)+":"+string(m.Value))
	}
	if strings.Join(im, ",") != strings.Join(om, ",") {
		probs = append(probs, "top-level members other than messages changed")
	}
	opaque := map[string]bool{} // signatures, redacted data, server and unknown blocks
	for _, m := range orig.Messages {
		for _, b := range m.Blocks {
			for _, k := range opaqueParts(b) {
				opaque[k] = true
			}
		}
	}
	for i, m := range r.Messages {
		for _, b := range m.Blocks {
			for _, k := range opaqueParts(b) {
				if !opaque[k] {
					probs = append(probs, fmt.Sprintf("message %d: %.120s is not the input's", i, k))
				}
			}
		}
	}
	if a, b := bytes.Count(in, []byte(`"cache_control"`)), bytes.Count(out, []byte(`"cache_control"`)); b > a {
		probs = append(probs, fmt.Sprintf("cache_control breakpoints %d -> %d", a, b))
	}
	return probs
}

// opaqueParts are the parts of a block a step must never alter.
func opaqueParts(b anthropic.Block) []string {
	switch b.Type {
	case "thinking":
		if s := b.RawSignature(); s != nil {
			return []string{"signature " + string(s)}
		}
	case "redacted_thinking":
		return []string{"redacted_thinking " + string(b.RawData())}
	case "text", "image", "document", "tool_use", "tool_result":
	default:
		return []string{string(b.Raw())}
	}
	return nil
}

// shapeProblems lists what the upstream would reject in msgs, roles apart.
func shapeProblems(ms []anthropic.Message) []string {
	var probs []string
	if len(ms) == 0 {
		return []string{"no messages"}
	}
	if ms[0].Role != "user" {
		probs = append(probs, "first message is "+ms[0].Role)
	}
	blank := func(s string) bool { return strings.TrimSpace(s) == "" }
	for i := range ms {
		m := &ms[i]
		switch m.Role {
		case "user", "assistant", "system":
		default:
			probs = append(probs, fmt.Sprintf("message %d has role %q", i, m.Role))
		}
		if m.IsString && blank(m.Text()) || !m.IsString && len(m.Blocks) == 0 {
			probs = append(probs, fmt.Sprintf("message %d is empty", i))
		}
		afterOther := false
		for _, b := range m.Blocks {
			switch b.Type {
			case "text":
				if blank(b.Text()) {
					probs = append(probs, fmt.Sprintf("message %d has a blank text block", i))
				}
			case "tool_result":
				if afterOther {
					probs = append(probs, fmt.Sprintf("message %d: tool_result after other content", i))
				}
				if inner, isString, err := b.ContentBlocks(); err == nil && !isString {
					for _, ib := range inner {
						if ib.Type == "text" && blank(ib.Text()) {
							probs = append(probs, fmt.Sprintf("message %d: blank text in tool_result %s", i, b.ToolUseID()))
						}
					}
				}
			}
			if b.Type != "tool_result" {
				afterOther = true
			}
		}
		uses := toolUses(m)
		if m.Role == "assistant" && len(uses) > 0 {
			if i+1 == len(ms) || ms[i+1].Role != "user" {
				probs = append(probs, fmt.Sprintf("message %d: tool_use not followed by a user message", i))
			} else {
				answered := map[string]bool{}
				for _, b := range ms[i+1].Blocks {
					if b.Type == "tool_result" {
						answered[b.ToolUseID()] = true
					}
				}
				for id := range uses {
					if !answered[id] {
						probs = append(probs, fmt.Sprintf("message %d: tool_use %s unanswered in the next message", i, id))
					}
				}
			}
		}
		if m.Role == "user" {
			var prev map[string]bool
			if i > 0 && ms[i-1].Role == "assistant" {
				prev = toolUses(&ms[i-1])
			}
			seen := map[string]bool{}
			for _, b := range m.Blocks {
				if b.Type != "tool_result" {
					continue
				}
				id := b.ToolUseID()
				if !prev[id] {
					probs = append(probs, fmt.Sprintf("message %d: tool_result %s without its tool_use in the message before", i, id))
				}
				if seen[id] {
					probs = append(probs, fmt.Sprintf("message %d: tool_result %s twice", i, id))
				}
				seen[id] = true
			}
		}
	}
	return probs
}

func toolUses(m *anthropic.Message) map[string]bool {
	ids := map[string]bool{}
	for _, b := range m.Blocks {
		if b.Type == "tool_use" {
			ids[b.ID()] = true
		}
	}
	return ids
}

// alternation lists user/user and assistant/assistant neighbours, system
// messages aside.
func alternation(ms []anthropic.Message) []string {
	var probs []string
	prev := ""
	for i := range ms {
		role := ms[i].Role
		if role == "system" {
			continue
		}
		if role == prev {
			probs = append(probs, fmt.Sprintf("message %d: two %s messages in a row", i, role))
		}
		prev = role
	}
	return probs
}

// loopStartsWithThinking reports whether ms ends in a tool loop (the last
// user message carries tool results) whose assistant turn opens with a
// thinking block.
func loopStartsWithThinking(ms []anthropic.Message) bool {
	for i := len(ms) - 1; i > 0; i-- {
		if ms[i].Role != "user" {
			continue
		}
		if !hasToolResult(&ms[i]) || ms[i-1].Role != "assistant" || len(ms[i-1].Blocks) == 0 {
			return false
		}
		t := ms[i-1].Blocks[0].Type
		return t == "thinking" || t == "redacted_thinking"
	}
	return false
}

func anyThinking(ms []anthropic.Message) bool {
	for i := range ms {
		for _, b := range ms[i].Blocks {
			if b.Type == "thinking" || b.Type == "redacted_thinking" {
				return true
			}
		}
	}
	return false
}
