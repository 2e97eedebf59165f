package pool

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// clock is a fake clock for pool tests.
type clock struct{ t time.Time }

func newClock() *clock                   { return &clock{t: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)} }
func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }
func acct(id int64, opts ...func(*Account)) Account {
	a := Account{ID: id, Label: fmt.Sprintf("acct%d", id), BaseURL: "http://127.0.0.1:1", Secret: "sk-test-secret-000000", Enabled: true, Weight: 1}
	for _, o := range opts {
		o(&a)
	}
	return a
}

func newTestPool(t *testing.T, policy string, affinity bool, accounts ...Account) *Pool {
	t.Helper()
	p := New(nil)
	if err := p.Configure(policy, affinity); err != nil {
		t.Fatal(err)
	}
	p.SetAccounts(accounts)
	return p
}

func picks(t *testing.T, p *Pool, c *clock, n int, pick Pick) []int64 {
	t.Helper()
	var ids []int64
	for range n {
		a, err := p.Pick(pick, c.now())
		if err != nil {
			t.Fatalf("Pick: %v", err)
		}
		ids = append(ids, a.ID)
	}
	return ids
}

func TestPolicies(t *testing.T) {
	tests := []struct {
		name     string
		policy   string
		accounts []Account
		setup    func(p *Pool, c *clock)
		want     string
	}{
		{"round-robin takes turns", PolicyRoundRobin, []Account{acct(1), acct(2), acct(3)}, nil, "[1 2 3 1 2 3]"},
		{"round-robin skips a cooling account and resumes", PolicyRoundRobin, []Account{acct(1), acct(2), acct(3)},
			func(p *Pool, c *clock) {
				p.Report(2, "m", Outcome{Kind: OutcomeRateLimited, RetryAfter: time.Hour}, c.now())
			}, "[1 3 1 3 1 3]"},
		{"fill-first stays on the highest priority", PolicyFillFirst, []Account{acct(1), acct(2, func(a *Account) { a.Priority = 5 }), acct(3)}, nil, "[2 2 2 2 2 2]"},
		{"fill-first moves on when the first is limited", PolicyFillFirst, []Account{acct(1), acct(2, func(a *Account) { a.Priority = 5 }), acct(3)},
			func(p *Pool, c *clock) {
				p.Report(2, "m", Outcome{Kind: OutcomeRateLimited, RetryAfter: time.Hour}, c.now())
			}, "[1 1 1 1 1 1]"},
		{"least-used evens out requests", PolicyLeastUsed, []Account{acct(1), acct(2), acct(3)},
			func(p *Pool, c *clock) {
				for range 3 {
					p.Pick(Pick{Model: "m", Exclude: []int64{2, 3}}, c.now())
				}
			}, "[2 3 2 3 2 3]"},
		{"weighted is smooth and proportional", PolicyWeighted, []Account{acct(1, func(a *Account) { a.Weight = 4 }), acct(2), acct(3, func(a *Account) { a.Weight = 1 })}, nil, "[1 1 2 1 3 1]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClock()
			p := newTestPool(t, tt.policy, false, tt.accounts...)
			if tt.setup != nil {
				tt.setup(p, c)
			}
			if got := fmt.Sprint(picks(t, p, c, 6, Pick{Model: "m"})); got != tt.want {
				t.Errorf("picks = %s; want %s", got, tt.want)
			}
		})
	}
}

func TestWeightedProportions(t *testing.T) {
	c := newClock()
	p := newTestPool(t, PolicyWeighted, false, acct(1, func(a *Account) { a.Weight = 3 }), acct(2, func(a *Account) { a.Weight = 1 }))
	count := map[int64]int{}
	for _, id := range picks(t, p, c, 400, Pick{Model: "m"}) {
		count[id]++
	}
	if count[1] != 300 || count[2] != 100 {
		t.Errorf("weights 3:1 over 400 picks = %v; want 300:100", count)
	}
}

