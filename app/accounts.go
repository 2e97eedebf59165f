package app

import (
	"context"
	"fmt"
	"time"

	"longhaul/proxy/pool"
	"longhaul/store"
)

// Accounts lists and edits the upstream accounts, and tests their keys.
type Accounts struct{ bound }

// List lists the upstream accounts (secrets masked) with cooldowns, quota and usage.
func (s *Accounts) List() ([]AccountView, error) { return s.app.accountViews(s.ctx()) }

// AccountView is an account as the UI shows it: the stored fields with the
// secret masked, plus the proxy's live view (cooldowns, quota, usage).
type AccountView struct {
	ID      int64  `json:"id"`
	Label   string `json:"label"`
	Kind    string `json:"kind"`
	BaseURL string `json:"baseURL"`
	Key     string `json:"key"` // masked: sk-…abcd
	// SecretStorage says where the key is kept: "keychain" (the OS keychain) or "database"
	// (the data dir's database file, mode 0600, when no keychain answered).
	SecretStorage  string   `json:"secretStorage"`
	Enabled        bool     `json:"enabled"`
	DisabledReason string   `json:"disabledReason,omitempty"`
	Models         []string `json:"models,omitempty"`
	Priority       int      `json:"priority"`
	Weight         int      `json:"weight"`
	// Live, from the proxy's pool.
	Available     bool                 `json:"available"`
	CoolingUntil  map[string]time.Time `json:"coolingUntil,omitempty" ts_type:"Record<string, string>"`
	RateLimit     map[string]string    `json:"rateLimit,omitempty"`
	RateLimitAt   time.Time            `json:"rateLimitAt,omitempty,omitzero" ts_type:"string"`
	Requests      int64                `json:"requests"`
	Tokens        int64                `json:"tokens"`
	Errors        int64                `json:"errors"`
	SessionsBound int                  `json:"sessionsBound"`
}

// accountViews lists the accounts with their live state.
func (a *App) accountViews(ctx context.Context) ([]AccountView, error) {
	stored, err := a.store.Accounts(ctx)
	if err != nil {
		return nil, err
	}
	live := map[int64]pool.AccountStatus{}
	for _, st := range a.proxy.Pool().Status(time.Now()) {
		live[st.ID] = st
	}
	out := make([]AccountView, 0, len(stored))
	for _, s := range stored {
		v := AccountView{
			ID: s.ID, Label: s.Label, Kind: s.Kind, BaseURL: s.BaseURL, Key: s.MaskedSecret(), SecretStorage: s.SecretStorage,
			Enabled: s.Enabled, DisabledReason: s.DisabledReason, Models: s.Models, Priority: s.Priority, Weight: s.Weight,
		}
		if st, ok := live[s.ID]; ok {
			v.Available, v.CoolingUntil, v.RateLimit, v.RateLimitAt = st.Available, st.CoolingUntil, st.RateLimit, st.RateLimitAt
			v.Requests, v.Tokens, v.Errors, v.SessionsBound = st.Requests, st.Tokens, st.Errors, st.SessionsBound
			if st.DisabledBy != "" && v.DisabledReason == "" {
				v.DisabledReason = st.DisabledBy // revoked a moment ago; the store catches up
			}
		}
		out = append(out, v)
	}
	return out, nil
}

// AccountInput is an account as the add/edit form sends it. Key is the secret: required to
// add, empty on edit to keep the stored one. It is never sent back (AccountView masks it).
type AccountInput struct {
	Label    string   `json:"label"`
	Kind     string   `json:"kind"`
	BaseURL  string   `json:"baseURL"`
	Key      string   `json:"key"`
	Enabled  *bool    `json:"enabled"` // nil: enabled when added, unchanged when edited
	Models   []string `json:"models"`
	Priority int      `json:"priority"`
	Weight   int      `json:"weight"`
}

// accountField names a store validation field as the form does.
func accountField(f string) string {
	switch f {
	case "base_url":
		return "baseURL"
	case "secret":
		return "key"
	}
	return f
}

// Add stores a new account and pushes it to the proxy at once; the key is stored and never
// shown again (masked).
func (s *Accounts) Add(in AccountInput) (AccountView, error) {
	a, ctx := s.app, s.ctx()
	acct := store.Account{
		Label: in.Label, Kind: in.Kind, BaseURL: in.BaseURL, Secret: in.Key, Enabled: true,
		Models: in.Models, Priority: in.Priority, Weight: in.Weight,
	}
	if in.Enabled != nil {
		acct.Enabled = *in.Enabled
		if !acct.Enabled {
			acct.DisabledReason = "disabled by the user"
		}
	}
	added, err := a.store.AddAccount(ctx, acct)
	if err != nil {
		return AccountView{}, fieldErrorsOr(err, accountField)
	}
	return a.accountChanged(ctx, added.ID)
}

// Update edits an account; an empty key keeps the stored secret, but only on the same origin:
// a base URL of another scheme, host or port needs the key again (a "key" field error), so a
// stored key can never be redirected to another server.
func (s *Accounts) Update(id int64, in AccountInput) (AccountView, error) {
	a, ctx := s.app, s.ctx()
	cur, err := a.store.Account(ctx, id)
	if err != nil {
		return AccountView{}, err
	}
	cur.Label, cur.Kind, cur.BaseURL, cur.Secret = in.Label, in.Kind, in.BaseURL, in.Key
	cur.Models, cur.Priority, cur.Weight = in.Models, in.Priority, in.Weight
	if in.Enabled != nil && *in.Enabled != cur.Enabled {
		cur.Enabled = *in.Enabled
		cur.DisabledReason = ""
		if !cur.Enabled {
			cur.DisabledReason = "disabled by the user"
		}
	}
	if err := a.store.UpdateAccount(ctx, cur); err != nil {
		return AccountView{}, fieldErrorsOr(err, accountField)
	}
	return a.accountChanged(ctx, id)
}

// SetEnabled enables an account (clearing why it was disabled) or disables it by hand.
func (s *Accounts) SetEnabled(id int64, on bool) (AccountView, error) {
	a, ctx := s.app, s.ctx()
	if err := a.store.SetAccountEnabled(ctx, id, on, "disabled by the user"); err != nil {
		return AccountView{}, err
	}
	return a.accountChanged(ctx, id)
}

// Delete removes an account.
func (s *Accounts) Delete(id int64) error {
	a, ctx := s.app, s.ctx()
	if err := a.store.DeleteAccount(ctx, id); err != nil {
		return err
	}
	return a.Reload(ctx)
}

// accountChanged pushes the accounts into the proxy (the store watch would, within a second;
// the UI wants the result now) and returns the account's view.
func (a *App) accountChanged(ctx context.Context, id int64) (AccountView, error) {
	if err := a.Reload(ctx); err != nil {
		return AccountView{}, err
	}
	views, err := a.accountViews(ctx)
	if err != nil {
		return AccountView{}, err
	}
	for _, v := range views {
		if v.ID == id {
			return v, nil
		}
	}
	return AccountView{}, fmt.Errorf("account %d: %w", id, store.ErrNotFound)
}
