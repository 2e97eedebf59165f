package openai

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"longhaul/proxy/anthropic"
)

// Errors between Chat Completions and Messages. OpenAI answers in
// {"error":{"message","type","param","code"}} (errors.go); compatible servers
// vary: vLLM puts message/type/code at the top level (code a number), Ollama
// may send {"error":"text"}, FastAPI-based servers {"detail":"text"}. Inside
// a stream the error comes as a data chunk {"error":{...}}.

// ChatErrorToAnthropic reads a Chat upstream's error reply as a Messages
// error type and message. The type follows the status (anthropic.ErrorType);
// an over-long prompt is worded "prompt is too long: …", as Messages
// clients recognise it (the rule of ResponsesErrorToAnthropic). A body
// in no known shape gives the status text.
func ChatErrorToAnthropic(status int, body []byte) (anthropicType, message string) {
	message, code := chatErrorMessage(body)
	if message == "" {
		message = http.StatusText(status)
	}
	if message == "" {
		message = "upstream error (status " + strconv.Itoa(status) + ")"
	}
	return anthropic.ErrorType(status), responsesMessageForAnthropic(code, message)
}

// ChatErrorFromAnthropic renders a Messages upstream's error reply in
// OpenAI's shape for a Chat client: the same body and codes a Responses
// client gets (context_length_exceeded, rate_limit_exceeded…).
func ChatErrorFromAnthropic(status int, body []byte) []byte {
	return ResponsesErrorFromAnthropic(status, body)
}

// chatErrorMessage reads the message and code of an error body in any of
// the shapes above. Servers that give no code for an over-long prompt say
// it in words ("This model's maximum context length is 8192 tokens…", as
// OpenAI itself, vLLM and DeepSeek do): that is read as
// context_length_exceeded.
func chatErrorMessage(body []byte) (message, code string) {
	var e struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Code    json.RawMessage `json:"code"`
		Detail  json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(body, &e) != nil {
		return "", ""
	}
	switch {
	case len(e.Error) > 0 && e.Error[0] == '{':
		var d struct {
			Message string          `json:"message"`
			Code    json.RawMessage `json:"code"`
		}
		if json.Unmarshal(e.Error, &d) == nil {
			message, code = d.Message, anthropic.Unquote(d.Code)
		}
	case isJSONString(e.Error):
		message = anthropic.Unquote(e.Error)
	case e.Message != "":
		message, code = e.Message, anthropic.Unquote(e.Code)
	case isJSONString(e.Detail):
		message = anthropic.Unquote(e.Detail)
	}
	if code == "" && chatSaysContextExceeded(message) {
		code = CodeContextLengthExceeded
	}
	return message, code
}

func chatSaysContextExceeded(message string) bool {
	m := strings.ToLower(message)
	return strings.Contains(m, "maximum context length") || strings.Contains(m, "context_length_exceeded") ||
		strings.Contains(m, "context length") && strings.Contains(m, "exceed")
}