func TestSessionAffinity(t *testing.T) {
	c := newClock()
	p := newTestPool(t, PolicyRoundRobin, true, acct(1), acct(2), acct(3))
	s := Pick{Model: "m", SessionID: "session-a"}
	first := picks(t, p, c, 1, s)[0]
	if got := picks(t, p, c, 5, s); fmt.Sprint(got) != fmt.Sprint([]int64{first, first, first, first, first}) {
		t.Fatalf("session moved without reason: %v (first %d)", got, first)
	}
	// Another session is spread by the policy, not glued to the first's account.
	if other := picks(t, p, c, 1, Pick{Model: "m", SessionID: "session-b"})[0]; other == first {
		t.Errorf("second session got the same account %d under round-robin", other)
	}
	// Cooldown: the session moves once and sticks to its new account...
	p.Report(first, "m", Outcome{Kind: OutcomeRateLimited, RetryAfter: time.Minute}, c.now())
	moved := picks(t, p, c, 1, s)[0]
	if moved == first {
		t.Fatal("session stayed on a cooling account")
	}
	if got := picks(t, p, c, 4, s); fmt.Sprint(got) != fmt.Sprint([]int64{moved, moved, moved, moved}) {
		t.Errorf("after moving, picks = %v; want to stick to %d", got, moved)
	}
	// ...even after the first account recovers (hopping back would throw the new cache away).
	c.advance(2 * time.Minute)
	if got := picks(t, p, c, 1, s)[0]; got != moved {
		t.Errorf("after recovery the session went back to %d; want to stay on %d", got, moved)
	}
	// Idle expiry: after an hour without requests the binding is gone.
	c.advance(time.Hour)
	if _, ok := p.sessions.get("session-a", c.now()); ok {
		t.Error("affinity entry survived an hour idle")
	}
	// Affinity off: the policy rules.
	p.Configure(PolicyRoundRobin, false)
	if got := picks(t, p, c, 3, s); got[0] == got[1] {
		t.Errorf("affinity off, picks = %v; want rotation", got)
	}
}

func TestAffinityTableIsBounded(t *testing.T) {
	c := newClock()
	table := newAffinityTable(3, time.Hour)
	for i := range 5 {
		table.put(fmt.Sprint("s", i), int64(i), c.now())
		c.advance(time.Second)
	}
	table.get("s2", c.now()) // a read does not refresh
	table.put("s2", 2, c.now())
	table.put("s5", 5, c.now())
	if table.order.Len() != 3 {
		t.Fatalf("table holds %d entries; want 3", table.order.Len())
	}
	for _, gone := range []string{"s0", "s1", "s3"} {
		if _, ok := table.get(gone, c.now()); ok {
			t.Errorf("%s survived eviction", gone)
		}
	}
	for _, kept := range []string{"s2", "s4", "s5"} {
		if _, ok := table.get(kept, c.now()); !ok {
			t.Errorf("%s was evicted; want the least recently used out first", kept)
		}
	}
}

func TestCooldowns(t *testing.T) {
	tests := []struct {
		name    string
		reports []Outcome
		want    time.Duration
	}{
		{"429 with retry-after is exact", []Outcome{{Kind: OutcomeRateLimited, RetryAfter: 17 * time.Second}}, 17 * time.Second},
		{"429 without a hint starts at 30s", []Outcome{{Kind: OutcomeRateLimited}}, 30 * time.Second},
		{"429 repeats double", []Outcome{{Kind: OutcomeRateLimited}, {Kind: OutcomeRateLimited}, {Kind: OutcomeRateLimited}}, 2 * time.Minute},
		{"429 backoff is capped at 30m", repeat(Outcome{Kind: OutcomeRateLimited}, 12), 30 * time.Minute},
		{"5xx starts at 10s", []Outcome{{Kind: OutcomeOverloaded}}, 10 * time.Second},
		{"5xx repeats double", []Outcome{{Kind: OutcomeOverloaded}, {Kind: OutcomeOverloaded}}, 20 * time.Second},
		{"5xx retry-after is a floor", []Outcome{{Kind: OutcomeOverloaded, RetryAfter: time.Minute}}, time.Minute},
		{"success resets the backoff", []Outcome{{Kind: OutcomeOverloaded}, {Kind: OutcomeOverloaded}, {Kind: OutcomeSuccess}, {Kind: OutcomeOverloaded}}, 10 * time.Second},
		{"a client error resets the backoff (the account answered)", []Outcome{{Kind: OutcomeOverloaded}, {Kind: OutcomeOverloaded}, {Kind: OutcomeClientError}, {Kind: OutcomeOverloaded}}, 10 * time.Second},
		{"a client error cools nothing", []Outcome{{Kind: OutcomeClientError}}, 0},
		{"request-scoped 429 cools nothing", []Outcome{{Kind: OutcomeRequestOverLimit}}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClock()
			p := newTestPool(t, PolicyRoundRobin, false, acct(1))
			var got time.Duration
			for _, o := range tt.reports {
				got = p.Report(1, "m", o, c.now())
			}
			if got != tt.want {
				t.Errorf("cooldown = %v; want %v", got, tt.want)
			}
			// The account is unavailable for exactly that long, for that model only.
			if tt.want > 0 {
				if _, err := p.Pick(Pick{Model: "m"}, c.now().Add(tt.want-time.Millisecond)); err == nil {
					t.Error("account available before its cooldown ended")
				}
				if _, err := p.Pick(Pick{Model: "other"}, c.now()); err != nil {
					t.Errorf("cooldown leaked to another model: %v", err)
				}
			}
			if _, err := p.Pick(Pick{Model: "m"}, c.now().Add(tt.want)); err != nil {
				t.Errorf("account not available when its cooldown ended: %v", err)
			}
		})
	}
}

