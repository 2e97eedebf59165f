// Package openai is the one home of OpenAI's wire formats in Longhaul: Chat
// Completions and Responses, their errors, and their translation to and from
// the Anthropic Messages shape the rest of the proxy works on.
package openai

import (
	"encoding/json"
	"net/http"
)

// Error types OpenAI answers with, by the HTTP status it pairs them with
// (checked against the API reference's error codes and openai-node's
// APIError subclasses, which key on the status only).
const (
	InvalidRequestError = "invalid_request_error" // 400, 404, 413, 415
	AuthenticationError = "authentication_error"  // 401
	PermissionError     = "permission_error"      // 403
	RateLimitError      = "rate_limit_error"      // 429 (code rate_limit_exceeded or insufficient_quota)
	ServerError         = "server_error"          // 500 and above
)

// Codes Longhaul sets in error.code.
const (
	CodeContextLengthExceeded = "context_length_exceeded"
	CodeModelNotFound         = "model_not_found"
	CodeRateLimitExceeded     = "rate_limit_exceeded"
)

// ErrorType is the error type OpenAI answers status with.
func ErrorType(status int) string {
	switch {
	case status == http.StatusUnauthorized:
		return AuthenticationError
	case status == http.StatusForbidden:
		return PermissionError
	case status == http.StatusTooManyRequests:
		return RateLimitError
	case status >= 500:
		return ServerError
	}
	return InvalidRequestError
}

// ErrorBody is OpenAI's error reply: {"error":{"message","type","param","code"}}.
// param and code are JSON null when unset, as the API sends them.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail is the inner object of an ErrorBody.
type ErrorDetail struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

// ErrorJSON renders an error body for status with an optional code and param
// ("" for none).
func ErrorJSON(status int, code, param, message string) []byte {
	d := ErrorDetail{Message: message, Type: ErrorType(status)}
	if code != "" {
		d.Code = &code
	}
	if param != "" {
		d.Param = &param
	}
	b, _ := json.Marshal(ErrorBody{Error: d}) // plain strings: cannot fail
	return b
}
