package app

import (
	"time"

	"longhaul/proxy"
	"longhaul/proxy/compact"
	"longhaul/store"
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
	next          int      // NextLayer as the tray shows it: 1–3, 0 for ""
	LayersApplied []string `json:"layersApplied"` // by the latest request
	// Account is the account the session is bound to (session affinity), else the one that
	// served its latest request; Bound says which.
	Account string    `json:"account"`
	Bound   bool      `json:"bound"`
	At      time.Time `json:"at" ts_type:"string"` // when the latest request started
	// LimitSource says why Limit applies: "setting" (proxy.context_limits), "default",
	// "beta" (the context-1m beta raised a default) or "learned" (the upstream refused a
	// longer request, and Limit is what it showed); "" when not recorded.
	LimitSource string `json:"limitSource"`
	// Cache is the session's prompt cache as its replies showed it; nil when none was seen.
	Cache *PromptCache `json:"cache,omitempty"`
}

// PromptCache is a session's prompt cache at the upstream: "cache warm, 142k tokens, cold in
// 3:12".
type PromptCache struct {
	Warm bool `json:"warm"`
	// Tokens is the prefix it holds; ColdInSeconds how long until it expires (0 when cold);
	// TTLSeconds its life after each use.
	Tokens        int    `json:"tokens"`
	ColdInSeconds int    `json:"coldInSeconds"`
	TTLSeconds    int    `json:"ttlSeconds"`
	Summary       string `json:"summary"`
}

// promptCache reads the proxy's view of session's prompt cache at now.
func promptCache(p *proxy.Server, session string, now time.Time) *PromptCache {
	st, ok := p.SessionCache(session)
	if !ok {
		return nil
	}
	return &PromptCache{Warm: st.Warm(now), Tokens: st.Tokens, ColdInSeconds: int(st.Left(now).Seconds()),
		TTLSeconds: int(st.TTL.Seconds()), Summary: st.Describe(now)}
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

// nextLayer is the first compaction layer (1–3) whose threshold ratio has not reached, and that
// threshold; 0 when it has reached them all.
func nextLayer(ratio float64, th [3]float64) (layer int, threshold float64) {
	for i, t := range th {
		if ratio < t {
			return i + 1, t
		}
	}
	return 0, 0
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
	p := pressureOf(e, a.proxy.Config())
	if acct, ok := a.proxy.Pool().SessionAccount(e.SessionID, a.now()); ok {
		p.Account, p.Bound = acct.Name(), true
	}
	p.Cache = promptCache(a.proxy, e.SessionID, a.now())
	return p, nil
}

// pressureOf is the pressure e, a session's latest /v1/messages exchange, shows under cfg's
// context limits and compaction thresholds (Account is the one that served e).
func pressureOf(e store.Exchange, cfg proxy.Config) Pressure {
	p := Pressure{
		Session: e.SessionID, Model: e.Model, Tokens: e.TokensBefore, Limit: e.ContextLimit,
		Ratio: e.PressureBefore, ForwardedTokens: e.TokensAfter, ForwardedRatio: e.PressureAfter,
		UsageTokens:   e.InputTokens + e.CacheReadTokens + e.CacheWriteTokens,
		LayersApplied: e.Layers, Account: e.AccountName, At: e.Start, LimitSource: e.ContextLimitSource,
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
	if layer, at := nextLayer(p.Ratio, thresholds(cfg.Compaction)); layer > 0 {
		layers := [3]compact.Layer{compact.Layer1Trim, compact.Layer2Thinking, compact.Layer3Summary}
		p.NextLayer, p.NextThreshold, p.next = string(layers[layer-1]), at, layer
	}
	return p
}
