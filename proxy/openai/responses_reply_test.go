package openai

import (
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"

	"longhaul/proxy/anthropic"
)

// A Messages reply survives a trip through the response object and back.
func TestResponsesReplyRoundTrip(t *testing.T) {
	in := `{"id":"msg_01RT","type":"message","role":"assistant","model":"claude-sonnet-4-5",
	"content":[{"type":"thinking","thinking":"Plan.","signature":"EqClaude"},{"type":"redacted_thinking","data":"opaque"},
	 {"type":"text","text":"Reading <a> & b."},{"type":"tool_use","id":"toolu_01","name":"Read","input":{"path":"/a"}}],
	"stop_reason":"tool_use","stop_sequence":null,
	"usage":{"input_tokens":10,"cache_creation_input_tokens":20,"cache_read_input_tokens":3000,"output_tokens":40}}`
	mid, err := ResponsesReplyFromAnthropic([]byte(in), ResponsesReplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	back, err := ResponsesReplyToAnthropic(mid, ResponsesReplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(canonicalJSON(t, back), canonicalJSON(t, []byte(in))) {
		t.Errorf("round trip changed the reply:\nin:   %s\nmid:  %s\nback: %s", in, mid, back)
	}
}

func TestResponsesReplyUsageCountsCachedTokens(t *testing.T) {
	out, err := ResponsesReplyFromAnthropic([]byte(`{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"stop_reason":"end_turn",
	"usage":{"input_tokens":7,"cache_creation_input_tokens":100,"cache_read_input_tokens":900,"output_tokens":3}}`), ResponsesReplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got struct{ Usage responsesUsage }
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	u := got.Usage
	// OpenAI's input_tokens include the cached ones; Anthropic's exclude them.
	if u.InputTokens != 1007 || u.InputTokensDetails.CachedTokens != 900 || u.InputTokensDetails.CacheWriteTokens != 100 || u.OutputTokens != 3 || u.TotalTokens != 1010 {
		t.Errorf("usage = %+v", u)
	}
}

func TestResponsesReplyEchoesTheRequest(t *testing.T) {
	req := []byte(`{"model":"m","input":"x","instructions":"Be brief.","store":false,"tools":[{"type":"function","name":"f"}],"temperature":0.2,"metadata":{"k":"v"},"previous_response_id":"resp_0","max_output_tokens":99}`)
	out, err := ResponsesReplyFromAnthropic([]byte(`{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"hi"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}`),
		ResponsesReplyOptions{Echo: ResponsesEchoOf(req), ResponseID: "resp_1"})
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]json.RawMessage
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"id": `"resp_1"`, "instructions": `"Be brief."`, "store": "false", "temperature": "0.2", "metadata": `{"k":"v"}`,
		"previous_response_id": `"resp_0"`, "max_output_tokens": "99", "tools": `[{"type":"function","name":"f"}]`, "object": `"response"`, "status": `"completed"`} {
		if string(got[k]) != want {
			t.Errorf("%s = %s; want %s", k, got[k], want)
		}
	}
}

func TestResponsesFailedReplyIsAnError(t *testing.T) {
	_, err := ResponsesReplyToAnthropic([]byte(`{"id":"resp_1","object":"response","status":"failed","error":{"code":"server_error","message":"The model crashed."},"output":[]}`), ResponsesReplyOptions{})
	var re *ResponsesRequestError
	if !errors.As(err, &re) || re.Message != "The model crashed." || re.Status != 502 {
		t.Errorf("err = %v; want a 502 carrying the upstream's message", err)
	}
	if _, err := ResponsesReplyToAnthropic([]byte(`{"object":"list"}`), ResponsesReplyOptions{}); err == nil {
		t.Error("a body that is not a response must be an error")
	}
	if _, err := ResponsesReplyFromAnthropic([]byte(`{"type":"error","error":{}}`), ResponsesReplyOptions{}); err == nil {
		t.Error("a body that is not a message must be an error")
	}
}

func TestResponsesErrorsBothWays(t *testing.T) {
	tests := []struct {
		status          int
		body            string
		wantType, wantM string
	}{
		{429, `{"error":{"message":"Rate limit reached","type":"rate_limit_error","param":null,"code":"rate_limit_exceeded"}}`, "rate_limit_error", "Rate limit reached"},
		{400, `{"error":{"message":"Your input exceeds the context window","type":"invalid_request_error","param":"input","code":"context_length_exceeded"}}`, "invalid_request_error", "prompt is too long: Your input exceeds the context window"},
		{401, `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`, "authentication_error", "Incorrect API key provided"},
		{503, `<html>bad gateway</html>`, "api_error", "Service Unavailable"},
	}
	for _, tt := range tests {
		typ, msg := ResponsesErrorToAnthropic(tt.status, []byte(tt.body))
		if typ != tt.wantType || msg != tt.wantM {
			t.Errorf("ResponsesErrorToAnthropic(%d, %s) = %q, %q; want %q, %q", tt.status, tt.body, typ, msg, tt.wantType, tt.wantM)
		}
	}

	from := []struct {
		status             int
		body               string
		wantType, wantCode string
	}{
		{400, `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}`, InvalidRequestError, CodeContextLengthExceeded},
		{429, `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`, RateLimitError, CodeRateLimitExceeded},
		{529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, ServerError, "server_error"},
	}
	for _, tt := range from {
		var got ErrorBody
		if err := json.Unmarshal(ResponsesErrorFromAnthropic(tt.status, []byte(tt.body)), &got); err != nil {
			t.Fatal(err)
		}
		if got.Error.Type != tt.wantType || got.Error.Code == nil || *got.Error.Code != tt.wantCode || got.Error.Message == "" || strings.Contains(got.Error.Message, "{") {
			t.Errorf("ResponsesErrorFromAnthropic(%d) = %+v; want type %s code %s", tt.status, got.Error, tt.wantType, tt.wantCode)
		}
	}
}

// The stream translations assemble to the same message the non-stream
// translations give: the Anthropic stream, through the Responses stream and
// back, is the same Messages reply.
func TestResponsesStreamRoundTrip(t *testing.T) {
	in, err := os.ReadFile("testdata/responses/stream_from_anthropic/claude_turn.input.sse")
	if err != nil {
		t.Fatal(err)
	}
	mid := runStreamFromAnthropic(t, in, ResponsesReplyOptions{})
	back := runStreamToAnthropic(t, mid, ResponsesReplyOptions{})

	assemble := func(stream []byte) []byte {
		b := anthropic.NewReplyBuilder(1 << 20)
		for _, ev := range readSSE(t, stream) {
			b.Add(ev.Name, ev.Data)
		}
		out, truncated := b.Bytes()
		if truncated {
			t.Fatal("reply truncated")
		}
		return out
	}
	want, got := assemble(in), assemble(back)
	// The builder keeps usage as the events gave it; the trip through OpenAI's
	// usage (which has no place for message_start's placeholder) is compared
	// on its own below.
	var w, g map[string]any
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"id", "content", "stop_reason", "model"} {
		if !reflect.DeepEqual(w[k], g[k]) {
			t.Errorf("%s = %v; want %v", k, g[k], w[k])
		}
	}
	wu, gu := w["usage"].(map[string]any), g["usage"].(map[string]any)
	for _, k := range []string{"input_tokens", "cache_read_input_tokens", "output_tokens"} {
		if wu[k] != gu[k] {
			t.Errorf("usage.%s = %v; want %v", k, gu[k], wu[k])
		}
	}
}

