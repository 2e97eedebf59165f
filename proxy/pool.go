package proxy

import (
	"container/list"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"sync"
	"time"

	"longhaul/proxy/modelname"
)

// Pool holds the upstream accounts and their health, and picks one for each
// attempt: the session's account while it is available (upstream prompt
// caches are per account), else the policy's choice among available ones.
// Cooldowns are timestamps per (account, model) compared with the caller's
// clock: no timers, no goroutines.
type Pool struct {
	mu          sync.Mutex
	accounts    []Account
	selector    Selector
	policy      string
	affinity    bool
	health      map[string]map[int64]*health // model → account → health
	revoked     map[int64]revocation
	usage       map[int64]*usageWindow
	quota       map[int64]quotaSnapshot
	sessions    *affinityTable
	onRevoke    func(accountID int64, reason string)
	scratch     []Candidate
	leastWindow time.Duration
}

type health struct {
	until    time.Time
	failures int // consecutive, for exponential backoff
	lastKind OutcomeKind
}

type revocation struct {
	reason string
	at     time.Time
}

type quotaSnapshot struct {
	header http.Header
	at     time.Time
}

// Cooldown shapes (SPEC §2).
const (
	rateLimitBase    = 30 * time.Second
	rateLimitCap     = 30 * time.Minute
	overloadBase     = 10 * time.Second
	overloadCap      = 5 * time.Minute
	affinityTTL      = time.Hour
	affinityCapacity = 10000
)

// NewPool returns an empty round-robin pool with session affinity.
// onRevoke, if not nil, is told when a 401/403 disables an account; it is
// called with the pool's lock released and must not block.
func NewPool(onRevoke func(accountID int64, reason string)) *Pool {
	sel, _ := NewSelector(PolicyRoundRobin) //nolint:errcheck // known policy
	return &Pool{
		selector: sel, policy: PolicyRoundRobin, affinity: true,
		health: map[string]map[int64]*health{}, revoked: map[int64]revocation{},
		usage: map[int64]*usageWindow{}, quota: map[int64]quotaSnapshot{},
		sessions: newAffinityTable(affinityCapacity, affinityTTL), onRevoke: onRevoke,
		leastWindow: 5 * time.Minute,
	}
}

// Configure sets the policy and session affinity; the policy's state (turns,
// weights) restarts only when the policy changes.
func (p *Pool) Configure(policy string, affinity bool) error {
	if policy == "" {
		policy = PolicyRoundRobin
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if policy != p.policy {
		sel, err := NewSelector(policy)
		if err != nil {
			return err
		}
		p.selector, p.policy = sel, policy
	}
	p.affinity = affinity
	return nil
}

// SetAccounts replaces the accounts. Health and usage of accounts that stay
// are kept; an account the proxy disabled stays disabled unless the user
// changed it since.
func (p *Pool) SetAccounts(accounts []Account) {
	cp := slices.Clone(accounts)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.accounts = cp
	for id, r := range p.revoked {
		i := slices.IndexFunc(cp, func(a Account) bool { return a.ID == id })
		if i < 0 || cp[i].UpdatedAt.After(r.at) {
			delete(p.revoked, id)
		}
	}
}

// Accounts returns a copy of the configured accounts.
func (p *Pool) Accounts() []Account {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.accounts)
}

// Pick chooses an account for one attempt, or explains why none fits.
func (p *Pool) Pick(pick Pick, now time.Time) (Account, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.affinity && pick.SessionID != "" {
		if id, ok := p.sessions.get(pick.SessionID, now); ok && !slices.Contains(pick.Exclude, id) {
			for _, a := range p.accounts {
				if a.ID == id && p.usableLocked(a, pick.Model) && !p.coolingLocked(a.ID, pick.Model, now) {
					p.sessions.put(pick.SessionID, id, now)
					p.usageLocked(a.ID).add(now, 1, 0, 0)
					return a, nil
				}
			}
		}
	}
	cands := p.scratch[:0]
	cooling := p.health[pick.Model]
	_, needsUsage := p.selector.(leastUsed)
	for _, a := range p.accounts {
		if !p.usableLocked(a, pick.Model) || slices.Contains(pick.Exclude, a.ID) {
			continue
		}
		if h := cooling[a.ID]; h != nil && now.Before(h.until) {
			continue
		}
		c := Candidate{Account: a}
		if needsUsage {
			c.Requests, c.Tokens, _ = p.usageLocked(a.ID).sum(now, p.leastWindow)
		}
		cands = append(cands, c)
	}
	p.scratch = cands
	if len(cands) == 0 {
		return Account{}, p.explainLocked(pick, now)
	}
	a := cands[p.selector.Select(cands)].Account
	clear(p.scratch[:len(cands)]) // drop references to secrets
	if p.affinity && pick.SessionID != "" {
		p.sessions.put(pick.SessionID, a.ID, now)
	}
	p.usageLocked(a.ID).add(now, 1, 0, 0)
	return a, nil
}

