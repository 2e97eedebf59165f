package pool

import (
	"sort"
	"time"
)

// AccountStatus is the pool's view of one account, for the UI.
type AccountStatus struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
	// Available: enabled and not refused by the upstream. Cooldowns are per
	// model, in CoolingUntil.
	Available bool `json:"available"`
	// DisabledBy is the upstream's reason when a 401/403 stopped the pool
	// using the account and no SetAccounts has come since; after it, the
	// store's row carries the reason.
	DisabledBy    string               `json:"disabledReason,omitempty"`
	CoolingUntil  map[string]time.Time `json:"coolingUntil,omitempty"` // per model
	RateLimit     map[string]string    `json:"rateLimit,omitempty"`    // latest anthropic-ratelimit-* values
	RateLimitAt   time.Time            `json:"rateLimitAt,omitzero"`
	Requests      int64                `json:"requests"` // in the last hour
	Tokens        int64                `json:"tokens"`
	Errors        int64                `json:"errors"`
	SessionsBound int                  `json:"sessionsBound"`
}

// Status reports every account's availability, cooldowns, quota and usage.
func (p *Pool) Status(now time.Time) []AccountStatus {
	p.mu.Lock()
	defer p.mu.Unlock()
	bound := p.sessions.countByAccount(now)
	out := make([]AccountStatus, 0, len(p.accounts))
	for i, a := range p.accounts {
		s := p.states[i]
		st := AccountStatus{ID: a.ID, Name: a.Name(), Available: s.usable(a), DisabledBy: s.refused, SessionsBound: bound[a.ID]}
		for model := range s.health {
			if until, cooling := s.coolingUntil(model, now); cooling {
				if st.CoolingUntil == nil {
					st.CoolingUntil = map[string]time.Time{}
				}
				st.CoolingUntil[model] = until
			}
		}
		if q := s.quota; q.header != nil {
			st.RateLimit, st.RateLimitAt = map[string]string{}, q.at
			keys := make([]string, 0, len(q.header))
			for k := range q.header {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				st.RateLimit[k] = q.header.Get(k)
			}
		}
		st.Requests, st.Tokens, st.Errors = s.usage.sum(now, usageBuckets*time.Minute)
		out = append(out, st)
	}
	return out
}
