package openai

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"longhaul/proxy/sse"
)

// Golden files of the Chat Completions translation: testdata/chat/<dir>/
// *.input.json → *.golden.json (streams as .sse), regenerated with -update
// (the flag responses_golden_test.go defines), compared in canonical JSON
// form. Each input is translated twice: the same bytes both times.

func chatGoldenReplyOptions() ChatReplyOptions {
	return ChatReplyOptions{Now: responsesFixedNow}
}

func eachChatGoldenInput(t *testing.T, dir, ext string, fn func(t *testing.T, name string, input []byte) []byte) {
	files, err := filepath.Glob(filepath.Join("testdata", "chat", dir, "*.input."+ext))
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
			golden := strings.TrimSuffix(f, ".input."+ext) + ".golden." + ext
			if ext == "sse" {
				compareChatSSEGolden(t, golden, got)
			} else {
				compareGolden(t, golden, got, false)
			}
			if again := fn(t, name, input); !bytes.Equal(again, got) {
				t.Errorf("second translation differs:\n%s\n%s", got, again)
			}
		})
	}
}

// compareChatSSEGolden compares streams event by event, data in canonical
// JSON form, except Chat's "[DONE]", which is compared as it is.
func compareChatSSEGolden(t *testing.T, golden string, got []byte) {
	t.Helper()
	if *updateResponses {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	ge, we := readSSE(t, got), readSSE(t, want)
	if len(ge) != len(we) {
		t.Fatalf("%s: %d events; want %d\n%s", golden, len(ge), len(we), got)
	}
	for i := range ge {
		same := ge[i].Name == we[i].Name
		if json.Valid(we[i].Data) {
			same = same && json.Valid(ge[i].Data) && reflect.DeepEqual(canonicalJSON(t, ge[i].Data), canonicalJSON(t, we[i].Data))
		} else {
			same = same && bytes.Equal(ge[i].Data, we[i].Data)
		}
		if !same {
			t.Errorf("%s event %d = %s %s; want %s %s", golden, i, ge[i].Name, ge[i].Data, we[i].Name, we[i].Data)
		}
	}
}

func TestChatGolden(t *testing.T) {
	eachChatGoldenInput(t, "request_to_anthropic", "json", func(t *testing.T, name string, in []byte) []byte {
		out, err := ChatRequestToAnthropic(in, ChatRequestOptions{ForChat: strings.HasPrefix(name, "for_chat")})
		if err != nil {
			t.Fatal(err)
		}
		return out
	})
	eachChatGoldenInput(t, "request_from_anthropic", "json", func(t *testing.T, name string, in []byte) []byte {
		out, err := ChatRequestFromAnthropic(in, ChatRequestOptions{LegacyMaxTokens: strings.Contains(name, "legacy")})
		if err != nil {
			t.Fatal(err)
		}
		return out
	})
	eachChatGoldenInput(t, "reply_to_anthropic", "json", func(t *testing.T, _ string, in []byte) []byte {
		out, err := ChatReplyToAnthropic(in, chatGoldenReplyOptions())
		if err != nil {
			t.Fatal(err)
		}
		return out
	})
	eachChatGoldenInput(t, "reply_from_anthropic", "json", func(t *testing.T, _ string, in []byte) []byte {
		out, err := ChatReplyFromAnthropic(in, chatGoldenReplyOptions())
		if err != nil {
			t.Fatal(err)
		}
		return out
	})
	eachChatGoldenInput(t, "stream_to_anthropic", "sse", func(t *testing.T, _ string, in []byte) []byte {
		return runChatStreamToAnthropic(t, in, chatGoldenReplyOptions())
	})
	eachChatGoldenInput(t, "stream_from_anthropic", "sse", func(t *testing.T, name string, in []byte) []byte {
		opts := chatGoldenReplyOptions()
		opts.IncludeUsage = strings.Contains(name, "usage")
		return runChatStreamFromAnthropic(t, in, opts)
	})
}

func runChatStreamToAnthropic(tb testing.TB, in []byte, opts ChatReplyOptions) []byte {
	tb.Helper()
	s := NewChatStreamToAnthropic(opts)
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

func runChatStreamFromAnthropic(tb testing.TB, in []byte, opts ChatReplyOptions) []byte {
	tb.Helper()
	s := NewChatStreamFromAnthropic(opts)
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
