package proxytest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"longhaul/proxy/gemini"
)

func geminiPost(t *testing.T, u *GeminiUpstream, path string, body string, header ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, u.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatal(err)
	}
	return resp, b
}

const hello = `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`

func decodeResponse(t *testing.T, b []byte) gemini.Response {
	t.Helper()
	var r gemini.Response
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return r
}

func TestGeminiGenerateBothStreamForms(t *testing.T) {
	u := NewGeminiUpstream()
	defer u.Close()
	text := "The quick brown fox jumps over the lazy dog."
	u.SetDefault(GeminiReply{Parts: []gemini.Part{{Text: text}}, ChunkRunes: 10})

	resp, b := geminiPost(t, u, "/v1beta/models/gemini-2.5-pro:generateContent", hello)
	r := decodeResponse(t, b)
	if resp.StatusCode != 200 || len(r.Candidates) != 1 || r.Candidates[0].FinishReason != "STOP" || r.UsageMetadata == nil {
		t.Fatalf("generateContent = %d %s", resp.StatusCode, b)
	}
	parts := r.Candidates[0].Content.Parts
	if len(parts) != 1 || parts[0].Text != text || !u.Issued(parts[0].ThoughtSignature) {
		t.Errorf("parts = %+v; want the whole text with a signature on its last part", parts)
	}

	resp, b = geminiPost(t, u, "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse", hello)
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("SSE content type %q", ct)
	}
	var sseText strings.Builder
	n := 0
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		n++
		c := decodeResponse(t, []byte(line))
		for _, p := range c.Candidates[0].Content.Parts {
			sseText.WriteString(p.Text)
		}
	}
	if sseText.String() != text || n != 6 { // 45 runes in pieces of 10, then the final chunk
		t.Errorf("SSE stream: %d chunks, text %q", n, sseText.String())
	}

	_, b = geminiPost(t, u, "/v1beta/models/gemini-2.5-pro:streamGenerateContent", hello)
	var chunks []gemini.Response
	if err := json.Unmarshal(b, &chunks); err != nil {
		t.Fatalf("array stream is not a JSON array: %v\n%s", err, b)
	}
	if len(chunks) != 6 || chunks[5].Candidates[0].FinishReason != "STOP" {
		t.Errorf("array stream: %d chunks, last %+v", len(chunks), chunks[len(chunks)-1])
	}
}

func TestGeminiFunctionCallSignatures(t *testing.T) {
	u := NewGeminiUpstream()
	defer u.Close()
	u.Enqueue(GeminiCalls(GeminiCall("a", map[string]int{"x": 1}), GeminiCall("b", map[string]int{"y": 2})))
	_, b := geminiPost(t, u, "/v1beta/models/gemini-3-pro-preview:generateContent", hello)
	parts := decodeResponse(t, b).Candidates[0].Content.Parts
	if len(parts) != 3 || !parts[0].Thought || parts[1].FunctionCall == nil || !u.Issued(parts[1].ThoughtSignature) || parts[2].ThoughtSignature != "" {
		t.Fatalf("parts = %s; want a thought, then two calls with a signature on the first only", b)
	}
	sig := parts[1].ThoughtSignature

	turn := func(sigA string) string {
		sigField := ""
		if sigA != "" {
			sigField = `,"thoughtSignature":"` + sigA + `"`
		}
		return `{"contents":[{"role":"user","parts":[{"text":"hi"}]},
		 {"role":"model","parts":[{"functionCall":{"name":"a","args":{"x":1}}` + sigField + `},{"functionCall":{"name":"b","args":{"y":2}}}]},
		 {"role":"user","parts":[{"functionResponse":{"name":"a","response":{"output":"1"}}},{"functionResponse":{"name":"b","response":{"output":"2"}}}]}]}`
	}
	for _, tt := range []struct {
		name, sig string
		status    int
		msg       string
	}{
		{"issued", sig, 200, ""},
		{"skip validator", gemini.SkipSignatureValidator, 200, ""},
		{"missing", "", 400, "missing a thought_signature"},
		{"foreign", "Zm9yZWlnbg==", 400, "Corrupted thought signature"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp, b := geminiPost(t, u, "/v1beta/models/gemini-3-pro-preview:generateContent", turn(tt.sig))
			if resp.StatusCode != tt.status || !strings.Contains(string(b), tt.msg) {
				t.Errorf("status %d %s; want %d %q", resp.StatusCode, b, tt.status, tt.msg)
			}
			if tt.status == 400 {
				d, ok := gemini.ParseError(b)
				if !ok || d.Status != "INVALID_ARGUMENT" || d.Code != 400 {
					t.Errorf("error body %s; want Google's INVALID_ARGUMENT shape", b)
				}
			}
		})
	}
	// An earlier turn is not checked: a new user text starts a new turn.
	older := strings.TrimSuffix(turn(""), "]}") + `,{"role":"model","parts":[{"text":"done"}]},{"role":"user","parts":[{"text":"next"}]}]}`
	if resp, b := geminiPost(t, u, "/v1beta/models/gemini-3-pro-preview:generateContent", older); resp.StatusCode != 200 {
		t.Errorf("missing signature in an earlier turn: %d %s; want 200", resp.StatusCode, b)
	}
}

