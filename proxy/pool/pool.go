// Package pool holds Longhaul's upstream accounts and picks one for each
// attempt. It decides in one place whether an account is available (enabled
// in the store, not refused by the upstream since, allowed the model, not
// cooling down for it), keeps sessions on their account, cools accounts down
// after rate limits and overloads, counts usage, keeps the latest quota
// headers, maps model names per account, and classifies upstream replies
// into the outcomes it learns from. It is state behind a mutex: decisions
// take the caller's clock, cooldowns are timestamps, nothing runs in the
// background.
//
// The pool never changes an account: the store's row owns Enabled, and
// SetAccounts is how the pool learns it.
package pool

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// Pool holds the upstream accounts and their runtime state, and picks one for
// each attempt: the session's account while it is available (upstream prompt
// caches are per account), else the policy's choice among available ones.
type Pool struct {
	mu          sync.Mutex
	accounts    []Account        // as the last SetAccounts gave them
	states      []*state         // states[i] belongs to accounts[i]
	byID        map[int64]*state // the same states, by account id
	selector    Selector
	policy      string
	affinity    bool
	sessions    *affinityTable
	onRevoke    func(accountID int64, reason string)
	scratch     []Candidate
	serving     []Account // preferenceLocked's scratch
	leastWindow time.Duration
}

// Cooldowns when the upstream does not say how long to wait. A rate limit
// starts at 30 s (per-minute limits refill within a minute) and doubles while
// it repeats, up to 30 min, so an account at a longer cap is still tried now
// and then. An overload is the upstream's trouble rather than the account's
// quota, so it starts shorter and stops doubling sooner.
const (
	rateLimitBase = 30 * time.Second
	rateLimitCap  = 30 * time.Minute
	overloadBase  = 10 * time.Second
	overloadCap   = 5 * time.Minute
)

// Session affinity: a binding outlives the upstream's prompt cache (five
// minutes, or an hour when the client asks), and the table stays bounded
// however many sessions pass through.
const (
	affinityTTL      = time.Hour
	affinityCapacity = 10000
)

