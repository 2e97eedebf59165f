package app

import (
	"context"
	"time"

	"longhaul/proxy"
)

// AccountView is an account as the UI shows it: the stored fields with the
// secret masked, plus the proxy's live view (cooldowns, quota, usage).
type AccountView struct {
	ID             int64    `json:"id"`
	Label          string   `json:"label"`
	Kind           string   `json:"kind"`
	BaseURL        string   `json:"baseURL"`
	Key            string   `json:"key"` // masked: sk-…abcd
	Enabled        bool     `json:"enabled"`
	DisabledReason string   `json:"disabledReason,omitempty"`
	Models         []string `json:"models,omitempty"`
	Priority       int      `json:"priority"`
	Weight         int      `json:"weight"`
	// Live, from the proxy's pool.
	Available     bool                 `json:"available"`
	CoolingUntil  map[string]time.Time `json:"coolingUntil,omitempty"`
	RateLimit     map[string]string    `json:"rateLimit,omitempty"`
	RateLimitAt   time.Time            `json:"rateLimitAt,omitzero"`
	Requests      int64                `json:"requests"`
	Tokens        int64                `json:"tokens"`
	Errors        int64                `json:"errors"`
	SessionsBound int                  `json:"sessionsBound"`
}

// Accounts lists the accounts with their live state.
func (a *App) Accounts(ctx context.Context) ([]AccountView, error) {
	stored, err := a.store.Accounts(ctx)
	if err != nil {
		return nil, err
	}
	live := map[int64]proxy.AccountStatus{}
	for _, st := range a.proxy.Pool().Status(time.Now()) {
		live[st.ID] = st
	}
	out := make([]AccountView, 0, len(stored))
	for _, s := range stored {
		v := AccountView{
			ID: s.ID, Label: s.Label, Kind: s.Kind, BaseURL: s.BaseURL, Key: s.MaskedSecret(),
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