func TestGeminiValidation(t *testing.T) {
	u := NewGeminiUpstream()
	defer u.Close()
	for _, tt := range []struct{ name, body, msg string }{
		{"not JSON", `{`, "Invalid JSON payload"},
		{"no contents", `{"contents":[]}`, "contents is not specified"},
		{"bad role", `{"contents":[{"role":"assistant","parts":[{"text":"x"}]}]}`, "valid role"},
		{"empty parts", `{"contents":[{"role":"user","parts":[]}]}`, "must not be empty"},
		{"unknown schema field", `{"contents":[{"parts":[{"text":"x"}]}],"tools":[{"functionDeclarations":[{"name":"f","parameters":{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":false}}]}]}`, `Unknown name "additionalProperties"`},
		{"ref", `{"contents":[{"parts":[{"text":"x"}]}],"tools":[{"functionDeclarations":[{"name":"f","parameters":{"type":"object","properties":{"a":{"$ref":"#/$defs/A"}}}}]}]}`, `Unknown name "$ref"`},
		{"type list", `{"contents":[{"parts":[{"text":"x"}]}],"tools":[{"functionDeclarations":[{"name":"f","parameters":{"type":"object","properties":{"a":{"type":["string","null"]}}}}]}]}`, "type: invalid value"},
		{"empty object", `{"contents":[{"parts":[{"text":"x"}]}],"tools":[{"functionDeclarations":[{"name":"f","parameters":{"type":"OBJECT","properties":{}}}]}]}`, "should be non-empty for OBJECT type"},
		{"array without items", `{"contents":[{"parts":[{"text":"x"}]}],"tools":[{"functionDeclarations":[{"name":"f","parameters":{"type":"OBJECT","properties":{"a":{"type":"ARRAY"}}}}]}]}`, "missing field for ARRAY"},
		{"numeric enum", `{"contents":[{"parts":[{"text":"x"}]}],"tools":[{"functionDeclarations":[{"name":"f","parameters":{"type":"OBJECT","properties":{"a":{"type":"INTEGER","enum":[1]}}}}]}]}`, "enum values must be strings"},
		{"undeclared required", `{"contents":[{"parts":[{"text":"x"}]}],"tools":[{"functionDeclarations":[{"name":"f","parameters":{"type":"OBJECT","properties":{"a":{"type":"STRING"}},"required":["b"]}}]}]}`, "is not defined"},
		{"bad format", `{"contents":[{"parts":[{"text":"x"}]}],"tools":[{"functionDeclarations":[{"name":"f","parameters":{"type":"OBJECT","properties":{"a":{"type":"STRING","format":"uri"}}}}]}]}`, "not supported"},
		{"bad name", `{"contents":[{"parts":[{"text":"x"}]}],"tools":[{"functionDeclarations":[{"name":"has space"}]}]}`, "Invalid function name"},
		{"unanswered call", `{"contents":[{"role":"user","parts":[{"text":"x"}]},{"role":"model","parts":[{"functionCall":{"name":"f"},"thoughtSignature":"skip_thought_signature_validator"}]},{"role":"user","parts":[{"text":"y"}]}]}`, "number of function response parts"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp, b := geminiPost(t, u, "/v1beta/models/gemini-2.5-pro:generateContent", tt.body)
			d, ok := gemini.ParseError(b)
			if resp.StatusCode != 400 || !ok || d.Status != "INVALID_ARGUMENT" || !strings.Contains(d.Message, tt.msg) {
				t.Errorf("status %d %s; want 400 INVALID_ARGUMENT with %q", resp.StatusCode, b, tt.msg)
			}
		})
	}
	if got := u.Rejected(); got != 14 {
		t.Errorf("Rejected() = %d; want 14", got)
	}
}

