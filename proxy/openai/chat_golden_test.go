package openai

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
			compareGolden(t, strings.TrimSuffix(f, ".input."+ext)+".golden."+ext, got, ext == "sse")
			if again := fn(t, name, input); !bytes.Equal(again, got) {
				t.Errorf("second translation differs:\n%s\n%s", got, again)
			}
		})
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
}
