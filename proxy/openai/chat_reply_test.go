package openai

import (
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

// A chat.completion in the form the translation writes survives a trip to
// a Messages reply and back unchanged, reasoning_content included.
func TestChatReplyRoundTripToAnthropic(t *testing.T) {
	in := `{"id":"chatcmpl-abc123","object":"chat.completion","created":1763900000,"model":"deepseek-chat",
	"choices":[{"index":0,"message":{"role":"assistant","content":"Reading it.","refusal":null,"reasoning_content":"Need the file.",
	  "tool_calls":[{"id":"call_1","type":"function","function":{"name":"read","arguments":"{\"path\":\"a.go\"}"}},{"id":"call_2","type":"function","function":{"name":"pwd","arguments":"{}"}}],
	  "annotations":[]},"logprobs":null,"finish_reason":"tool_calls"}],
	"usage":{"prompt_tokens":100,"completion_tokens":20,"total_tokens":120,"prompt_tokens_details":{"cached_tokens":60},"completion_tokens_details":{"reasoning_tokens":0}}}`
	mid, err := ChatReplyToAnthropic([]byte(in), ChatReplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	back, err := ChatReplyFromAnthropic(mid, chatGoldenReplyOptions())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(canonicalJSON(t, back), canonicalJSON(t, []byte(in))) {
		t.Errorf("round trip changed the reply:\nin:   %s\nmid:  %s\nback: %s", in, mid, back)
	}
}

// A Messages reply survives a trip through a Chat client's shape and back:
// Claude's signed and redacted thinking ride in thinking_blocks.
func TestChatReplyRoundTripFromAnthropic(t *testing.T) {
	in := `{"id":"msg_01abc","type":"message","role":"assistant","model":"claude-sonnet-4-5",
	"content":[{"type":"thinking","thinking":"Plan.","signature":"EqSig"},{"type":"redacted_thinking","data":"opaque"},
	 {"type":"text","text":"Calling."},{"type":"tool_use","id":"toolu_1","name":"ls","input":{"path":"/"}}],
	"stop_reason":"tool_use","stop_sequence":null,
	"usage":{"input_tokens":10,"cache_creation_input_tokens":0,"cache_read_input_tokens":90,"output_tokens":5}}`
	mid, err := ChatReplyFromAnthropic([]byte(in), chatGoldenReplyOptions())
	if err != nil {
		t.Fatal(err)
	}
	back, err := ChatReplyToAnthropic(mid, ChatReplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(canonicalJSON(t, back), canonicalJSON(t, []byte(in))) {
		t.Errorf("round trip changed the reply:\nin:   %s\nmid:  %s\nback: %s", in, mid, back)
	}
}

func TestChatReplyToAnthropicRefusesWhatIsNoCompletion(t *testing.T) {
	tests := []struct {
		name, body string
		status     int // of the *ChatRequestError; 0 for a plain error
		want       string
	}{
		{"an error answered with 200", `{"error":{"message":"Model overloaded","type":"server_error","code":null}}`, http.StatusBadGateway, "Model overloaded"},
		{"not JSON", `<html>`, 0, "read chat completion"},
		{"another object", `{"object":"list","data":[]}`, 0, "object \"list\""},
		{"no choices", `{"id":"x","object":"chat.completion","choices":[]}`, 0, "no choices"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := ChatReplyToAnthropic([]byte(tt.body), ChatReplyOptions{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("ChatReplyToAnthropic(%s) = %s, %v; want an error with %q", tt.body, out, err, tt.want)
			}
			var re *ChatRequestError
			if got := errors.As(err, &re); got != (tt.status != 0) || (got && re.Status != tt.status) {
				t.Errorf("error %#v; want status %d", err, tt.status)
			}
		})
	}
}

func TestChatErrorToAnthropic(t *testing.T) {
	tests := []struct {
		name             string
		status           int
		body             string
		wantType, wantMs string
	}{
		{"OpenAI context length", 400, `{"error":{"message":"This model's maximum context length is 128000 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`,
			"invalid_request_error", "prompt is too long: This model's maximum context length is 128000 tokens."},
		{"context length said in words only", 400, `{"object":"error","message":"This model's maximum context length is 8192 tokens. However, you requested 9000 tokens.","type":"BadRequestError","param":null,"code":400}`,
			"invalid_request_error", "prompt is too long: This model's maximum context length is 8192 tokens. However, you requested 9000 tokens."},
		{"rate limit", 429, `{"error":{"message":"Rate limit reached for gpt-4o","type":"rate_limit_error","param":null,"code":"rate_limit_exceeded"}}`,
			"rate_limit_error", "Rate limit reached for gpt-4o"},
		{"Ollama's string error", 404, `{"error":"model \"llama9\" not found, try pulling it first"}`, "not_found_error", `model "llama9" not found, try pulling it first`},
		{"a detail", 422, `{"detail":"Unprocessable"}`, "invalid_request_error", "Unprocessable"},
		{"a server error", 500, `{"error":{"message":"The server had an error","type":"server_error","param":null,"code":null}}`, "api_error", "The server had an error"},
		{"not JSON", 502, `<html>bad gateway</html>`, "api_error", "Bad Gateway"},
		{"overloaded, no body", 529, ``, "overloaded_error", "upstream error (status 529)"},
		{"auth", 401, `{"error":{"message":"Incorrect API key provided.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`, "authentication_error", "Incorrect API key provided."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			typ, msg := ChatErrorToAnthropic(tt.status, []byte(tt.body))
			if typ != tt.wantType || msg != tt.wantMs {
				t.Errorf("ChatErrorToAnthropic(%d, %s) = %q, %q; want %q, %q", tt.status, tt.body, typ, msg, tt.wantType, tt.wantMs)
			}
		})
	}
}

func TestChatErrorFromAnthropic(t *testing.T) {
	tests := []struct {
		status         int
		body           string
		typ, code, msg string
	}{
		{400, `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}`,
			"invalid_request_error", "context_length_exceeded", "prompt is too long: 210000 tokens > 200000 maximum"},
		{429, `{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}`,
			"rate_limit_error", "rate_limit_exceeded", "Number of request tokens has exceeded your per-minute rate limit"},
		{529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, "server_error", "server_error", "Overloaded"},
		{404, `{"type":"error","error":{"type":"not_found_error","message":"model: claude-x"}}`, "invalid_request_error", "model_not_found", "model: claude-x"},
		{502, `not json`, "server_error", "server_error", "Bad Gateway"},
	}
	for _, tt := range tests {
		raw := ChatErrorFromAnthropic(tt.status, []byte(tt.body))
		var got ErrorBody
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatal(err)
		}
		if got.Error.Type != tt.typ || got.Error.Code == nil || *got.Error.Code != tt.code || got.Error.Message != tt.msg || got.Error.Param != nil {
			t.Errorf("ChatErrorFromAnthropic(%d, %s) = %s; want type %s, code %s, message %q", tt.status, tt.body, raw, tt.typ, tt.code, tt.msg)
		}
	}
}
