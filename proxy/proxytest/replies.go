package proxytest

import (
	"encoding/json"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"longhaul/proxy/anthropic"
)

// What the scripted upstream answers besides messages: the headers every
// reply carries, the API's error replies, and the model list.

var reqSeq atomic.Int64

func nextRequestID() string { return "req_011CProxyTest" + pad(reqSeq.Add(1)) }

// setBaseHeaders adds what every real API response carries: a request-id and
// the anthropic-ratelimit-* family (limits and resets in RFC 3339).
func setBaseHeaders(h http.Header, id string) {
	reset := time.Now().UTC().Add(time.Minute).Format(time.RFC3339)
	h.Set("Request-Id", id)
	h.Set("Anthropic-Ratelimit-Requests-Limit", "4000")
	h.Set("Anthropic-Ratelimit-Requests-Remaining", "3999")
	h.Set("Anthropic-Ratelimit-Requests-Reset", reset)
	h.Set("Anthropic-Ratelimit-Input-Tokens-Limit", "2000000")
	h.Set("Anthropic-Ratelimit-Input-Tokens-Remaining", "1999000")
	h.Set("Anthropic-Ratelimit-Input-Tokens-Reset", reset)
	h.Set("Anthropic-Ratelimit-Output-Tokens-Limit", "400000")
	h.Set("Anthropic-Ratelimit-Output-Tokens-Remaining", "400000")
	h.Set("Anthropic-Ratelimit-Output-Tokens-Reset", reset)
	h.Set("Anthropic-Ratelimit-Tokens-Limit", "2400000")
	h.Set("Anthropic-Ratelimit-Tokens-Remaining", "2399000")
	h.Set("Anthropic-Ratelimit-Tokens-Reset", reset)
}

func errorBody(errType, message, requestID string) []byte {
	return marshal(anthropic.ErrorBody{Type: "error", Error: anthropic.ErrorDetail{Type: errType, Message: message}, RequestID: requestID})
}

func writeError(w http.ResponseWriter, status int, errType, message, requestID string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(errorBody(errType, message, requestID))
}

// The in-band error exactly as the streaming docs show it (no request_id).
var overloadedEvent = frame("error", errorBody("overloaded_error", "Overloaded", ""))

// ErrorReply is an Anthropic error JSON reply. The body's request_id and the
// request-id header carry the same value, as on the real API.
func ErrorReply(status int, errType, message string) Reply {
	id := nextRequestID()
	return Reply{
		Status: status,
		Header: http.Header{"Request-Id": {id}},
		Body:   errorBody(errType, message, id),
	}
}

// RateLimited is a 429 rate_limit_error with retry-after and exhausted
// request-limit headers.
func RateLimited(retryAfterSeconds int) Reply {
	r := ErrorReply(http.StatusTooManyRequests, "rate_limit_error",
		"This request would exceed the rate limit for your organization. Please try again later.")
	r.Header.Set("Retry-After", strconv.Itoa(retryAfterSeconds))
	r.Header.Set("Anthropic-Ratelimit-Requests-Remaining", "0")
	r.Header.Set("Anthropic-Ratelimit-Requests-Reset",
		time.Now().UTC().Add(time.Duration(retryAfterSeconds)*time.Second).Format(time.RFC3339))
	return r
}

// Overloaded is a 529 overloaded_error.
func Overloaded() Reply { return ErrorReply(529, "overloaded_error", "Overloaded") }

// ServerError is a 500 api_error.
func ServerError() Reply { return ErrorReply(500, "api_error", "Internal server error") }

// Unauthorized is a 401 authentication_error.
func Unauthorized() Reply { return ErrorReply(401, "authentication_error", "invalid x-api-key") }

// models is what GET /v1/models lists, newest first.
var models = []struct{ ID, DisplayName, CreatedAt string }{
	{"claude-sonnet-4-5-20250929", "Claude Sonnet 4.5", "2025-09-29T00:00:00Z"},
	{"claude-haiku-4-5-20251001", "Claude Haiku 4.5", "2025-10-15T00:00:00Z"},
}

var modelsJSON = func() []byte {
	type model struct {
		Type        string `json:"type"`
		ID          string `json:"id"`
		DisplayName string `json:"display_name"`
		CreatedAt   string `json:"created_at"`
	}
	var list struct {
		Data    []model `json:"data"`
		HasMore bool    `json:"has_more"`
		FirstID string  `json:"first_id"`
		LastID  string  `json:"last_id"`
	}
	for _, m := range models {
		list.Data = append(list.Data, model{"model", m.ID, m.DisplayName, m.CreatedAt})
	}
	list.FirstID, list.LastID = models[0].ID, models[len(models)-1].ID
	b, _ := json.Marshal(list)
	return b
}()