func (p *Pool) usableLocked(a Account, model string) bool {
	if !a.Enabled {
		return false
	}
	if _, revoked := p.revoked[a.ID]; revoked {
		return false
	}
	return len(a.Models) == 0 || slices.ContainsFunc(a.Models, func(m string) bool { return modelname.Match(m, model) })
}

func (p *Pool) coolingLocked(id int64, model string, now time.Time) bool {
	h := p.health[model][id]
	return h != nil && now.Before(h.until)
}

func (p *Pool) usageLocked(id int64) *usageWindow {
	u := p.usage[id]
	if u == nil {
		u = &usageWindow{}
		p.usage[id] = u
	}
	return u
}

// explainLocked builds the 503 message: why nothing is available and, when
// accounts are cooling down, when the soonest frees up.
func (p *Pool) explainLocked(pick Pick, now time.Time) error {
	var enabled, serving int
	var soonest time.Time
	var soonestName string
	for _, a := range p.accounts {
		if !a.Enabled {
			continue
		}
		if _, revoked := p.revoked[a.ID]; revoked {
			continue
		}
		enabled++
		if !p.usableLocked(a, pick.Model) {
			continue
		}
		serving++
		if h := p.health[pick.Model][a.ID]; h != nil && now.Before(h.until) && !slices.Contains(pick.Exclude, a.ID) {
			if soonest.IsZero() || h.until.Before(soonest) {
				soonest, soonestName = h.until, a.Name()
			}
		}
	}
	switch {
	case len(p.accounts) == 0:
		return &NoAccountError{Reason: "no upstream account is configured; add one with `longhaul account add`"}
	case enabled == 0:
		return &NoAccountError{Reason: "all upstream accounts are disabled"}
	case serving == 0:
		return &NoAccountError{Reason: fmt.Sprintf("no enabled account serves model %q", pick.Model)}
	case !soonest.IsZero():
		wait := soonest.Sub(now)
		return &NoAccountError{
			Reason:     fmt.Sprintf("all accounts for %s are cooling down after rate limits or errors; the soonest (%s) is available at %s, in %s", pick.Model, soonestName, soonest.UTC().Format(time.RFC3339), wait.Round(time.Second)),
			RetryAfter: wait,
		}
	default:
		return &NoAccountError{Reason: "every available account failed this request"}
	}
}

