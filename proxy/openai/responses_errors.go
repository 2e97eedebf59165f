package openai

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"

	"longhaul/proxy/anthropic"
)

// Errors between the Responses API and Messages. A Responses upstream
// answers errors in OpenAI's shape ({"error":{"message","type","param","code"}},
// errors.go); inside a stream it sends an "error" event
// ({"type":"error","code","message","param","sequence_number"}, openai-node's
// ResponseErrorEvent) or ends with response.failed.

// ResponsesErrorToAnthropic reads a Responses upstream's error reply as a
// Messages error type and message. The type follows the status, as Messages
// pairs them (anthropic.ErrorType); a body that is not OpenAI's shape gives
// the status text.
func ResponsesErrorToAnthropic(status int, body []byte) (anthropicType, message string) {
	anthropicType = anthropic.ErrorType(status)
	message = http.StatusText(status)
	var e ErrorBody
	if json.Unmarshal(body, &e) == nil && e.Error.Message != "" {
		message = e.Error.Message
	}
	if e.Error.Code != nil {
		message = responsesMessageForAnthropic(*e.Error.Code, message)
	}
	return anthropicType, message
}

// responsesMessageForAnthropic words an OpenAI error for a Messages client:
// Messages clients recognise an over-long prompt by "prompt is too long"
// (Claude Code compacts on it), which OpenAI says with a code instead.
func responsesMessageForAnthropic(code, message string) string {
	if code == CodeContextLengthExceeded && !strings.HasPrefix(message, "prompt is too long") {
		return "prompt is too long: " + message
	}
	return message
}

// ResponsesErrorFromAnthropic renders a Messages upstream's error reply in
// OpenAI's shape for a Responses client, with the code OpenAI would give:
// context_length_exceeded for a prompt over the model's window,
// rate_limit_exceeded for a 429.
func ResponsesErrorFromAnthropic(status int, body []byte) []byte {
	message := http.StatusText(status)
	if d, ok := anthropic.ParseError(body); ok && d.Message != "" {
		message = d.Message
	}
	return ErrorJSON(status, responsesErrorCode(status, message), "", message)
}

func responsesErrorCode(status int, message string) string {
	switch {
	case status == http.StatusTooManyRequests:
		return CodeRateLimitExceeded
	case status == http.StatusBadRequest && strings.Contains(strings.ToLower(message), "prompt is too long"):
		return CodeContextLengthExceeded
	case status == http.StatusNotFound:
		return CodeModelNotFound
	case status >= 500:
		return "server_error"
	}
	return ""
}

// responsesMarshal encodes v without HTML escaping: text goes to the client
// with its characters as the model wrote them.
func responsesMarshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
