package anthropic

import (
	"encoding/json"
	"net/http"
)

// Error types of the API, by the HTTP status it pairs them with.
const (
	InvalidRequestError = "invalid_request_error" // 400
	AuthenticationError = "authentication_error"  // 401
	PermissionError     = "permission_error"      // 403
	NotFoundError       = "not_found_error"       // 404
	RequestTooLarge     = "request_too_large"     // 413
	RateLimitError      = "rate_limit_error"      // 429
	APIError            = "api_error"             // 500, and 502 from a proxy
	OverloadedError     = "overloaded_error"      // 529, and 503 from a proxy
	TimeoutError        = "timeout_error"         // 504
)

// ErrorType is the error type the API answers status with.
func ErrorType(status int) string {
	switch status {
	case http.StatusBadRequest:
		return InvalidRequestError
	case http.StatusUnauthorized:
		return AuthenticationError
	case http.StatusForbidden:
		return PermissionError
	case http.StatusNotFound:
		return NotFoundError
	case http.StatusRequestEntityTooLarge:
		return RequestTooLarge
	case http.StatusTooManyRequests:
		return RateLimitError
	case 529:
		return OverloadedError
	}
	if status >= 500 {
		return APIError
	}
	return InvalidRequestError
}

// ErrorBody is the API's error reply, and the data of an in-band SSE error
// event: {"type":"error","error":{"type":"...","message":"..."}}.
type ErrorBody struct {
	Type  string      `json:"type"` // "error"
	Error ErrorDetail `json:"error"`
	// RequestID is what the real API adds to a reply (not to an event).
	RequestID string `json:"request_id,omitempty"`
}

// ErrorDetail is the inner error of an ErrorBody.
type ErrorDetail struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// ErrorJSON renders the error body of typ and msg.
func ErrorJSON(typ, msg string) []byte {
	b, err := json.Marshal(ErrorBody{Type: "error", Error: ErrorDetail{Type: typ, Message: msg}})
	if err != nil { // cannot happen for two strings
		return []byte(`{"type":"error","error":{"type":"api_error","message":"internal error"}}`)
	}
	return b
}

// ParseError reads an error body (or an error event's data); ok is false
// when body is not JSON of that shape. Either field may be empty.
func ParseError(body []byte) (e ErrorDetail, ok bool) {
	var b ErrorBody
	if json.Unmarshal(body, &b) != nil {
		return ErrorDetail{}, false
	}
	return b.Error, true
}