// Report records how an attempt on an account went and returns the cooldown
// it caused (zero if none).
func (p *Pool) Report(accountID int64, model string, o Outcome, now time.Time) time.Duration {
	p.mu.Lock()
	var cooldown time.Duration
	var revokedReason string
	if o.Header != nil {
		p.quota[accountID] = quotaSnapshot{header: o.Header, at: now}
	}
	u := p.usageLocked(accountID)
	byAccount := p.health[model]
	switch o.Kind {
	case OutcomeSuccess:
		delete(byAccount, accountID)
		u.add(now, 0, o.Tokens, 0)
	case OutcomeRateLimited, OutcomeOverloaded:
		if byAccount == nil {
			byAccount = map[int64]*health{}
			p.health[model] = byAccount
		}
		h := byAccount[accountID]
		if h == nil {
			h = &health{}
			byAccount[accountID] = h
		}
		h.failures++
		h.lastKind = o.Kind
		base, ceiling := overloadBase, overloadCap
		if o.Kind == OutcomeRateLimited {
			base, ceiling = rateLimitBase, rateLimitCap
		}
		cooldown = min(base<<min(h.failures-1, 16), ceiling)
		if o.RetryAfter > 0 {
			// The upstream said when: for 429 that is exact; for 5xx it is a floor.
			if o.Kind == OutcomeRateLimited {
				cooldown = o.RetryAfter
			} else {
				cooldown = max(cooldown, o.RetryAfter)
			}
		}
		h.until = now.Add(cooldown)
		u.add(now, 0, 0, 1)
	case OutcomeRevoked:
		if _, already := p.revoked[accountID]; !already {
			p.revoked[accountID] = revocation{reason: o.Reason, at: now}
			revokedReason = o.Reason
		}
		u.add(now, 0, 0, 1)
	case OutcomeRequestRejected:
		u.add(now, 0, 0, 1)
	}
	p.mu.Unlock()
	if revokedReason != "" && p.onRevoke != nil {
		p.onRevoke(accountID, revokedReason)
	}
	return cooldown
}

// AccountStatus is the pool's view of one account, for the UI.
type AccountStatus struct {
	ID            int64                `json:"id"`
	Name          string               `json:"name"`
	Available     bool                 `json:"available"`
	DisabledBy    string               `json:"disabledReason,omitempty"` // set when a 401/403 disabled it
	CoolingUntil  map[string]time.Time `json:"coolingUntil,omitempty"`   // per model
	RateLimit     map[string]string    `json:"rateLimit,omitempty"`      // latest anthropic-ratelimit-* values
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
	for _, a := range p.accounts {
		st := AccountStatus{ID: a.ID, Name: a.Name(), SessionsBound: bound[a.ID]}
		if r, ok := p.revoked[a.ID]; ok {
			st.DisabledBy = r.reason
		}
		st.Available = a.Enabled && st.DisabledBy == ""
		for model, byAccount := range p.health {
			if h := byAccount[a.ID]; h != nil && now.Before(h.until) {
				if st.CoolingUntil == nil {
					st.CoolingUntil = map[string]time.Time{}
				}
				st.CoolingUntil[model] = h.until
			}
		}
		if q, ok := p.quota[a.ID]; ok {
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
		st.Requests, st.Tokens, st.Errors = p.usageLocked(a.ID).sum(now, usageBuckets*time.Minute)
		out = append(out, st)
	}
	return out
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

// affinityTable binds sessions to accounts, least recently used first out,
// with idle expiry: bounded memory however many sessions pass through.
type affinityTable struct {
	capacity int
	ttl      time.Duration
	order    *list.List // front = most recent
	byID     map[string]*list.Element
}

type binding struct {
	session  string
	account  int64
	lastUsed time.Time
}

func newAffinityTable(capacity int, ttl time.Duration) *affinityTable {
	return &affinityTable{capacity: capacity, ttl: ttl, order: list.New(), byID: map[string]*list.Element{}}
}

func (t *affinityTable) get(session string, now time.Time) (int64, bool) {
	e, ok := t.byID[session]
	if !ok {
		return 0, false
	}
	b := e.Value.(*binding)
	if now.Sub(b.lastUsed) >= t.ttl {
		t.order.Remove(e)
		delete(t.byID, session)
		return 0, false
	}
	return b.account, true
}

func (t *affinityTable) put(session string, account int64, now time.Time) {
	if e, ok := t.byID[session]; ok {
		b := e.Value.(*binding)
		b.account, b.lastUsed = account, now
		t.order.MoveToFront(e)
		return
	}
	t.byID[session] = t.order.PushFront(&binding{session: session, account: account, lastUsed: now})
	for t.order.Len() > t.capacity {
		oldest := t.order.Back()
		t.order.Remove(oldest)
		delete(t.byID, oldest.Value.(*binding).session)
	}
}

func (t *affinityTable) countByAccount(now time.Time) map[int64]int {
	out := map[int64]int{}
	for e := t.order.Front(); e != nil; e = e.Next() {
		if b := e.Value.(*binding); now.Sub(b.lastUsed) < t.ttl {
			out[b.account]++
		}
	}
	return out
}
