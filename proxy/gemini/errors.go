package gemini

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"longhaul/proxy/anthropic"
)

// Google's canonical error statuses (google.rpc.Code names) by the HTTP
// status the Gemini API pairs them with, as its error reference lists them.
const (
	StatusInvalidArgument    = "INVALID_ARGUMENT"    // 400
	StatusFailedPrecondition = "FAILED_PRECONDITION" // 400 (e.g. free tier unavailable)
	StatusUnauthenticated    = "UNAUTHENTICATED"     // 401
	StatusPermissionDenied   = "PERMISSION_DENIED"   // 403
	StatusNotFound           = "NOT_FOUND"           // 404
	StatusResourceExhausted  = "RESOURCE_EXHAUSTED"  // 429
	StatusCancelled          = "CANCELLED"           // 499
	StatusInternal           = "INTERNAL"            // 500
	StatusUnavailable        = "UNAVAILABLE"         // 503
	StatusDeadlineExceeded   = "DEADLINE_EXCEEDED"   // 504
)

// StatusName is the google.rpc status name the API answers an HTTP status with.
func StatusName(status int) string {
	switch status {
	case http.StatusBadRequest, http.StatusRequestEntityTooLarge:
		return StatusInvalidArgument
	case http.StatusUnauthorized:
		return StatusUnauthenticated
	case http.StatusForbidden:
		return StatusPermissionDenied
	case http.StatusNotFound:
		return StatusNotFound
	case http.StatusTooManyRequests, 529:
		return StatusResourceExhausted
	case 499:
		return StatusCancelled
	case http.StatusServiceUnavailable, http.StatusBadGateway:
		return StatusUnavailable
	case http.StatusGatewayTimeout:
		return StatusDeadlineExceeded
	}
	if status >= 500 {
		return StatusInternal
	}
	return StatusInvalidArgument
}

// Error is a translation (or validation) failure: the HTTP status to answer,
// the offending field (a path such as "contents[3].parts[0]") and a message
// fit for the client. The core writes it in the client's protocol.
type Error struct {
	Status  int
	Param   string
	Message string
}

func (e *Error) Error() string {
	if e.Param == "" {
		return e.Message
	}
	return e.Param + ": " + e.Message
}

func badRequest(param, format string, args ...any) *Error {
	return &Error{Status: http.StatusBadRequest, Param: param, Message: fmt.Sprintf(format, args...)}
}

// ErrorBody is Google's error reply: {"error":{"code","message","status","details"}}.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail is the inner object of an ErrorBody.
type ErrorDetail struct {
	Code    int               `json:"code"`
	Message string            `json:"message"`
	Status  string            `json:"status"`
	Details []json.RawMessage `json:"details,omitempty"`
}

// Type URLs of the google.rpc detail messages Longhaul reads or writes.
const (
	retryInfoType  = "type.googleapis.com/google.rpc.RetryInfo"
	badRequestType = "type.googleapis.com/google.rpc.BadRequest"
)

// ErrorJSON renders an error body for an HTTP status. code is the google.rpc
// status name ("" = the one StatusName gives); param, when set, names the
// offending field in the message and in a google.rpc.BadRequest detail.
func ErrorJSON(status int, code, param, message string) []byte {
	if code == "" {
		code = StatusName(status)
	}
	d := ErrorDetail{Code: status, Message: message, Status: code}
	if param != "" {
		d.Message = "Invalid value at '" + param + "': " + message
		v, err := json.Marshal(map[string]any{"@type": badRequestType,
			"fieldViolations": []map[string]string{{"field": param, "description": message}}})
		if err == nil {
			d.Details = append(d.Details, v)
		}
	}
	b, err := json.Marshal(ErrorBody{Error: d})
	if err != nil { // strings and ints only: cannot happen
		return []byte(`{"error":{"code":500,"message":"internal error","status":"INTERNAL"}}`)
	}
	return b
}

// RateLimitJSON renders a 429 RESOURCE_EXHAUSTED body with a
// google.rpc.RetryInfo detail, as the API sends when a quota runs out.
func RateLimitJSON(message string, retryDelay time.Duration) []byte {
	d := ErrorDetail{Code: http.StatusTooManyRequests, Message: message, Status: StatusResourceExhausted}
	if retryDelay > 0 {
		v, err := json.Marshal(map[string]string{"@type": retryInfoType, "retryDelay": FormatDuration(retryDelay)})
		if err == nil {
			d.Details = append(d.Details, v)
		}
	}
	b, err := json.Marshal(ErrorBody{Error: d})
	if err != nil {
		return ErrorJSON(http.StatusTooManyRequests, StatusResourceExhausted, "", message)
	}
	return b
}

