package pool

import (
	"bytes"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"longhaul/proxy/anthropic"
)

// OutcomeKind is what an attempt's result means for the account that served
// it (does it cool down, is it refused) and for the request (may another
// account succeed where this one failed: Retryable).
type OutcomeKind int

const (
	// OutcomeSuccess: the account served the request. Its failure streak for
	// the model ends.
	OutcomeSuccess OutcomeKind = iota
	// OutcomeClientError: a 4xx other than 401, 403 and 429, about the
	// request itself (malformed body, unknown model, too large): the client
	// must change it. The account answered, so it is healthy (its failure
	// streak ends, nothing cools); every account would answer the same, so
	// the request is not retried.
	OutcomeClientError
	// OutcomeRateLimited: a 429 for this account and model. The account
	// cools down for the model; the request is retried on another account.
	OutcomeRateLimited
	// OutcomeOverloaded: a 529, another 5xx, a redirect, or no reply at all. The
	// account cools down briefly for the model; the request is retried.
	OutcomeOverloaded
	// OutcomeRevoked: a 401 or 403, the upstream refused the key. The pool
	// stops using the account and tells its hook once; whether it is enabled
	// again is the store's decision (see Pool.SetAccounts). The request is
	// retried on another account.
	OutcomeRevoked
	// OutcomeRequestOverLimit: a 429 about this request rather than the
	// account's rate, e.g. the request alone exceeds the account's
	// tokens-per-minute limit, or needs long context the account is not
	// entitled to. Waiting would not help, so nothing cools down; an account
	// with a larger limit or the entitlement may take it, so it is retried.
	OutcomeRequestOverLimit
)

var outcomeNames = [...]string{
	OutcomeSuccess: "success", OutcomeClientError: "client error", OutcomeRateLimited: "rate limited",
	OutcomeOverloaded: "overloaded", OutcomeRevoked: "revoked", OutcomeRequestOverLimit: "request over limit",
}

func (k OutcomeKind) String() string {
	if k >= 0 && int(k) < len(outcomeNames) {
		return outcomeNames[k]
	}
	return "OutcomeKind(" + strconv.Itoa(int(k)) + ")"
}

// Retryable reports whether another account may succeed where this one
// failed. It is false for a success and for a client error, which every
// account would answer the same way.
func (k OutcomeKind) Retryable() bool {
	switch k {
	case OutcomeRateLimited, OutcomeOverloaded, OutcomeRevoked, OutcomeRequestOverLimit:
		return true
	}
	return false
}

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

// Classify maps an upstream reply (or its absence: status 0) to an outcome.
// requestBytes sizes the request, for telling a request-scoped 429 apart.
func Classify(status int, header http.Header, body []byte, requestBytes int, now time.Time) Outcome {
	o := Outcome{Header: RateLimitHeaders(header)}
	switch {
	case status == 0:
		o.Kind = OutcomeOverloaded
	case status == http.StatusTooManyRequests:
		msg := upstreamMessage(body)
		// Five bytes per token under-estimates JSON, so a request is only
		// called too large when it surely is.
		if requestScoped(msg, int64(requestBytes/5)) {
			o.Kind, o.Reason = OutcomeRequestOverLimit, msg
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
	case status >= 300 && status < 400:
		// An API endpoint that redirects is not answering. Longhaul never follows the redirect
		// (the key and the prompt would go along), so the account cannot serve for now: most
		// often its base URL is wrong (http for https, a moved host, a path too many), at times
		// a captive portal or a maintenance page stands in front. It cools down like an
		// overload, backing off while it repeats, and another account takes the request. Not
		// revoked: the key was never refused, and a portal clears by itself. Its Retry-After,
		// if any, is about following the redirect, so it is not read.
		o.Kind, o.Reason = OutcomeOverloaded, "redirected ("+strconv.Itoa(status)+")"
	case status >= 400:
		o.Kind = OutcomeClientError
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

// upstreamMessage is the message of an upstream error body, else its first
// 200 bytes.
func upstreamMessage(body []byte) string {
	if e, ok := anthropic.ParseError(body); ok && e.Message != "" {
		return e.Message
	}
	return string(bytes.TrimSpace(body[:min(len(body), 200)]))
}

// RateLimitHeaders keeps only the anthropic-ratelimit-* headers (the quota
// view); nil when there are none.
func RateLimitHeaders(h http.Header) http.Header {
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
