package pool

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"longhaul/proxy/anthropic"
)

func TestClassify(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	body := anthropic.ErrorJSON
	orgLimit := body("rate_limit_error", "This request would exceed the rate limit for your organization (x) of 30,000 input tokens per minute.")
	tests := []struct {
		name      string
		status    int
		header    http.Header
		body      []byte
		reqBytes  int
		wantKind  OutcomeKind
		wantAfter time.Duration
	}{
		{"200 is a success", 200, nil, nil, 100, OutcomeSuccess, 0},
		{"429 retry-after seconds", 429, http.Header{"Retry-After": {"12"}}, body("rate_limit_error", "slow down"), 100, OutcomeRateLimited, 12 * time.Second},
		{"429 retry-after HTTP date", 429, http.Header{"Retry-After": {now.Add(90 * time.Second).Format(http.TimeFormat)}}, nil, 100, OutcomeRateLimited, 90 * time.Second},
		{"429 exhausted reset header", 429, http.Header{
			"Anthropic-Ratelimit-Tokens-Remaining": {"0"}, "Anthropic-Ratelimit-Tokens-Reset": {now.Add(45 * time.Second).Format(time.RFC3339)},
			"Anthropic-Ratelimit-Requests-Remaining": {"10"}, "Anthropic-Ratelimit-Requests-Reset": {now.Add(5 * time.Second).Format(time.RFC3339)},
		}, nil, 100, OutcomeRateLimited, 45 * time.Second},
		{"429 org limit, small request: account-scoped", 429, nil, orgLimit, 20_000, OutcomeRateLimited, 0},
		{"429 org limit, request alone larger: request-scoped", 429, nil, orgLimit, 400_000, OutcomeRequestOverLimit, 0},
		{"429 long context needs extra usage: request-scoped", 429, nil, body("rate_limit_error", "Extra usage is required for long context requests."), 100, OutcomeRequestOverLimit, 0},
		{"529 overloaded", 529, nil, body("overloaded_error", "Overloaded"), 100, OutcomeOverloaded, 0},
		{"500", 500, nil, nil, 100, OutcomeOverloaded, 0},
		{"connection error", 0, nil, nil, 100, OutcomeOverloaded, 0},
		{"307 redirect is not an answer", 307, http.Header{"Location": {"https://elsewhere.example/v1/messages"}, "Retry-After": {"60"}}, nil, 100, OutcomeOverloaded, 0},
		{"301 redirect is not an answer", 301, nil, nil, 100, OutcomeOverloaded, 0},
		{"401", 401, nil, body("authentication_error", "invalid x-api-key"), 100, OutcomeRevoked, 0},
		{"403", 403, nil, body("permission_error", "forbidden"), 100, OutcomeRevoked, 0},
		{"400 is the request's fault", 400, nil, body("invalid_request_error", "bad"), 100, OutcomeClientError, 0},
		{"404 is the request's fault", 404, nil, nil, 100, OutcomeClientError, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := Classify(tt.status, tt.header, tt.body, tt.reqBytes, now)
			if o.Kind != tt.wantKind || o.RetryAfter != tt.wantAfter {
				t.Errorf("Classify(%d, …) = %v after %v; want %v after %v", tt.status, o.Kind, o.RetryAfter, tt.wantKind, tt.wantAfter)
			}
		})
	}
	if o := Classify(401, nil, body("authentication_error", "invalid x-api-key"), 1, now); o.Reason != "401: invalid x-api-key" {
		t.Errorf("Classify(401, …).Reason = %q; want %q", o.Reason, "401: invalid x-api-key")
	}
	if o := Classify(429, http.Header{"Anthropic-Ratelimit-Tokens-Remaining": {"0"}, "Content-Type": {"application/json"}}, nil, 1, now); len(o.Header) != 1 {
		t.Errorf("Classify(429, …).Header = %v; want only the anthropic-ratelimit-* headers", o.Header)
	}
}

// TestWhatEachReplyDoes pins, per upstream reply, what happens to the
// request (tried on another account?) and to the account (cooled down?
// refused?).
func TestWhatEachReplyDoes(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	tooBig := anthropic.ErrorJSON("rate_limit_error", "This request would exceed the rate limit for your organization (x) of 1,000 input tokens per minute.")
	tests := []struct {
		name                         string
		status                       int
		body                         []byte
		wantRetried, wantCooled, off bool
	}{
		{"a success is final", 200, nil, false, false, false},
		{"a 400 is final and spares the account", 400, nil, false, false, false},
		{"a 404 is final and spares the account", 404, nil, false, false, false},
		{"a 413 is final and spares the account", 413, nil, false, false, false},
		{"a 429 is retried and cools the account", 429, nil, true, true, false},
		{"a request-scoped 429 is retried and cools nothing", 429, tooBig, true, false, false},
		{"a 529 is retried and cools the account", 529, nil, true, true, false},
		{"a 500 is retried and cools the account", 500, nil, true, true, false},
		{"no reply is retried and cools the account", 0, nil, true, true, false},
		{"a redirect is retried and cools the account", 308, nil, true, true, false},
		{"a 401 is retried and refuses the account", 401, nil, true, false, true},
		{"a 403 is retried and refuses the account", 403, nil, true, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := New(nil)
			p.SetAccounts([]Account{acct(1)})
			o := Classify(tt.status, nil, tt.body, 20_000, now)
			if got := o.Kind.Retryable(); got != tt.wantRetried {
				t.Errorf("Classify(%d).Kind = %v, Retryable() = %t; want %t", tt.status, o.Kind, got, tt.wantRetried)
			}
			if got := p.Report(1, "m", o, now); (got > 0) != tt.wantCooled {
				t.Errorf("Report(%v) cooldown = %v; want cooled %t", o.Kind, got, tt.wantCooled)
			}
			if st := p.Status(now)[0]; st.Available == tt.off {
				t.Errorf("after Report(%v), Status.Available = %t; want %t", o.Kind, st.Available, !tt.off)
			}
		})
	}
}

func TestOutcomeKindString(t *testing.T) {
	for k := OutcomeSuccess; k <= OutcomeRequestOverLimit; k++ {
		if s := k.String(); s == "" || strings.HasPrefix(s, "OutcomeKind(") {
			t.Errorf("OutcomeKind(%d).String() = %q; want a name", int(k), s)
		}
	}
}