// ParseError reads a Google error body; ok is false when body is not one.
func ParseError(body []byte) (ErrorDetail, bool) {
	var b ErrorBody
	if json.Unmarshal(body, &b) != nil || (b.Error.Status == "" && b.Error.Message == "" && b.Error.Code == 0) {
		return ErrorDetail{}, false
	}
	return b.Error, true
}

// RetryDelay reads google.rpc.RetryInfo.retryDelay from a 429 body (the
// pool's cooldown for the account and model); ok is false when there is none.
func RetryDelay(body []byte) (time.Duration, bool) {
	d, ok := ParseError(body)
	if !ok {
		return 0, false
	}
	for _, raw := range d.Details {
		var info struct {
			Type       string `json:"@type"`
			RetryDelay string `json:"retryDelay"`
		}
		if json.Unmarshal(raw, &info) != nil || info.Type != retryInfoType {
			continue
		}
		if dur, err := ParseDuration(info.RetryDelay); err == nil && dur >= 0 {
			return dur, true
		}
	}
	return 0, false
}

// ParseDuration parses a google.protobuf.Duration in its JSON form: decimal
// seconds with an "s" suffix ("13s", "0.5s", "1.000340012s").
func ParseDuration(s string) (time.Duration, error) {
	num, ok := strings.CutSuffix(strings.TrimSpace(s), "s")
	if !ok || num == "" {
		return 0, fmt.Errorf("duration %q: want decimal seconds ending in \"s\"", s)
	}
	secs, err := strconv.ParseFloat(num, 64)
	if err != nil || secs < 0 || secs > 315576000000 {
		return 0, fmt.Errorf("duration %q: not a valid number of seconds", s)
	}
	return time.Duration(secs * float64(time.Second)), nil
}

// FormatDuration renders d as a google.protobuf.Duration JSON string.
func FormatDuration(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s"
}

// ErrorToAnthropic maps a Gemini error reply to the Anthropic error type and
// message an Anthropic client gets. A body that is not Google's shape keeps
// the status's type and a generic message.
func ErrorToAnthropic(status int, body []byte) (anthropicType, message string) {
	d, ok := ParseError(body)
	if !ok {
		return anthropic.ErrorType(status), fmt.Sprintf("upstream Gemini API answered HTTP %d", status)
	}
	switch d.Status {
	case StatusResourceExhausted:
		return anthropic.RateLimitError, d.Message
	case StatusUnauthenticated:
		return anthropic.AuthenticationError, d.Message
	case StatusPermissionDenied:
		return anthropic.PermissionError, d.Message
	case StatusNotFound:
		return anthropic.NotFoundError, d.Message
	case StatusInvalidArgument, StatusFailedPrecondition:
		return anthropic.InvalidRequestError, d.Message
	case StatusUnavailable:
		return anthropic.OverloadedError, d.Message
	case StatusDeadlineExceeded:
		return anthropic.TimeoutError, d.Message
	}
	return anthropic.ErrorType(status), d.Message
}

// ErrorFromAnthropic renders an Anthropic error reply (or error event data)
// in Google's shape for a Gemini client.
func ErrorFromAnthropic(status int, body []byte) []byte {
	d, ok := anthropic.ParseError(body)
	if !ok || d.Message == "" {
		return ErrorJSON(status, "", "", fmt.Sprintf("upstream answered HTTP %d", status))
	}
	code := StatusName(status)
	switch d.Type {
	case anthropic.RateLimitError:
		code = StatusResourceExhausted
	case anthropic.OverloadedError:
		code = StatusUnavailable
	case anthropic.AuthenticationError:
		code = StatusUnauthenticated
	case anthropic.PermissionError:
		code = StatusPermissionDenied
	case anthropic.NotFoundError:
		code = StatusNotFound
	case anthropic.InvalidRequestError, anthropic.RequestTooLarge:
		code = StatusInvalidArgument
	case anthropic.TimeoutError:
		code = StatusDeadlineExceeded
	case anthropic.APIError:
		code = StatusInternal
	}
	return ErrorJSON(status, code, "", d.Message)
}
