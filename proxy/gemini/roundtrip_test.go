package gemini_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"longhaul/proxy/gemini"
)

// A Gemini conversation with everything Messages can carry (ids on calls,
// {"output"} responses, one text part per turn, signatures): to Messages and
// back, with the client's request as Original, it comes back unchanged.
const losslessGemini = `{
 "contents":[
  {"role":"user","parts":[{"text":"Fix the build."}]},
  {"role":"model","parts":[{"functionCall":{"id":"c1","name":"run","args":{"cmd":"make"}},"thoughtSignature":"c2lnMQ=="},{"functionCall":{"id":"c2","name":"run","args":{"cmd":"make test"}}}]},
  {"role":"user","parts":[{"functionResponse":{"id":"c1","name":"run","response":{"output":"ok"}}},{"functionResponse":{"id":"c2","name":"run","response":{"error":"FAIL"}}}]},
  {"role":"model","parts":[{"text":"The tests fail.","thoughtSignature":"c2lnMg=="}]},
  {"role":"user","parts":[{"text":"Try again."}]}
 ],
 "systemInstruction":{"parts":[{"text":"Be careful."}]},
 "tools":[{"functionDeclarations":[{"name":"run","description":"Run","parameters":{"type":"OBJECT","properties":{"cmd":{"type":"STRING"}},"required":["cmd"]}}]},{"codeExecution":{}}],
 "toolConfig":{"functionCallingConfig":{"mode":"VALIDATED"}},
 "safetySettings":[{"category":"HARM_CATEGORY_HARASSMENT","threshold":"BLOCK_ONLY_HIGH"}],
 "generationConfig":{"maxOutputTokens":1000,"temperature":1.7,"seed":3,"thinkingConfig":{"thinkingLevel":"high","includeThoughts":true},"responseModalities":["TEXT"]},
 "labels":{"team":"infra"}
}`

func TestGeminiRoundTripIsLossless(t *testing.T) {
	msgs, err := gemini.RequestToAnthropic([]byte(losslessGemini), gemini.RequestOptions{Model: "gemini-3-pro-preview"})
	if err != nil {
		t.Fatal(err)
	}
	back, err := gemini.RequestFromAnthropic(msgs, gemini.RequestOptions{Original: []byte(losslessGemini)})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := canonical(t, back), canonical(t, []byte(losslessGemini)); !reflect.DeepEqual(got, want) {
		t.Errorf("round trip changed the request:\n got %s\nwant %s", back, losslessGemini)
	}
}

// Without the Original (another protocol in between, or the cache only),
// signatures still come back through the reported keys.
func TestSignaturesComeBackThroughTheirKeys(t *testing.T) {
	store := map[string]string{}
	msgs, err := gemini.RequestToAnthropic([]byte(losslessGemini), gemini.RequestOptions{Model: "m",
		OnSignature: func(k, s string) { store[k] = s }})
	if err != nil {
		t.Fatal(err)
	}
	if len(store) != 2 {
		t.Fatalf("reported %d signatures (%v); want 2", len(store), store)
	}
	back, err := gemini.RequestFromAnthropic(msgs, gemini.RequestOptions{Signature: func(k string) (string, bool) {
		s, ok := store[k]
		return s, ok
	}})
	if err != nil {
		t.Fatal(err)
	}
	var req gemini.Request
	if err := json.Unmarshal(back, &req); err != nil {
		t.Fatal(err)
	}
	if got := req.Contents[1].Parts[0].ThoughtSignature; got != "c2lnMQ==" {
		t.Errorf("call signature = %q; want c2lnMQ==", got)
	}
	if got := req.Contents[1].Parts[1].ThoughtSignature; got != "" {
		t.Errorf("second parallel call got signature %q; Gemini gives only the first one", got)
	}
	if got := req.Contents[3].Parts[0].ThoughtSignature; got != "c2lnMg==" {
		t.Errorf("text signature = %q; want c2lnMg==", got)
	}
}

