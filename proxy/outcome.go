package proxy

import (
	"bytes"
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// OutcomeKind is what an attempt's result means for the account that served it.
type OutcomeKind int

const (
	// OutcomeSuccess: the account answered (including client errors, which
	// are the request's fault, not the account's).
	OutcomeSuccess OutcomeKind = iota
	// OutcomeRateLimited: 429 for this account and model; cool down.
	OutcomeRateLimited
	// OutcomeOverloaded: 529, 5xx or a connection failure; short cooldown.
	OutcomeOverloaded
	// OutcomeRevoked: 401/403; the account is disabled until the user re-enables it.
	OutcomeRevoked
	// OutcomeRequestRejected: the request itself cannot be served by any
	// account (e.g. a 429 saying this one request exceeds the limit); no
	// cooldown, no retry.
	OutcomeRequestRejected
)

// Outcome is reported to the Pool after every attempt.
type Outcome struct {
	Kind OutcomeKind
	// RetryAfter, when set, is how long the upstream asked to wait.
	RetryAfter time.Duration
	// Reason is the upstream's message (shown for revoked accounts).
	Reason string
	// Tokens used by a successful exchange (input + output), for least-used and quota.
	Tokens int64
	// Header carries the anthropic-ratelimit-* headers of the reply, if any.
	Header http.Header
}

// retryable reports whether another account may succeed where this one
// failed (a request-scoped 429 may fit another account's larger limit).
func (k OutcomeKind) retryable() bool {
	return k != OutcomeSuccess
}

var (
	// "This request would exceed the rate limit for your organization (…) of
	// 30,000 input tokens per minute": account-scoped, unless this request
	// alone is that large — then waiting never helps.
	perMinuteLimit = regexp.MustCompile(`(?i)of ([\d,]+) input tokens per minute`)
	// Limits on what the request asks for, not on how often.
	requestFeature429 = regexp.MustCompile(`(?i)required for long context|prompt is too long`)
)

// requestScoped reports whether a 429 is about the request itself, so that
// cooling the account (and, in turn, every account) would help nothing.
// estimatedTokens is a deliberately low estimate of the request's size.
func requestScoped(msg string, estimatedTokens int64) bool {
	if requestFeature429.MatchString(msg) {
		return true
	}
	if m := perMinuteLimit.FindStringSubmatch(msg); m != nil {
		limit, err := strconv.ParseInt(strings.ReplaceAll(m[1], ",", ""), 10, 64)
		return err == nil && estimatedTokens >= limit
	}
	return false
}

// classify maps an upstream reply (or its absence: status 0) to an outcome.
// requestBytes sizes the request, for telling a request-scoped 429 apart.
func classify(status int, header http.Header, body []byte, requestBytes int, now time.Time) Outcome {
	o := Outcome{Header: rateLimitHeaders(header)}
	switch {
	case status == 0:
		o.Kind = OutcomeOverloaded
	case status == http.StatusTooManyRequests:
		msg := upstreamMessage(body)
		// Five bytes per token under-estimates JSON, so a request is only
		// called too large when it surely is.
		if requestScoped(msg, int64(requestBytes/5)) {
			o.Kind, o.Reason = OutcomeRequestRejected, msg
			return o
		}
		o.Kind, o.Reason = OutcomeRateLimited, msg
		o.RetryAfter = retryAfter(header, now)
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		o.Kind, o.Reason = OutcomeRevoked, upstreamMessage(body)
		if o.Reason == "" {
			o.Reason = http.StatusText(status)
		}
		o.Reason = strconv.Itoa(status) + ": " + o.Reason
	case status >= 500: // includes Anthropic's 529 overloaded
		o.Kind, o.Reason = OutcomeOverloaded, upstreamMessage(body)
		o.RetryAfter = retryAfter(header, now)
	default:
		o.Kind = OutcomeSuccess
	}
	return o
}

// retryAfter reads retry-after (seconds or an HTTP date), else the earliest
// anthropic-ratelimit-*-reset of a limit that is exhausted, else the latest
// reset given. Zero means the upstream did not say.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if v := strings.TrimSpace(h.Get("Retry-After")); v != "" {
		if secs, err := strconv.ParseFloat(v, 64); err == nil && secs >= 0 {
			return time.Duration(secs * float64(time.Second))
		}
		if t, err := http.ParseTime(v); err == nil {
			return max(t.Sub(now), 0)
		}
	}
	var exhausted, latest time.Duration
	for _, kind := range []string{"requests", "tokens", "input-tokens", "output-tokens"} {
		reset, err := time.Parse(time.RFC3339, h.Get("Anthropic-Ratelimit-"+kind+"-Reset"))
		if err != nil {
			continue
		}
		d := max(reset.Sub(now), 0)
		latest = max(latest, d)
		if h.Get("Anthropic-Ratelimit-"+kind+"-Remaining") == "0" && (exhausted == 0 || d < exhausted) {
			exhausted = d
		}
	}
	if exhausted > 0 {
		return exhausted
	}
	return latest
}

func upstreamMessage(body []byte) string {
	var b errorBody
	if err := json.Unmarshal(body, &b); err == nil && b.Error.Message != "" {
		return b.Error.Message
	}
	return string(bytes.TrimSpace(body[:min(len(body), 200)]))
}

// rateLimitHeaders keeps only the anthropic-ratelimit-* headers (the quota view).
func rateLimitHeaders(h http.Header) http.Header {
	var out http.Header
	for k, v := range h {
		if strings.HasPrefix(k, "Anthropic-Ratelimit-") {
			if out == nil {
				out = http.Header{}
			}
			out[k] = v
		}
	}
	return out
}
