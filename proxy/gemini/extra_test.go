package gemini_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"longhaul/proxy/gemini"
)

// Members the types do not declare survive a decode and encode.
func TestWireTypesKeepUnknownFields(t *testing.T) {
	for name, body := range map[string]string{
		"request": `{"contents":[{"role":"user","parts":[{"text":"x","videoMetadata":{"startOffset":"1s"},"partMetadata":{"k":1}}]}],
			"labels":{"team":"a"},"generationConfig":{"maxOutputTokens":5,"responseModalities":["TEXT"],"mediaResolution":"MEDIA_RESOLUTION_LOW"}}`,
		"response": `{"candidates":[{"content":{"role":"model","parts":[{"text":"y"}]},"finishReason":"STOP","index":0,"avgLogprobs":-0.5,"groundingMetadata":{"webSearchQueries":["q"]}}],
			"modelVersion":"m","responseId":"r","createTime":"2025-01-01T00:00:00Z","modelStatus":{"modelStage":"STABLE"}}`,
	} {
		var v any = &gemini.Request{}
		if name == "response" {
			v = &gemini.Response{}
		}
		if err := json.Unmarshal([]byte(body), v); err != nil {
			t.Fatal(err)
		}
		out, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := canonical(t, out), canonical(t, []byte(body)); !reflect.DeepEqual(got, want) {
			t.Errorf("%s lost members:\n got %s\nwant %s", name, out, body)
		}
	}
}
