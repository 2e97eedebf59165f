package app

import (
	"context"
	"sync"
)

// Revocations carries the accounts an upstream refused (401/403) from the proxy's request path
// to the App, which persists them. Main builds it before the proxy and hands Revoke to the
// proxy as its OnAccountRevoked hook; the App, built after the proxy, drains it. Revocations
// of one account coalesce (the latest reason wins); nothing is ever dropped.
type Revocations struct {
	mu      sync.Mutex
	pending map[int64]string // account id → why
	wake    chan struct{}
}

// NewRevocations returns an empty sink.
func NewRevocations() *Revocations {
	return &Revocations{pending: map[int64]string{}, wake: make(chan struct{}, 1)}
}

// Revoke notes that the upstream refused the account's key. It never blocks: the proxy calls
// it on the request path, having already stopped using the account.
func (r *Revocations) Revoke(accountID int64, reason string) {
	r.mu.Lock()
	r.pending[accountID] = reason
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default: // a wake-up is pending already; it will see this one too
	}
}

// take returns the revocations noted since the last take.
func (r *Revocations) take() map[int64]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.pending
	r.pending = map[int64]string{}
	return out
}

// persistRevocations makes each revocation the store's state — the account disabled, with the
// upstream's reason — and then pushes the accounts into the proxy again, in that order and
// under the app's lock, so the proxy learns it from the one owner of an account's state.
func (a *App) persistRevocations(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-a.revoked.wake:
		}
		revoked := a.revoked.take()
		a.mu.Lock()
		for id, reason := range revoked {
			a.log.Warn("upstream refused the account's key; account disabled", "account", id, "reason", reason)
			if err := a.store.SetAccountEnabled(ctx, id, false, reason); err != nil && ctx.Err() == nil {
				a.log.Error("persist account disable", "account", id, "err", err)
			}
		}
		if err := a.loadAccountsLocked(ctx); err != nil && ctx.Err() == nil {
			a.log.Error("reload accounts after a revocation", "err", err)
		}
		a.publishLocked()
		a.mu.Unlock()
	}
}