func TestGeminiErrorsKeysAndRoutes(t *testing.T) {
	u := NewGeminiUpstream()
	defer u.Close()
	u.Key = "AIza-test-key"

	if resp, _ := geminiPost(t, u, "/v1beta/models/gemini-2.5-pro:generateContent", hello); resp.StatusCode != 403 {
		t.Errorf("no key: %d; want 403", resp.StatusCode)
	}
	if resp, b := geminiPost(t, u, "/v1beta/models/gemini-2.5-pro:generateContent", hello, "x-goog-api-key", "wrong"); resp.StatusCode != 400 || !strings.Contains(string(b), "API key not valid") {
		t.Errorf("wrong key: %d %s; want 400 API key not valid", resp.StatusCode, b)
	}
	if resp, _ := geminiPost(t, u, "/v1beta/models/gemini-2.5-pro:generateContent?key=AIza-test-key", hello); resp.StatusCode != 200 {
		t.Errorf("key in the query: %d; want 200", resp.StatusCode)
	}

	u.Enqueue(GeminiRateLimited(13 * time.Second))
	resp, b := geminiPost(t, u, "/v1beta/models/gemini-2.5-pro:generateContent", hello, "x-goog-api-key", u.Key)
	if d, ok := gemini.RetryDelay(b); resp.StatusCode != 429 || !ok || d != 13*time.Second {
		t.Errorf("rate limited: %d %s (delay %v %v); want 429 with retryDelay 13s", resp.StatusCode, b, d, ok)
	}
	if e, _ := gemini.ParseError(b); e.Status != "RESOURCE_EXHAUSTED" {
		t.Errorf("429 status %q; want RESOURCE_EXHAUSTED", e.Status)
	}

	u.Enqueue(GeminiReply{BlockReason: "SAFETY"})
	_, b = geminiPost(t, u, "/v1beta/models/gemini-2.5-pro:generateContent", hello, "x-goog-api-key", u.Key)
	if r := decodeResponse(t, b); r.PromptFeedback == nil || r.PromptFeedback.BlockReason != "SAFETY" || len(r.Candidates) != 0 {
		t.Errorf("blocked prompt reply %s", b)
	}

	_, b = geminiPost(t, u, "/v1beta/models/gemini-2.5-pro:countTokens", hello, "x-goog-api-key", u.Key)
	var ct gemini.CountTokensResponse
	if json.Unmarshal(b, &ct) != nil || ct.TotalTokens <= 0 {
		t.Errorf("countTokens = %s", b)
	}

	get := func(path string) (int, []byte) {
		req, _ := http.NewRequest(http.MethodGet, u.URL+path, nil)
		req.Header.Set("x-goog-api-key", u.Key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	if status, b := get("/v1beta/models"); status != 200 {
		t.Errorf("models: %d", status)
	} else if ids, err := gemini.ModelIDs(b); err != nil || len(ids) != 3 {
		t.Errorf("models = %v, %v", ids, err)
	}
	if status, b := get("/v1beta/models/gemini-2.5-flash"); status != 200 || !strings.Contains(string(b), `"name":"models/gemini-2.5-flash"`) {
		t.Errorf("model get: %d %s", status, b)
	}
	if status, b := get("/v1beta/models/nope"); status != 404 || !strings.Contains(string(b), "NOT_FOUND") {
		t.Errorf("unknown model: %d %s; want 404 NOT_FOUND", status, b)
	}
}

func TestGeminiStreamFailAfter(t *testing.T) {
	u := NewGeminiUpstream()
	defer u.Close()
	u.Enqueue(GeminiReply{Parts: []gemini.Part{{Text: strings.Repeat("x", 100)}}, ChunkRunes: 10, FailAfter: 3})
	resp, err := http.Post(u.URL+"/v1beta/models/m:streamGenerateContent", "application/json", strings.NewReader(hello))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	rd := gemini.NewArrayReader(resp.Body)
	n := 0
	for {
		_, err = rd.Next()
		if err != nil {
			break
		}
		n++
	}
	if n != 3 || errors.Is(err, io.EOF) {
		t.Errorf("read %d chunks then %v; want 3 and a broken stream", n, err)
	}
}
