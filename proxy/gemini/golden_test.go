package gemini_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"longhaul/proxy/gemini"
	"longhaul/proxy/sse"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// canonical decodes JSON for a comparison that ignores formatting.
func canonical(tb testing.TB, b []byte) any {
	tb.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		tb.Fatalf("invalid JSON: %v\n%s", err, b)
	}
	return v
}

// checkGolden compares got with testdata/name (canonical JSON), or writes it
// with -update.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		var buf bytes.Buffer
		if err := json.Indent(&buf, got, "", "  "); err != nil {
			t.Fatalf("%s: %v\n%s", name, err, got)
		}
		buf.WriteByte('\n')
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !reflect.DeepEqual(canonical(t, got), canonical(t, want)) {
		t.Errorf("%s differs from the golden file:\n got %s", name, got)
	}
}

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// withSignatures bundles a translation's output with the signatures it
// reported, so the golden file shows both.
func withSignatures(t *testing.T, body []byte, sigs map[string]string) []byte {
	t.Helper()
	out, err := json.Marshal(map[string]any{"body": json.RawMessage(body), "signatures": sigs})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestGoldenRequests(t *testing.T) {
	for _, name := range []string{"request_tools", "request_structured"} {
		t.Run(name+" to Messages", func(t *testing.T) {
			sigs := map[string]string{}
			out, err := gemini.RequestToAnthropic(readTestdata(t, name+".gemini.json"), gemini.RequestOptions{
				Model: "gemini-2.5-pro", Stream: true, OnSignature: func(k, s string) { sigs[k] = s }})
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, name+".to_anthropic.golden.json", withSignatures(t, out, sigs))
		})
	}
	t.Run("claude code request to Gemini", func(t *testing.T) {
		out, err := gemini.RequestFromAnthropic(readTestdata(t, "request_claude_code.anthropic.json"), gemini.RequestOptions{
			Signature: func(key string) (string, bool) {
				if key == "toolu_01A" {
					return "Z2VtaW5pLXNpZw==", true
				}
				return "", false
			}})
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(out, []byte("EqQBCkYIBxgCKkDclaudesignature")) || bytes.Contains(out, []byte("I should run go test")) {
			t.Errorf("an Anthropic thinking block or signature reached the Gemini request:\n%s", out)
		}
		checkGolden(t, "request_claude_code.to_gemini.golden.json", out)
	})
}

func TestGoldenReplies(t *testing.T) {
	t.Run("Gemini reply to Messages", func(t *testing.T) {
		sigs := map[string]string{}
		out, err := gemini.ReplyToAnthropic(readTestdata(t, "reply_calls.gemini.json"), gemini.ReplyOptions{OnSignature: func(k, s string) { sigs[k] = s }})
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(out, []byte("Z2VtLXNpZy0x")) {
			t.Errorf("a Gemini signature reached the Messages reply: %s", out)
		}
		checkGolden(t, "reply_calls.to_anthropic.golden.json", withSignatures(t, out, sigs))
	})
	for _, thoughts := range []bool{false, true} {
		name := "reply_text.to_gemini.golden.json"
		if thoughts {
			name = "reply_text.to_gemini_thoughts.golden.json"
		}
		t.Run(name, func(t *testing.T) {
			out, err := gemini.ReplyFromAnthropic(readTestdata(t, "reply_text.anthropic.json"), gemini.ReplyOptions{IncludeThoughts: thoughts})
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(out, []byte("EqClaudeSig")) {
				t.Errorf("an Anthropic signature reached the Gemini reply: %s", out)
			}
			checkGolden(t, name, out)
		})
	}
}

type namedEvent struct {
	Event string          `json:"event"`
	Data  json.RawMessage `json:"data"`
}

func TestGoldenStreams(t *testing.T) {
	t.Run("Gemini stream to Messages events", func(t *testing.T) {
		sigs := map[string]string{}
		tr := gemini.NewStreamToAnthropic(gemini.ReplyOptions{OnSignature: func(k, s string) { sigs[k] = s }})
		var events []namedEvent
		emit := func(name string, data []byte) error {
			events = append(events, namedEvent{name, append([]byte(nil), data...)})
			return nil
		}
		sc := bufio.NewScanner(bytes.NewReader(readTestdata(t, "stream_calls.gemini.jsonl")))
		for sc.Scan() {
			if err := tr.Event("", sc.Bytes(), emit); err != nil {
				t.Fatal(err)
			}
		}
		if err := tr.End(emit); err != nil {
			t.Fatal(err)
		}
		out, _ := json.Marshal(events)
		checkGolden(t, "stream_calls.to_anthropic.golden.json", withSignatures(t, out, sigs))
	})
	for _, form := range []string{"sse", "array"} {
		t.Run("Messages events to Gemini "+form, func(t *testing.T) {
			tr := gemini.NewStreamFromAnthropic(gemini.ReplyOptions{SSE: form == "sse", IncludeThoughts: true})
			var frames bytes.Buffer
			write := func(f []byte) error { frames.Write(f); return nil }
			rd := sse.NewReader(bytes.NewReader(readTestdata(t, "stream_text.anthropic.sse")), 0)
			for {
				ev, err := rd.Next()
				if err != nil {
					break
				}
				if err := tr.Event(ev.Name, ev.Data, write); err != nil {
					t.Fatal(err)
				}
			}
			if err := tr.End(write); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(frames.String(), "EqClaudeSecret") {
				t.Errorf("an Anthropic signature reached the Gemini stream")
			}
			var chunks []json.RawMessage
			if form == "array" {
				if err := json.Unmarshal(frames.Bytes(), &chunks); err != nil {
					t.Fatalf("the array stream is not one JSON array: %v\n%s", err, frames.Bytes())
				}
			} else {
				for _, line := range strings.Split(frames.String(), "\r\n\r\n") {
					if line == "" {
						continue
					}
					data, ok := strings.CutPrefix(line, "data: ")
					if !ok {
						t.Fatalf("frame %q is not a data line", line)
					}
					chunks = append(chunks, json.RawMessage(data))
				}
			}
			out, _ := json.Marshal(chunks)
			checkGolden(t, "stream_text.to_gemini.golden.json", out) // both forms carry the same chunks
		})
	}
}
