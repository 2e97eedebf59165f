package app

import (
	"time"

	"longhaul/proxy"
	"longhaul/proxy/compact"
)

// Pressure is a session's context pressure as its latest request showed it, small enough for
// a status line to poll every few seconds.
type Pressure struct {
	Session string `json:"session"`
	Model   string `json:"model"`
	// Tokens is the estimated size of the latest request as the client sent it: what the
	// compaction thresholds are compared with. Limit is the model's context window.
	Tokens int     `json:"tokens"`
	Limit  int     `json:"limit"`
	Ratio  float64 `json:"ratio"`
	// ForwardedTokens and ForwardedRatio are after compaction (equal when nothing applied).
	ForwardedTokens int     `json:"forwardedTokens"`
	ForwardedRatio  float64 `json:"forwardedRatio"`
	// UsageTokens is the prompt size the upstream reported (input + cache read + cache write).
	UsageTokens int64 `json:"usageTokens"`
	// NextLayer is the first compaction layer whose threshold the ratio has not reached, ""
	// when all have been; NextThreshold its threshold.
	NextLayer     string   `json:"nextLayer"`
	NextThreshold float64  `json:"nextThreshold"`
	LayersApplied []string `json:"layersApplied"` // by the latest request
	// Account is the account the session is bound to (session affinity), else the one that
	// served its latest request; Bound says which.
	Account string    `json:"account"`
	Bound   bool      `json:"bound"`
	At      time.Time `json:"at" ts_type:"string"` // when the latest request started
}

// thresholds are the proxy's compaction thresholds, zero meaning the compactor's defaults.
func thresholds(c proxy.CompactionConfig) [3]float64 {
	def := compact.DefaultThresholds()
	t := [3]float64{c.ThresholdL1, c.ThresholdL2, c.ThresholdL3}
	for i, d := range [3]float64{def.L1, def.L2, def.L3} {
		if t[i] <= 0 {
			t[i] = d
		}
	}
	return t
}

// Pressure reports a session's context pressure, or the most recently active one's when id
// is "" or "latest"; store.ErrNotFound (wrapped) when there is no such session in history.
func (h *History) Pressure(id string) (Pressure, error) {
	a, ctx := h.app, h.ctx()
	if id == "latest" {
		id = ""
	}
	e, err := a.store.LatestExchange(ctx, id)
	if err != nil {
		return Pressure{}, err
	}
	cfg := a.proxy.Config()
	p := Pressure{
		Session: e.SessionID, Model: e.Model, Tokens: e.TokensBefore, Limit: e.ContextLimit,
		Ratio: e.PressureBefore, ForwardedTokens: e.TokensAfter, ForwardedRatio: e.PressureAfter,
		UsageTokens:   e.InputTokens + e.CacheReadTokens + e.CacheWriteTokens,
		LayersApplied: e.Layers, Account: e.AccountName, At: e.Start,
	}
	if p.Limit == 0 { // recorded before the estimator ran (or not a rewrite-capable route)
		table := cfg.Compaction.ContextLimits
		if table == nil {
			table = compact.DefaultLimitTable()
		}
		p.Limit = compact.NewLimits(table, cfg.Compaction.DefaultContextLimit).For(e.Model, nil)
	}
	if p.Tokens == 0 && p.UsageTokens > 0 { // no estimate: the upstream's count is the best one
		p.Tokens, p.ForwardedTokens = int(p.UsageTokens), int(p.UsageTokens)
	}
	if p.Ratio == 0 && p.Limit > 0 {
		p.Ratio = float64(p.Tokens) / float64(p.Limit)
	}
	if p.ForwardedRatio == 0 && p.Limit > 0 {
		p.ForwardedRatio = float64(p.ForwardedTokens) / float64(p.Limit)
	}
	for i, t := range thresholds(cfg.Compaction) {
		if p.Ratio < t {
			p.NextLayer, p.NextThreshold = []string{"Layer-1", "Layer-2", "Layer-3"}[i], t
			break
		}
	}
	if acct, ok := a.proxy.Pool().SessionAccount(e.SessionID, a.now()); ok {
		p.Account, p.Bound = acct.Name(), true
	}
	return p, nil
}
