package pool

import (
	"net/http"
	"slices"
	"time"

	"longhaul/proxy/modelname"
)

// state is what the pool has learned about one account at runtime: nothing
// here is stored, and none of it is a copy of the account's own fields.
type state struct {
	// refused is the upstream's reason after a 401/403, until the next
	// SetAccounts brings the store's verdict ("" while not refused).
	refused string
	health  map[string]*health // by model
	usage   usageWindow
	quota   quotaSnapshot
}

// health is an account's failure streak for one model and when its cooldown
// ends (a timestamp compared with the caller's clock: no timers).
type health struct {
	until    time.Time
	failures int // consecutive, for exponential backoff
}

type quotaSnapshot struct {
	header http.Header // the latest anthropic-ratelimit-* headers
	at     time.Time
}

// availableFor is the one answer to "may this account, known to serve the model (Pick.serves,
// which counts the model map), serve it now": enabled in the store, not refused by the
// upstream since, and not cooling down for it. Pick, its 503 explanation and Status derive
// from it and its parts.
func (s *state) availableFor(a Account, model string, now time.Time) bool {
	if !s.usable(a) {
		return false
	}
	_, cooling := s.coolingUntil(model, now)
	return !cooling
}

// usable is the account-wide part of available: enabled and not refused.
func (s *state) usable(a Account) bool {
	return a.Enabled && s.refused == ""
}

// serves reports whether the account's model allow-list admits model.
func serves(a Account, model string) bool {
	return len(a.Models) == 0 || slices.ContainsFunc(a.Models, func(m string) bool { return modelname.Match(m, model) })
}

// coolingUntil reports whether the account is cooling down for model at now,
// and until when.
func (s *state) coolingUntil(model string, now time.Time) (time.Time, bool) {
	if h := s.health[model]; h != nil && now.Before(h.until) {
		return h.until, true
	}
	return time.Time{}, false
}

// report applies an outcome. It returns the cooldown it caused, and the
// reason when it is the refusal that stops the account (once per refusal).
func (s *state) report(model string, o Outcome, now time.Time) (cooldown time.Duration, refused string) {
	if o.Header != nil {
		s.quota = quotaSnapshot{header: o.Header, at: now}
	}
	switch o.Kind {
	case OutcomeSuccess, OutcomeClientError:
		delete(s.health, model) // the account answered: its failure streak ends
		s.usage.add(now, 0, o.Tokens, 0)
	case OutcomeRateLimited, OutcomeOverloaded:
		cooldown = s.cool(model, o, now)
		s.usage.add(now, 0, 0, 1)
	case OutcomeRevoked:
		if s.refused == "" {
			s.refused = o.Reason
			if s.refused == "" {
				s.refused = "refused by the upstream"
			}
			refused = s.refused
		}
		s.usage.add(now, 0, 0, 1)
	case OutcomeRequestOverLimit:
		s.usage.add(now, 0, 0, 1)
	}
	return cooldown, refused
}

// cool starts or extends a cooldown for model: exponential from the
// outcome's base while failures repeat, unless the upstream said how long.
func (s *state) cool(model string, o Outcome, now time.Time) time.Duration {
	if s.health == nil {
		s.health = map[string]*health{}
	}
	h := s.health[model]
	if h == nil {
		h = &health{}
		s.health[model] = h
	}
	h.failures++
	base, ceiling := overloadBase, overloadCap
	if o.Kind == OutcomeRateLimited {
		base, ceiling = rateLimitBase, rateLimitCap
	}
	d := min(base<<min(h.failures-1, 16), ceiling)
	if o.RetryAfter > 0 {
		// The upstream said when: for 429 that is exact; for 5xx it is a floor.
		if o.Kind == OutcomeRateLimited {
			d = o.RetryAfter
		} else {
			d = max(d, o.RetryAfter)
		}
	}
	h.until = now.Add(d)
	return d
}

// usageWindow counts per minute over the last hour, in a ring.
const usageBuckets = 60

type usageWindow struct {
	buckets [usageBuckets]struct {
		minute                   int64
		requests, tokens, errors int64
	}
}

func (u *usageWindow) add(now time.Time, requests, tokens, errs int64) {
	m := now.Unix() / 60
	b := &u.buckets[m%usageBuckets]
	if b.minute != m {
		b.minute, b.requests, b.tokens, b.errors = m, 0, 0, 0
	}
	b.requests += requests
	b.tokens += tokens
	b.errors += errs
}

// sum adds up the buckets of the last window (whole minutes, at most an hour),
// visiting only those minutes' buckets.
func (u *usageWindow) sum(now time.Time, window time.Duration) (requests, tokens, errs int64) {
	m := now.Unix() / 60
	for k := range min(int64(window/time.Minute), usageBuckets) {
		b := &u.buckets[(m-k)%usageBuckets]
		if b.minute == m-k {
			requests += b.requests
			tokens += b.tokens
			errs += b.errors
		}
	}
	return requests, tokens, errs
}