// New returns an empty round-robin pool with session affinity.
// onRevoke, if not nil, is told once when a 401/403 makes the pool stop
// using an account, so the app can persist it (see SetAccounts); it is
// called with the pool's lock released and must not block.
func New(onRevoke func(accountID int64, reason string)) *Pool {
	sel, _ := NewSelector(PolicyRoundRobin) //nolint:errcheck // known policy
	return &Pool{
		selector: sel, policy: PolicyRoundRobin, affinity: true,
		byID:     map[int64]*state{},
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

// SetAccounts replaces the accounts with the store's view of them, which is
// the truth about which are enabled. Cooldowns, usage and quota of accounts
// that stay are kept.
//
// Refusals are not kept. A 401/403 makes the pool stop using an account at
// once and tell the onRevoke hook; the app persists enabled=false and pushes
// the accounts again, and from then on that push is what keeps the account
// off. A push read from the store before the app persisted the refusal can
// bring the account back for a moment. That is harmless: its next attempt
// gets the same 401/403 before any byte reaches the client, which refuses
// the account again (and tells the hook again), and the request moves on to
// another account. Keeping refusals across pushes instead would mean telling
// such a stale push from the user re-enabling the account: a second copy of
// the store's state, reconciled by timestamps.
func (p *Pool) SetAccounts(accounts []Account) {
	cp := slices.Clone(accounts)
	p.mu.Lock()
	defer p.mu.Unlock()
	states := make([]*state, len(cp))
	byID := make(map[int64]*state, len(cp))
	for i, a := range cp {
		st := p.byID[a.ID]
		if st == nil {
			st = &state{}
		}
		st.refused = ""
		states[i], byID[a.ID] = st, st
	}
	p.accounts, p.states, p.byID = cp, states, byID
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
	prefer := p.preferenceLocked(&pick)
	if p.affinity && pick.SessionID != "" {
		if i, ok := p.boundLocked(pick, prefer, now); ok {
			p.sessions.put(pick.SessionID, p.accounts[i].ID, now)
			p.states[i].usage.add(now, 1, 0, 0)
			return p.accounts[i], nil
		}
	}
	cands := p.scratch[:0]
	_, needsUsage := p.selector.(leastUsed)
	for i, a := range p.accounts {
		st := p.states[i]
		if slices.Contains(pick.Exclude, a.ID) || !pick.serves(a) || (prefer != nil && !prefer(a)) || !st.availableFor(a, pick.sent(a), now) {
			continue
		}
		c := Candidate{Account: a}
		if needsUsage {
			c.Requests, c.Tokens, _ = st.usage.sum(now, p.leastWindow)
		}
		cands = append(cands, c)
	}
	p.scratch = cands
	if len(cands) == 0 {
		return Account{}, p.explainLocked(pick, prefer, now)
	}
	a := cands[p.selector.Select(cands)].Account
	clear(p.scratch[:len(cands)]) // drop references to secrets
	if p.affinity && pick.SessionID != "" {
		p.sessions.put(pick.SessionID, a.ID, now)
	}
	p.byID[a.ID].usage.add(now, 1, 0, 0)
	return a, nil
}

// preferenceLocked is the routing preference (see preference) among the accounts that could
// serve the pick at all: usable, of an allowed kind, allowed the model.
func (p *Pool) preferenceLocked(pick *Pick) func(Account) bool {
	serving := p.serving[:0]
	for i, a := range p.accounts {
		if p.states[i].usable(a) && pick.serves(a) {
			serving = append(serving, a)
		}
	}
	prefer := preference(pick.ModelMap, pick.Model, serving)
	clear(serving) // drop references to secrets
	p.serving = serving
	return prefer
}

// boundLocked finds the account the session is bound to, if it is available
// for this pick; it returns the account's index.
func (p *Pool) boundLocked(pick Pick, prefer func(Account) bool, now time.Time) (int, bool) {
	id, ok := p.sessions.get(pick.SessionID, now)
	if !ok || slices.Contains(pick.Exclude, id) {
		return 0, false
	}
	i := slices.IndexFunc(p.accounts, func(a Account) bool { return a.ID == id })
	if i < 0 || !pick.serves(p.accounts[i]) || (prefer != nil && !prefer(p.accounts[i])) {
		return 0, false
	}
	return i, p.states[i].availableFor(p.accounts[i], pick.sent(p.accounts[i]), now)
}

// explainLocked builds the 503 message: why nothing is available and, when
// accounts are cooling down, when the soonest frees up.
func (p *Pool) explainLocked(pick Pick, prefer func(Account) bool, now time.Time) error {
	var usable, serving int
	var soonest time.Time
	var soonestName string
	for i, a := range p.accounts {
		st := p.states[i]
		if !st.usable(a) {
			continue
		}
		usable++
		if !pick.serves(a) || (prefer != nil && !prefer(a)) {
			continue
		}
		serving++
		if until, cooling := st.coolingUntil(pick.sent(a), now); cooling && !slices.Contains(pick.Exclude, a.ID) {
			if soonest.IsZero() || until.Before(soonest) {
				soonest, soonestName = until, a.Name()
			}
		}
	}
	switch {
	case len(p.accounts) == 0:
		return &NoAccountError{Reason: "no upstream account is configured; add one with `longhaul account add`"}
	case usable == 0:
		return &NoAccountError{Reason: "all upstream accounts are disabled"}
	case serving == 0:
		return &NoAccountError{Reason: fmt.Sprintf("no enabled account serves model %q (account kinds configured: %s)", pick.Model, p.kindsLocked()), Unserved: true}
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

// kindsLocked lists the kinds of the enabled accounts, for messages.
func (p *Pool) kindsLocked() string {
	var kinds []string
	for i, a := range p.accounts {
		if p.states[i].usable(a) && !slices.Contains(kinds, a.KindOf()) {
			kinds = append(kinds, a.KindOf())
		}
	}
	if len(kinds) == 0 {
		return "none enabled"
	}
	return strings.Join(kinds, ", ")
}

// Report records how an attempt on an account went, for the model it was sent (after the
// model map), and returns the cooldown
// it caused (zero if none). An account no longer configured is ignored: there
// is nothing left to cool down or refuse.
func (p *Pool) Report(accountID int64, model string, o Outcome, now time.Time) time.Duration {
	p.mu.Lock()
	st := p.byID[accountID]
	if st == nil {
		p.mu.Unlock()
		return 0
	}
	cooldown, refused := st.report(model, o, now)
	p.mu.Unlock()
	if refused != "" && p.onRevoke != nil {
		p.onRevoke(accountID, refused)
	}
	return cooldown
}

// Bound returns the account session is bound to (session affinity), if any and still
// configured, without picking it: what a request of the session will most likely be sent to.
func (p *Pool) Bound(session string, now time.Time) (Account, bool) {
	if session == "" {
		return Account{}, false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.affinity {
		return Account{}, false
	}
	id, ok := p.sessions.get(session, now)
	if !ok {
		return Account{}, false
	}
	st := p.byID[id]
	if st == nil {
		return Account{}, false
	}
	for _, a := range p.accounts {
		if a.ID == id {
			return a, true
		}
	}
	return Account{}, false
}
