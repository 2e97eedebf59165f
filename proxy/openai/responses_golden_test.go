package openai

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"longhaul/proxy/sse"
)

var updateResponses = flag.Bool("update", false, "rewrite the golden files of testdata/responses")

// responsesFixedNow stamps created_at in golden outputs.
func responsesFixedNow() time.Time { return time.Unix(1763900000, 0) }

func responsesGoldenReplyOptions() ResponsesReplyOptions {
	return ResponsesReplyOptions{Now: responsesFixedNow}
}

// canonicalJSON decodes raw so two encodings of the same value compare equal.
func canonicalJSON(tb testing.TB, raw []byte) any {
	tb.Helper()
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		tb.Fatalf("not JSON: %v\n%s", err, raw)
	}
	return v
}

func indentJSON(tb testing.TB, raw []byte) []byte {
	tb.Helper()
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		tb.Fatalf("indent: %v\n%s", err, raw)
	}
	return append(buf.Bytes(), '\n')
}

// readSSE splits an SSE file or stream into its events.
func readSSE(tb testing.TB, raw []byte) []sse.Event {
	tb.Helper()
	r := sse.NewReader(bytes.NewReader(raw), 1<<20)
	var out []sse.Event
	for {
		ev, err := r.Next()
		if err != nil {
			return out
		}
		out = append(out, ev)
	}
}

func compareGolden(t *testing.T, golden string, got []byte, sseFile bool) {
	t.Helper()
	if *updateResponses {
		if !sseFile {
			got = indentJSON(t, got)
		}
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !sseFile {
		if !reflect.DeepEqual(canonicalJSON(t, got), canonicalJSON(t, want)) {
			t.Errorf("%s differs:\n%s", golden, indentJSON(t, got))
		}
		return
	}
	ge, we := readSSE(t, got), readSSE(t, want)
	if len(ge) != len(we) {
		t.Fatalf("%s: %d events; want %d\n%s", golden, len(ge), len(we), got)
	}
	for i := range ge {
		if ge[i].Name != we[i].Name || !reflect.DeepEqual(canonicalJSON(t, ge[i].Data), canonicalJSON(t, we[i].Data)) {
			t.Errorf("%s event %d = %s %s; want %s %s", golden, i, ge[i].Name, ge[i].Data, we[i].Name, we[i].Data)
		}
	}
}

func eachGoldenInput(t *testing.T, dir, ext string, fn func(t *testing.T, name string, input []byte) []byte) {
	files, err := filepath.Glob(filepath.Join("testdata", "responses", dir, "*.input."+ext))
	if err != nil || len(files) == 0 {
		t.Fatalf("no inputs in %s: %v", dir, err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".input."+ext)
		t.Run(dir+"/"+name, func(t *testing.T) {
			input, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			got := fn(t, name, input)
			compareGolden(t, strings.TrimSuffix(f, ".input."+ext)+".golden."+ext, got, ext == "sse")
			// Deterministic: the same input gives the same bytes.
			if again := fn(t, name, input); !bytes.Equal(again, got) {
				t.Errorf("second translation differs:\n%s\n%s", got, again)
			}
		})
	}
}

func TestResponsesGolden(t *testing.T) {
	eachGoldenInput(t, "request_to_anthropic", "json", func(t *testing.T, name string, in []byte) []byte {
		out, err := ResponsesRequestToAnthropic(in, ResponsesRequestOptions{ForResponses: strings.HasPrefix(name, "for_responses")})
		if err != nil {
			t.Fatal(err)
		}
		return out
	})
	eachGoldenInput(t, "request_from_anthropic", "json", func(t *testing.T, _ string, in []byte) []byte {
		out, err := ResponsesRequestFromAnthropic(in, ResponsesRequestOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return out
	})
	eachGoldenInput(t, "reply_to_anthropic", "json", func(t *testing.T, _ string, in []byte) []byte {
		out, err := ResponsesReplyToAnthropic(in, responsesGoldenReplyOptions())
		if err != nil {
			t.Fatal(err)
		}
		return out
	})
	eachGoldenInput(t, "reply_from_anthropic", "json", func(t *testing.T, _ string, in []byte) []byte {
		out, err := ResponsesReplyFromAnthropic(in, responsesGoldenReplyOptions())
		if err != nil {
			t.Fatal(err)
		}
		return out
	})
	eachGoldenInput(t, "stream_to_anthropic", "sse", func(t *testing.T, _ string, in []byte) []byte {
		return runStreamToAnthropic(t, in, responsesGoldenReplyOptions())
	})
	eachGoldenInput(t, "stream_from_anthropic", "sse", func(t *testing.T, _ string, in []byte) []byte {
		return runStreamFromAnthropic(t, in, responsesGoldenReplyOptions())
	})
}

func runStreamToAnthropic(tb testing.TB, in []byte, opts ResponsesReplyOptions) []byte {
	tb.Helper()
	s := NewResponsesStreamToAnthropic(opts)
	var out []byte
	emit := func(name string, data []byte) error {
		if !json.Valid(data) {
			tb.Fatalf("event %s: data is not JSON: %s", name, data)
		}
		out = sse.AppendEvent(out, name, data)
		return nil
	}
	for _, ev := range readSSE(tb, in) {
		if err := s.Event(ev.Name, ev.Data, emit); err != nil {
			tb.Fatal(err)
		}
	}
	if err := s.End(emit); err != nil {
		tb.Fatal(err)
	}
	return out
}

func runStreamFromAnthropic(tb testing.TB, in []byte, opts ResponsesReplyOptions) []byte {
	tb.Helper()
	s := NewResponsesStreamFromAnthropic(opts)
	var out []byte
	write := func(frame []byte) error {
		out = append(out, frame...)
		return nil
	}
	for _, ev := range readSSE(tb, in) {
		if err := s.Event(ev.Name, ev.Data, write); err != nil {
			tb.Fatal(err)
		}
	}
	if err := s.End(write); err != nil {
		tb.Fatal(err)
	}
	return out
}
