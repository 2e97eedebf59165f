package app

import (
	"time"

	"longhaul/proxy"
	"longhaul/proxy/pool"
	"longhaul/store"
)

// proxyConfig maps persisted settings to what the proxy reads per request.
func proxyConfig(s store.Settings, o Overrides) proxy.Config {
	cfg := proxy.Config{
		Bind:              s.Proxy.Bind,
		Port:              s.Proxy.Port,
		ClientKey:         s.Proxy.ClientKey,
		AllowedOrigins:    s.Proxy.AllowedOrigins,
		MaxBodyBytes:      s.Proxy.MaxBodyBytes,
		MemoryBudgetBytes: s.Proxy.MemoryBudgetBytes,
		RequestTimeout:    time.Duration(s.Proxy.RequestTimeout),
		MaxAttempts:       s.Proxy.Rotation.MaxAttempts,
		Policy:            s.Proxy.Rotation.Policy,
		// The setting says "on"; the proxy's zero value is on too.
		NoSessionAffinity: !s.Proxy.Rotation.SessionAffinity,
		// History keeps bodies when the setting says so; the proxy then captures them.
		CaptureBodies:   s.History.StoreBodies,
		MaxCaptureBytes: s.History.MaxBodyBytes,
	}
	x := s.Proxy.Experimental
	cfg.Compaction = proxy.CompactionConfig{
		ThresholdL1:         x.ContextCompressionThresholdL1,
		ThresholdL2:         x.ContextCompressionThresholdL2,
		ThresholdL3:         x.ContextCompressionThresholdL3,
		KeepToolRounds:      s.Compaction.KeepToolRounds,
		ProtectLastMessages: s.Compaction.ProtectLastMessages,
		MaxToolResultChars:  s.Compaction.MaxToolResultChars,
		SummaryModel:        s.Compaction.SummaryModel,
		ContextLimits:       s.Proxy.ContextLimits,
		DefaultContextLimit: s.Proxy.DefaultContextLimit,
		SignatureCacheSize:  s.Compaction.SignatureCacheEntries,
		NoSignatureCache:    !x.EnableSignatureCache,
		NoToolLoopRecovery:  !x.EnableToolLoopRecovery,
		NoCrossModelChecks:  !x.EnableCrossModelChecks,
		NoUsageScaling:      !x.EnableUsageScaling,
		NoCacheAware:        !s.Compaction.CacheAware,
		ForceRatio:          s.Compaction.ForceRatio,
		PaybackRequests:     s.Compaction.PaybackRequests,
		NoFoldDuplicates:    !s.Compaction.FoldDuplicates,
	}
	for _, m := range s.Proxy.ModelMap {
		cfg.ModelMap = append(cfg.ModelMap, pool.ModelMapping{Pattern: m.Pattern, Model: m.Model, Account: m.Account})
	}
	if o.Port != 0 {
		cfg.Port = o.Port
	}
	return cfg
}

func proxyAccounts(accounts []store.Account) []pool.Account {
	out := make([]pool.Account, 0, len(accounts))
	for _, a := range accounts {
		out = append(out, pool.Account{
			ID: a.ID, Label: a.Label, Kind: a.Kind, BaseURL: a.BaseURL,
			Secret: a.Secret, Enabled: a.Enabled, Models: a.Models,
			Priority: a.Priority, Weight: a.Weight,
		})
	}
	return out
}
