package proxy

import (
	"net/http"
	"strconv"
	"time"

	"longhaul/proxy/anthropic"
)

// Error is an error the proxy answers itself, in Anthropic's shape:
// {"type":"error","error":{"type":"...","message":"..."}}.
type Error struct {
	Status     int
	Type       string // Anthropic error type, e.g. invalid_request_error
	Message    string
	RetryAfter time.Duration // sent as retry-after when > 0
	// Param and Code are OpenAI's error.param and error.code ("" for none), for a client
	// that speaks OpenAI.
	Param, Code string
}

func (e *Error) Error() string { return e.Type + ": " + e.Message }

func newError(status int, typ, msg string) *Error {
	return &Error{Status: status, Type: typ, Message: msg}
}

func writeError(w http.ResponseWriter, e *Error) {
	setErrorHeaders(w, e)
	w.WriteHeader(e.Status)
	w.Write(anthropic.ErrorJSON(e.Type, e.Message)) //nolint:errcheck // the client is gone if this fails
}

func setErrorHeaders(w http.ResponseWriter, e *Error) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	if e.RetryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(int((e.RetryAfter+time.Second-1)/time.Second)))
	}
}
