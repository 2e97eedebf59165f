package gemini_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	"longhaul/proxy/anthropic"
	"longhaul/proxy/gemini"
)

// A real 429 from the Gemini API: QuotaFailure and Help details around the
// RetryInfo the pool needs.
const quota429 = `{"error":{"code":429,"message":"You exceeded your current quota, please check your plan and billing details.","status":"RESOURCE_EXHAUSTED","details":[
 {"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaMetric":"generativelanguage.googleapis.com/generate_content_free_tier_requests","quotaId":"GenerateRequestsPerMinutePerProjectPerModel-FreeTier","quotaDimensions":{"model":"gemini-2.5-pro","location":"global"},"quotaValue":"5"}]},
 {"@type":"type.googleapis.com/google.rpc.Help","links":[{"description":"Learn more about Gemini API quotas","url":"https://ai.google.dev/gemini-api/docs/rate-limits"}]},
 {"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"13s"}]}}`

func TestRetryDelay(t *testing.T) {
	tests := []struct {
		name string
		body string
		want time.Duration
		ok   bool
	}{
		{"quota error", quota429, 13 * time.Second, true},
		{"fractional seconds", `{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","message":"x","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"1.5s"}]}}`, 1500 * time.Millisecond, true},
		{"no RetryInfo", `{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","message":"x"}}`, 0, false},
		{"malformed delay", `{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","message":"x","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"soon"}]}}`, 0, false},
		{"not Google's shape", `{"type":"error","error":{"type":"rate_limit_error","message":"x"}}`, 0, false},
		{"not JSON", `Too Many Requests`, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := gemini.RetryDelay([]byte(tt.body))
			if got != tt.want || ok != tt.ok {
				t.Errorf("RetryDelay(%s) = %v, %v; want %v, %v", tt.name, got, ok, tt.want, tt.ok)
			}
		})
	}
	// RateLimitJSON writes what RetryDelay reads.
	if got, ok := gemini.RetryDelay(gemini.RateLimitJSON("slow down", 42*time.Second)); !ok || got != 42*time.Second {
		t.Errorf("RetryDelay(RateLimitJSON(42s)) = %v, %v; want 42s, true", got, ok)
	}
}

func TestErrorJSONShape(t *testing.T) {
	var body struct {
		Error struct {
			Code    int
			Message string
			Status  string
			Details []struct {
				Type            string `json:"@type"`
				FieldViolations []struct{ Field, Description string }
			}
		}
	}
	raw := gemini.ErrorJSON(http.StatusBadRequest, "", "contents[2].parts", "empty turn")
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Fatal(err)
	}
	e := body.Error
	if e.Code != 400 || e.Status != "INVALID_ARGUMENT" || e.Message != "Invalid value at 'contents[2].parts': empty turn" {
		t.Errorf("ErrorJSON = %s", raw)
	}
	if len(e.Details) != 1 || e.Details[0].Type != "type.googleapis.com/google.rpc.BadRequest" || e.Details[0].FieldViolations[0].Field != "contents[2].parts" {
		t.Errorf("ErrorJSON details = %+v; want one BadRequest field violation", e.Details)
	}
	for status, want := range map[int]string{401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE", 504: "DEADLINE_EXCEEDED", 413: "INVALID_ARGUMENT"} {
		if got := gemini.StatusName(status); got != want {
			t.Errorf("StatusName(%d) = %q; want %q", status, got, want)
		}
	}
}

func TestErrorsBothWays(t *testing.T) {
	typ, msg := gemini.ErrorToAnthropic(429, []byte(quota429))
	if typ != anthropic.RateLimitError || msg == "" {
		t.Errorf("ErrorToAnthropic(429) = %q, %q; want rate_limit_error with the message", typ, msg)
	}
	for _, tt := range []struct {
		status int
		body   string
		want   string
	}{
		{400, `{"error":{"code":400,"message":"API key not valid.","status":"INVALID_ARGUMENT"}}`, anthropic.InvalidRequestError},
		{403, `{"error":{"code":403,"message":"denied","status":"PERMISSION_DENIED"}}`, anthropic.PermissionError},
		{503, `{"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}`, anthropic.OverloadedError},
		{502, `<html>bad gateway</html>`, anthropic.APIError},
	} {
		if typ, _ := gemini.ErrorToAnthropic(tt.status, []byte(tt.body)); typ != tt.want {
			t.Errorf("ErrorToAnthropic(%d, %s) = %q; want %q", tt.status, tt.body, typ, tt.want)
		}
	}
	for _, tt := range []struct {
		status int
		typ    string
		want   string
	}{
		{429, anthropic.RateLimitError, "RESOURCE_EXHAUSTED"},
		{529, anthropic.OverloadedError, "UNAVAILABLE"},
		{401, anthropic.AuthenticationError, "UNAUTHENTICATED"},
		{400, anthropic.InvalidRequestError, "INVALID_ARGUMENT"},
	} {
		d, ok := gemini.ParseError(gemini.ErrorFromAnthropic(tt.status, anthropic.ErrorJSON(tt.typ, "boom")))
		if !ok || d.Status != tt.want || d.Message != "boom" || d.Code != tt.status {
			t.Errorf("ErrorFromAnthropic(%d, %s) = %+v; want status %s", tt.status, tt.typ, d, tt.want)
		}
	}
}

