package proxy

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"
)

// Error is an error the proxy answers itself, in Anthropic's shape:
// {"type":"error","error":{"type":"...","message":"..."}}.
type Error struct {
	Status     int
	Type       string // Anthropic error type, e.g. invalid_request_error
	Message    string
	RetryAfter time.Duration // sent as retry-after when > 0
}

func (e *Error) Error() string { return e.Type + ": " + e.Message }

func newError(status int, typ, msg string) *Error {
	return &Error{Status: status, Type: typ, Message: msg}
}

// Anthropic's error types, by the status it uses them with.
const (
	errInvalidRequest  = "invalid_request_error" // 400
	errAuthentication  = "authentication_error"  // 401
	errPermission      = "permission_error"      // 403
	errNotFound        = "not_found_error"       // 404
	errRequestTooLarge = "request_too_large"     // 413
	errAPI             = "api_error"             // 500, 502
	errOverloaded      = "overloaded_error"      // 503, 529
	errTimeout         = "timeout_error"         // 504
)

type errorBody struct {
	Type  string      `json:"type"`
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// errorJSON renders the Anthropic error body.
func errorJSON(typ, msg string) []byte {
	b, err := json.Marshal(errorBody{Type: "error", Error: errorDetail{Type: typ, Message: msg}})
	if err != nil { // cannot happen for two strings
		return []byte(`{"type":"error","error":{"type":"api_error","message":"internal error"}}`)
	}
	return b
}

func writeError(w http.ResponseWriter, e *Error) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	if e.RetryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(int((e.RetryAfter+time.Second-1)/time.Second)))
	}
	w.WriteHeader(e.Status)
	w.Write(errorJSON(e.Type, e.Message)) //nolint:errcheck // the client is gone if this fails
}