// The Responses stream assembles into the same response object the
// non-stream translation of the same Messages reply gives.
func TestResponsesStreamMatchesReply(t *testing.T) {
	in, err := os.ReadFile("testdata/responses/stream_from_anthropic/claude_turn.input.sse")
	if err != nil {
		t.Fatal(err)
	}
	b := anthropic.NewReplyBuilder(1 << 20)
	for _, ev := range readSSE(t, in) {
		b.Add(ev.Name, ev.Data)
	}
	msg, _ := b.Bytes()
	opts := responsesGoldenReplyOptions()
	reply, err := ResponsesReplyFromAnthropic(msg, opts)
	if err != nil {
		t.Fatal(err)
	}
	events := readSSE(t, runStreamFromAnthropic(t, in, opts))
	last := events[len(events)-1]
	if last.Name != "response.completed" {
		t.Fatalf("last event %s; want response.completed", last.Name)
	}
	var done struct{ Response json.RawMessage }
	if err := json.Unmarshal(last.Data, &done); err != nil {
		t.Fatal(err)
	}
	var fromStream, fromReply map[string]any
	json.Unmarshal(done.Response, &fromStream)
	json.Unmarshal(reply, &fromReply)
	for _, k := range []string{"id", "status", "usage", "model"} {
		if !reflect.DeepEqual(fromStream[k], fromReply[k]) {
			t.Errorf("%s: stream %v; reply %v", k, fromStream[k], fromReply[k])
		}
	}
	// Items: same kinds, call ids, arguments (ids of text items are derived
	// from block positions, which differ by design between the two).
	so, ro := fromStream["output"].([]any), fromReply["output"].([]any)
	if len(so) != len(ro) {
		t.Fatalf("stream has %d items, reply %d", len(so), len(ro))
	}
	for i := range so {
		s, r := so[i].(map[string]any), ro[i].(map[string]any)
		for _, k := range []string{"type", "call_id", "arguments", "summary", "encrypted_content"} {
			if k == "arguments" && s[k] != nil {
				if !reflect.DeepEqual(canonicalJSON(t, []byte(s[k].(string))), canonicalJSON(t, []byte(r[k].(string)))) {
					t.Errorf("item %d arguments: stream %v; reply %v", i, s[k], r[k])
				}
				continue
			}
			if !reflect.DeepEqual(s[k], r[k]) {
				t.Errorf("item %d %s: stream %v; reply %v", i, k, s[k], r[k])
			}
		}
	}
}