func TestParseDuration(t *testing.T) {
	for in, want := range map[string]time.Duration{"13s": 13 * time.Second, "0s": 0, "0.000001s": time.Microsecond, " 2s ": 2 * time.Second} {
		if got, err := gemini.ParseDuration(in); err != nil || got != want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "13", "s", "-1s", "1m", "abc s"} {
		if _, err := gemini.ParseDuration(in); err == nil {
			t.Errorf("ParseDuration(%q) = nil error; want one", in)
		}
	}
	if got := gemini.FormatDuration(1500 * time.Millisecond); got != "1.5s" {
		t.Errorf("FormatDuration(1.5s) = %q", got)
	}
}

// Bad input gets a typed error naming the field, with a 400.
func TestBadRequestsAreTypedErrors(t *testing.T) {
	toAnthropic := []struct{ name, body, model, param string }{
		{"not JSON", `{"contents":`, "m", ""},
		{"no model", `{"contents":[{"parts":[{"text":"hi"}]}]}`, "", "model"},
		{"unknown role", `{"contents":[{"role":"system","parts":[{"text":"hi"}]}]}`, "m", "contents[0].role"},
		{"nothing to send", `{"contents":[{"role":"user","parts":[]}]}`, "m", "contents"},
		{"call without name", `{"contents":[{"role":"model","parts":[{"functionCall":{"args":{}}}]}]}`, "m", "contents[0].parts[0].functionCall.name"},
		{"args not an object", `{"contents":[{"role":"model","parts":[{"functionCall":{"name":"f","args":[1]}}]}]}`, "m", "contents[0].parts[0].functionCall.args"},
		{"orphan response", `{"contents":[{"role":"user","parts":[{"functionResponse":{"name":"f","response":{}}}]}]}`, "m", "contents[0].parts[0].functionResponse"},
		{"response not an object", `{"contents":[{"role":"model","parts":[{"functionCall":{"name":"f"}}]},{"role":"user","parts":[{"functionResponse":{"name":"f","response":"x"}}]}]}`, "m", "contents[1].parts[0].functionResponse.response"},
		{"audio", `{"contents":[{"parts":[{"inlineData":{"mimeType":"audio/wav","data":"AA=="}}]}]}`, "m", "contents[0].parts[0].inlineData.mimeType"},
		{"bad schema", `{"contents":[{"parts":[{"text":"x"}]}],"tools":[{"functionDeclarations":[{"name":"f","parameters":[1]}]}]}`, "m", "tools[0].functionDeclarations[0].parameters"},
		{"two candidates", `{"contents":[{"parts":[{"text":"x"}]}],"generationConfig":{"candidateCount":2}}`, "m", "generationConfig.candidateCount"},
	}
	for _, tt := range toAnthropic {
		t.Run("to Messages: "+tt.name, func(t *testing.T) {
			_, err := gemini.RequestToAnthropic([]byte(tt.body), gemini.RequestOptions{Model: tt.model})
			checkTyped(t, err, tt.param)
		})
	}
	fromAnthropic := []struct{ name, body, param string }{
		{"not JSON", `[`, ""},
		{"bad role", `{"messages":[{"role":"tool","content":"x"}]}`, "messages[0].role"},
		{"bad content", `{"messages":[{"role":"user","content":5}]}`, "messages[0].content"},
		{"orphan tool_result", `{"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"x"}]}]}`, "messages[0].content[0].tool_use_id"},
		{"tool_use from the user", `{"messages":[{"role":"user","content":[{"type":"tool_use","id":"t","name":"f","input":{}}]}]}`, "messages[0].content[0]"},
		{"image without source", `{"messages":[{"role":"user","content":[{"type":"image"}]}]}`, "messages[0].content[0].source"},
		{"empty", `{"messages":[]}`, "messages"},
		{"bad input schema", `{"messages":[{"role":"user","content":"x"}],"tools":[{"name":"f","input_schema":"s"}]}`, "tools[0].input_schema"},
	}
	for _, tt := range fromAnthropic {
		t.Run("to Gemini: "+tt.name, func(t *testing.T) {
			_, err := gemini.RequestFromAnthropic([]byte(tt.body), gemini.RequestOptions{})
			checkTyped(t, err, tt.param)
		})
	}
}

func checkTyped(t *testing.T, err error, param string) {
	t.Helper()
	var e *gemini.Error
	if !errors.As(err, &e) {
		t.Fatalf("error = %v; want a *gemini.Error", err)
	}
	if e.Status != http.StatusBadRequest || e.Param != param || e.Message == "" {
		t.Errorf("error = %+v; want status 400, param %q and a message", e, param)
	}
}
