package proxy

import (
	"errors"
	"slices"
	"sync"
)

// Account is an upstream credential the proxy can forward to.
type Account struct {
	ID      int64
	Label   string
	Kind    string // "anthropic"; room for "openai-compatible" and "gemini"
	BaseURL string // e.g. https://api.anthropic.com
	Secret  string
	Enabled bool
	Models  []string // allow-list; empty means any model
}

// MaskedSecret shows enough of a secret to recognise it and no more.
func MaskedSecret(secret string) string {
	if len(secret) < 12 {
		return "…"
	}
	return secret[:3] + "…" + secret[len(secret)-4:]
}

// Name is how an account appears in logs and the monitor: never the secret.
func (a Account) Name() string {
	if a.Label != "" {
		return a.Label
	}
	return MaskedSecret(a.Secret)
}

// Pick describes the request an account is chosen for.
type Pick struct {
	Model     string
	SessionID string
	// Exclude lists accounts that already failed this request.
	Exclude []int64
}

// Selector chooses one account among the candidates that are usable for the
// pick; ok is false when none fits. The rotation issue adds policies here.
type Selector interface {
	Select(candidates []Account, pick Pick) (Account, bool)
}

// FirstAvailable picks the first candidate: the order accounts were given in.
type FirstAvailable struct{}

// Select implements Selector.
func (FirstAvailable) Select(candidates []Account, _ Pick) (Account, bool) {
	if len(candidates) == 0 {
		return Account{}, false
	}
	return candidates[0], true
}

var _ Selector = FirstAvailable{}

// ErrNoAccount means no account can serve the request; *NoAccountError says why.
var ErrNoAccount = errors.New("no usable upstream account")

// Pool holds the accounts and applies the Selector to the usable ones.
type Pool struct {
	selector Selector

	mu       sync.RWMutex
	accounts []Account
}

// NewPool returns an empty pool; a nil selector means FirstAvailable.
func NewPool(selector Selector) *Pool {
	if selector == nil {
		selector = FirstAvailable{}
	}
	return &Pool{selector: selector}
}

// SetAccounts replaces the accounts; requests already forwarded are unaffected.
func (p *Pool) SetAccounts(accounts []Account) {
	cp := make([]Account, len(accounts))
	copy(cp, accounts)
	p.mu.Lock()
	p.accounts = cp
	p.mu.Unlock()
}

// Accounts returns a copy of the configured accounts.
func (p *Pool) Accounts() []Account {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return slices.Clone(p.accounts)
}

// Pick chooses an account for the request or explains why none fits.
func (p *Pool) Pick(pick Pick) (Account, error) {
	p.mu.RLock()
	accounts := p.accounts
	p.mu.RUnlock()
	var candidates []Account
	enabled := 0
	for _, a := range accounts {
		if !a.Enabled {
			continue
		}
		enabled++
		if slices.Contains(pick.Exclude, a.ID) || (len(a.Models) > 0 && !slices.Contains(a.Models, pick.Model)) {
			continue
		}
		candidates = append(candidates, a)
	}
	if a, ok := p.selector.Select(candidates, pick); ok {
		return a, nil
	}
	switch {
	case len(accounts) == 0:
		return Account{}, &NoAccountError{Reason: "no upstream account is configured; add one with `longhaul account add`"}
	case enabled == 0:
		return Account{}, &NoAccountError{Reason: "all upstream accounts are disabled"}
	case len(pick.Exclude) > 0:
		return Account{}, &NoAccountError{Reason: "every usable upstream account failed this request"}
	default:
		return Account{}, &NoAccountError{Reason: "no enabled account serves model " + pick.Model}
	}
}

// NoAccountError explains why no account was picked.
type NoAccountError struct{ Reason string }

func (e *NoAccountError) Error() string { return e.Reason }
func (e *NoAccountError) Unwrap() error { return ErrNoAccount }
