package compact_test

import (
	"strings"
	"testing"

	"longhaul/proxy/compact"
)

// Bugs the shape round trip found, each with its minimal input, kept as
// regression tests now that they are fixed.

// TestRegressionChatToolTextPartsCompressedAgain: a Chat tool message whose content
// is several text parts is compressed part by part in the Messages shape
// (each text within what is left of MaxChars, at least 128 characters), then
// ChatRequestFromAnthropic joins the parts into one string with newlines
// (proxy/openai/chat_request_from.go toolResult). That string is longer than
// MaxChars, so the next pass truncates it again: compact-and-translate is
// not a fixed point. The same happens when a result's image (not in the last
// message) becomes the compressor's text note after a truncated text.
// Fixed: the text parts stay parts toward Chat (a tool message may carry an
// array of text parts: openai-node ChatCompletionToolMessageParam).
func TestRegressionChatToolTextPartsCompressedAgain(t *testing.T) {
	body := `{"model":"gpt-4.1","messages":[{"role":"user","content":"go"},` +
		`{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},` +
		`{"role":"tool","tool_call_id":"c1","content":[{"type":"text","text":"` + strings.Repeat("x", 300) + `"},{"type":"text","text":"` + strings.Repeat("y", 300) + `"}]}]}`
	o := compact.Options{
		Thresholds: compact.Thresholds{L1: 1, L2: 1, L3: 1}, // the compressor alone
		Compressor: compact.CompressorOptions{MaxChars: 200, LargeChars: 200},
	}
	s := shapeByName(t, "chat")
	once, _, err := compactClient(s, o, []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	twice, _, err := compactClient(s, o, once)
	if err != nil {
		t.Fatal(err)
	}
	if c1, c2 := canonicalJSON(once), canonicalJSON(twice); c1 != c2 {
		t.Errorf("compacting the compacted Chat request changed it again: %s", firstDifference([]byte(c1), []byte(c2)))
	}
}

// TestRegressionGeminiJSONTextOutputBecomesObject: a functionResponse whose output
// is text that happens to be a JSON object (Gemini CLI reading a .json
// file: {"output": "{\"name\": \"demo\"}\n"}) goes into Messages as that
// text (proxy/gemini/request.go appendToolResult), and comes back as the
// object itself ({"name": "demo"}: request_from.go appendFunctionResponse
// reads JSON-object text as a structured response). So when compaction
// rewrites a Gemini conversation, a kept round's result changes shape and
// loses its whitespace: the newest rounds are not kept verbatim. Both forms
// are the same text in Messages, so the way back cannot tell them apart.
// Fixed: a response compaction left unchanged is taken back from
// RequestOptions.Original by call id, as the thought signatures are.
func TestRegressionGeminiJSONTextOutputBecomesObject(t *testing.T) {
	body := `{"contents":[{"role":"user","parts":[{"text":"read it"}]},` +
		`{"role":"model","parts":[{"functionCall":{"id":"c1","name":"read_file","args":{}},"thoughtSignature":"sig-1"}]},` +
		`{"role":"user","parts":[{"functionResponse":{"id":"c1","name":"read_file","response":{"output":"{\"name\": \"demo\"}\n"}}}]}]}`
	s := shapeByName(t, "gemini")
	o := compact.Options{Thresholds: compact.Thresholds{L1: 1, L2: 1, L3: 1}} // nothing to compact: the round trip alone
	out, _, err := compactClient(s, o, []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	in, got := s.conversation([]byte(body)), s.conversation(out)
	for _, p := range keptRoundProblems(in.Rounds, got.Rounds) {
		t.Errorf("%s\nout: %s", p, out)
	}
}