func repeat(o Outcome, n int) []Outcome {
	out := make([]Outcome, n)
	for i := range out {
		out[i] = o
	}
	return out
}

func TestNoAccountExplains(t *testing.T) {
	c := newClock()
	tests := []struct {
		name      string
		accounts  []Account
		setup     func(p *Pool)
		wantIn    string
		wantRetry time.Duration
	}{
		{"none configured", nil, nil, "no upstream account is configured", 0},
		{"all disabled", []Account{acct(1, func(a *Account) { a.Enabled = false })}, nil, "all upstream accounts are disabled", 0},
		{"revoked counts as disabled", []Account{acct(1)}, func(p *Pool) {
			p.Report(1, "m", Outcome{Kind: OutcomeRevoked, Reason: "401: invalid x-api-key"}, c.now())
		}, "disabled", 0},
		{"model not served", []Account{acct(1, func(a *Account) { a.Models = []string{"claude-haiku-*"} })}, nil, `no enabled account serves model "m"`, 0},
		{"all cooling names the soonest", []Account{acct(1), acct(2)}, func(p *Pool) {
			p.Report(1, "m", Outcome{Kind: OutcomeRateLimited, RetryAfter: 90 * time.Second}, c.now())
			p.Report(2, "m", Outcome{Kind: OutcomeRateLimited, RetryAfter: 40 * time.Second}, c.now())
		}, "the soonest (acct2) is available at 2026-11-22T10:00:40Z, in 40s", 40 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newTestPool(t, PolicyRoundRobin, true, tt.accounts...)
			if tt.setup != nil {
				tt.setup(p)
			}
			_, err := p.Pick(Pick{Model: "m"}, c.now())
			var na *NoAccountError
			if !errors.As(err, &na) || !errors.Is(err, ErrNoAccount) || !strings.Contains(na.Reason, tt.wantIn) || na.RetryAfter != tt.wantRetry {
				t.Errorf("Pick error = %v (retry %v); want one containing %q, retry %v", err, na, tt.wantIn, tt.wantRetry)
			}
		})
	}
}

// revocations records the pool's onRevoke calls.
type revocations []string

func (r *revocations) hook(id int64, reason string) { *r = append(*r, fmt.Sprint(id, " ", reason)) }

func TestRevokedAccountStopsAtOnceAndIsToldOnce(t *testing.T) {
	c := newClock()
	var told revocations
	p := New(told.hook)
	p.SetAccounts([]Account{acct(1)})
	for range 2 {
		p.Report(1, "m", Outcome{Kind: OutcomeRevoked, Reason: "401: invalid x-api-key"}, c.now())
	}
	if want := (revocations{"1 401: invalid x-api-key"}); fmt.Sprint(told) != fmt.Sprint(want) {
		t.Errorf("onRevoke calls = %q; want %q", told, want)
	}
	if a, err := p.Pick(Pick{Model: "m"}, c.now()); err == nil {
		t.Errorf("Pick after a 401 = account %d; want none", a.ID)
	}
	// A refusal is no cooldown: a day later the account is still off.
	if a, err := p.Pick(Pick{Model: "m"}, c.now().Add(24*time.Hour)); err == nil {
		t.Errorf("Pick a day after a 401 = account %d; want none", a.ID)
	}
	if st := p.Status(c.now()); st[0].Available || st[0].DisabledBy != "401: invalid x-api-key" {
		t.Errorf("Status = %+v; want unavailable, disabled by the upstream's reason", st[0])
	}
}

