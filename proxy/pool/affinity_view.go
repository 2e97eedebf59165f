package pool

import "time"

// SessionAccount reports the account a session is bound to (session
// affinity), without touching the binding: a status line polling it must not
// keep an idle session's binding alive. ok is false when the session has no
// live binding or the account is no longer configured.
func (p *Pool) SessionAccount(sessionID string, now time.Time) (acct Account, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	e, found := p.sessions.byID[sessionID]
	if !found {
		return Account{}, false
	}
	b := e.Value.(*binding)
	if now.Sub(b.lastUsed) >= p.sessions.ttl {
		return Account{}, false
	}
	for _, a := range p.accounts {
		if a.ID == b.account {
			// A view, never a key: Name() stays what it was (the label, else the masked key).
			a.Label, a.Secret = a.Name(), ""
			return a, true
		}
	}
	return Account{}, false
}