// Translating twice gives what translating once gave, both ways: the
// translations are deterministic and settle after one pass.
func TestTranslationsSettleAfterOnePass(t *testing.T) {
	for _, name := range []string{"request_tools.gemini.json", "request_structured.gemini.json"} {
		g0 := readTestdata(t, name)
		a1, err := gemini.RequestToAnthropic(g0, gemini.RequestOptions{Model: "m"})
		if err != nil {
			t.Fatal(err)
		}
		g1, err := gemini.RequestFromAnthropic(a1, gemini.RequestOptions{})
		if err != nil {
			t.Fatal(err)
		}
		a2, err := gemini.RequestToAnthropic(g1, gemini.RequestOptions{Model: "m"})
		if err != nil {
			t.Fatal(err)
		}
		g2, err := gemini.RequestFromAnthropic(a2, gemini.RequestOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if string(g1) != string(g2) {
			t.Errorf("%s: Gemini → Messages → Gemini is not stable:\n%s\n%s", name, g1, g2)
		}
		// The first pass may lose what Gemini cannot carry (a JSON Schema's
		// additionalProperties); from then on the Messages form is fixed.
		g3, err := gemini.RequestFromAnthropic(a2, gemini.RequestOptions{})
		if err != nil {
			t.Fatal(err)
		}
		a3, err := gemini.RequestToAnthropic(g3, gemini.RequestOptions{Model: "m"})
		if err != nil {
			t.Fatal(err)
		}
		if string(a2) != string(a3) {
			t.Errorf("%s: the Messages form is not stable:\n%s\n%s", name, a2, a3)
		}
	}
	a0 := readTestdata(t, "request_claude_code.anthropic.json")
	g1, err := gemini.RequestFromAnthropic(a0, gemini.RequestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a1, err := gemini.RequestToAnthropic(g1, gemini.RequestOptions{Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	g2, err := gemini.RequestFromAnthropic(a1, gemini.RequestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if string(g1) != string(g2) {
		t.Errorf("Messages → Gemini → Messages → Gemini is not stable:\n%s\n%s", g1, g2)
	}
}

// A signature on text Gemini split into several parts is kept under the key
// of the whole text block, whichever part carried it, in replies, streams
// and requests alike, so RequestFromAnthropic finds it for the merged block.
func TestTextSignatureKeysCoverTheWholeBlock(t *testing.T) {
	want := gemini.TextSignatureKey("Hello, world.")
	check := func(name string, got map[string]string) {
		t.Helper()
		if got[want] != "c2ln" || len(got) != 1 {
			t.Errorf("%s reported %v; want only %s → c2ln", name, got, want)
		}
	}
	for _, parts := range []string{
		`[{"text":"Hello, ","thoughtSignature":"c2ln"},{"text":"world."}]`,
		`[{"text":"Hello, "},{"text":"world."},{"text":"","thoughtSignature":"c2ln"}]`,
	} {
		got := map[string]string{}
		_, err := gemini.ReplyToAnthropic([]byte(`{"candidates":[{"content":{"role":"model","parts":`+parts+`},"finishReason":"STOP"}],"responseId":"r"}`),
			gemini.ReplyOptions{OnSignature: func(k, s string) { got[k] = s }})
		if err != nil {
			t.Fatal(err)
		}
		check("ReplyToAnthropic "+parts, got)

		got = map[string]string{}
		tr := gemini.NewStreamToAnthropic(gemini.ReplyOptions{OnSignature: func(k, s string) { got[k] = s }})
		var ps []json.RawMessage
		json.Unmarshal([]byte(parts), &ps)
		emit := func(string, []byte) error { return nil }
		for _, p := range ps {
			tr.Event("", []byte(`{"candidates":[{"content":{"role":"model","parts":[`+string(p)+`]}}]}`), emit)
		}
		tr.Event("", []byte(`{"candidates":[{"finishReason":"STOP"}]}`), emit)
		tr.End(emit)
		check("StreamToAnthropic "+parts, got)

		got = map[string]string{}
		req := `{"contents":[{"role":"user","parts":[{"text":"hi"}]},{"role":"model","parts":` + parts + `},{"role":"user","parts":[{"text":"more"}]}]}`
		msgs, err := gemini.RequestToAnthropic([]byte(req), gemini.RequestOptions{Model: "m", OnSignature: func(k, s string) { got[k] = s }})
		if err != nil {
			t.Fatal(err)
		}
		check("RequestToAnthropic "+parts, got)
		back, err := gemini.RequestFromAnthropic(msgs, gemini.RequestOptions{Original: []byte(req)})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(back), `{"text":"Hello, world.","thoughtSignature":"c2ln"}`) {
			t.Errorf("RequestFromAnthropic did not restore the text signature: %s", back)
		}
	}
}