// After a 401 the store's account row, pushed by SetAccounts, is the only
// truth: the pool does not reconcile it with anything it remembers.
func TestSetAccountsIsTheTruthAfterARevocation(t *testing.T) {
	disabled := func(a *Account) { a.Enabled = false }
	revoked := Outcome{Kind: OutcomeRevoked, Reason: "401: invalid x-api-key"}
	tests := []struct {
		name      string
		pushes    [][]Account // after the 401, in order
		wantUsed  bool        // after the pushes
		then      Outcome     // the upstream's answer when the account is used again
		wantTold  int         // onRevoke calls
		wantShown string      // Status.DisabledBy at the end
	}{
		{name: "the store's disable keeps it off", pushes: [][]Account{{acct(1, disabled)}}, wantTold: 1},
		{name: "the user re-enabling it brings it back", pushes: [][]Account{{acct(1, disabled)}, {acct(1)}},
			wantUsed: true, then: Outcome{Kind: OutcomeSuccess}, wantTold: 1},
		{name: "a stale push brings it back until the next 401", pushes: [][]Account{{acct(1)}},
			wantUsed: true, then: revoked, wantTold: 2, wantShown: revoked.Reason},
		{name: "without a push it stays off", wantTold: 1, wantShown: revoked.Reason},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClock()
			var told revocations
			p := New(told.hook)
			p.SetAccounts([]Account{acct(1)})
			p.Report(1, "m", revoked, c.now())
			for _, accounts := range tt.pushes {
				p.SetAccounts(accounts)
			}
			a, err := p.Pick(Pick{Model: "m"}, c.now())
			if used := err == nil; used != tt.wantUsed {
				t.Fatalf("Pick = %v, %v; want used %t", a.ID, err, tt.wantUsed)
			}
			if err == nil {
				p.Report(a.ID, "m", tt.then, c.now())
			}
			if len(told) != tt.wantTold {
				t.Errorf("onRevoke calls = %q; want %d", told, tt.wantTold)
			}
			if got := p.Status(c.now())[0].DisabledBy; got != tt.wantShown {
				t.Errorf("Status.DisabledBy = %q; want %q", got, tt.wantShown)
			}
		})
	}
}

func TestSetAccountsKeepsWhatThePoolLearned(t *testing.T) {
	c := newClock()
	p := newTestPool(t, PolicyRoundRobin, false, acct(1), acct(2))
	p.Report(1, "m", Outcome{Kind: OutcomeRateLimited, RetryAfter: time.Minute}, c.now())
	p.SetAccounts([]Account{acct(1, func(a *Account) { a.Label = "renamed" })})
	st := p.Status(c.now())
	if len(st) != 1 || !st[0].CoolingUntil["m"].Equal(c.now().Add(time.Minute)) || st[0].Errors != 1 {
		t.Errorf("Status after SetAccounts = %+v; want account 1 still cooling until +1m with 1 error", st)
	}
	// A report on an account that was removed meanwhile is ignored.
	if got := p.Report(2, "m", Outcome{Kind: OutcomeRateLimited, RetryAfter: time.Minute}, c.now()); got != 0 {
		t.Errorf("Report(removed account) = %v; want 0", got)
	}
}

func BenchmarkPickAndReport100Accounts(b *testing.B) {
	c := newClock()
	accounts := make([]Account, 100)
	for i := range accounts {
		accounts[i] = acct(int64(i + 1))
	}
	for _, bc := range []struct {
		policy   string
		sessions bool
	}{{PolicyRoundRobin, true}, {PolicyRoundRobin, false}, {PolicyLeastUsed, false}, {PolicyWeighted, false}} {
		name := bc.policy
		if !bc.sessions {
			name += "/no-session"
		}
		policy := bc.policy
		b.Run(name, func(b *testing.B) {
			p := New(nil)
			p.Configure(policy, true)
			p.SetAccounts(accounts)
			for i := range 30 { // some accounts cooling
				p.Report(int64(i*3+1), "m", Outcome{Kind: OutcomeRateLimited, RetryAfter: time.Hour}, c.now())
			}
			sessions := make([]string, 64)
			for i := range sessions {
				sessions[i] = fmt.Sprint("session-", i)
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				pick := Pick{Model: "m"}
				if bc.sessions {
					pick.SessionID = sessions[i%len(sessions)]
				}
				a, err := p.Pick(pick, c.now())
				if err != nil {
					b.Fatal(err)
				}
				p.Report(a.ID, "m", Outcome{Kind: OutcomeSuccess, Tokens: 1000}, c.now())
				i++
			}
		})
	}
}
