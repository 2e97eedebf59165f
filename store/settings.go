package store

import (
	"fmt"
	"net"
	"slices"
	"time"
)

// Settings is everything the user can configure (README.md, "Settings"). The json tags are the dotted setting
// keys ("proxy.rotation.policy"), used by the CLI, the UI and the settings table.
type Settings struct {
	Proxy      ProxySettings      `json:"proxy"`
	Compaction CompactionSettings `json:"compaction"`
	History    HistorySettings    `json:"history"`
	Monitor    MonitorSettings    `json:"monitor"`
	Pricing    PricingSettings    `json:"pricing"`
	App        AppSettings        `json:"app"`
}

// ProxySettings configure the local proxy and how it talks upstream.
type ProxySettings struct {
	Port      int    `json:"port"`
	Bind      string `json:"bind"`
	ClientKey string `json:"client_key"` // empty: clients need no key
	// AllowedOrigins are web origins (scheme://host[:port]) whose pages may call the proxy's
	// API from a browser; empty: none may.
	AllowedOrigins []string `json:"allowed_origins"`
	MaxBodyBytes   int64    `json:"max_body_bytes"`
	// MemoryBudgetBytes bounds the memory the requests in flight may take together: each
	// reserves what its body is reckoned to cost, and one that does not fit is refused (413
	// when it alone is larger, 529 or 503 while others hold it). 0 means the default, 1 GiB.
	MemoryBudgetBytes int64 `json:"memory_budget_bytes"`
	// RequestTimeout bounds a whole non-stream request, and the header phase of a stream.
	RequestTimeout      Duration             `json:"request_timeout" ts_type:"string"`
	Rotation            RotationSettings     `json:"rotation"`
	ModelMap            []ModelMapping       `json:"model_map"`
	ContextLimits       map[string]int       `json:"context_limits"` // model glob → tokens
	DefaultContextLimit int                  `json:"default_context_limit"`
	Experimental        ExperimentalSettings `json:"experimental"`
}

// Rotation policies.
const (
	PolicyRoundRobin = "round-robin"
	PolicyFillFirst  = "fill-first"
	PolicyLeastUsed  = "least-used"
	PolicyWeighted   = "weighted"
)

// RotationSettings choose the account for each request.
type RotationSettings struct {
	Policy          string `json:"policy"`
	SessionAffinity bool   `json:"session_affinity"`
	MaxAttempts     int    `json:"max_attempts"`
}

// ModelMapping sends client models matching Pattern (a glob) to Model, optionally only on the
// accounts Account names: a label, an id or a kind (proxy/pool/modelmap.go matches all three).
type ModelMapping struct {
	Pattern string `json:"pattern"`
	Model   string `json:"model"`
	Account string `json:"account,omitempty"`
}

// ExperimentalSettings switch the repairs on and off and set the compaction thresholds
// (fractions of the model's context limit).
type ExperimentalSettings struct {
	EnableSignatureCache          bool    `json:"enable_signature_cache"`
	EnableToolLoopRecovery        bool    `json:"enable_tool_loop_recovery"`
	EnableCrossModelChecks        bool    `json:"enable_cross_model_checks"`
	EnableUsageScaling            bool    `json:"enable_usage_scaling"`
	ContextCompressionThresholdL1 float64 `json:"context_compression_threshold_l1"`
	ContextCompressionThresholdL2 float64 `json:"context_compression_threshold_l2"`
	ContextCompressionThresholdL3 float64 `json:"context_compression_threshold_l3"`
}

// CompactionSettings tune the compaction layers.
type CompactionSettings struct {
	KeepToolRounds      int    `json:"keep_tool_rounds"`
	ProtectLastMessages int    `json:"protect_last_messages"`
	MaxToolResultChars  int    `json:"max_tool_result_chars"`
	SummaryModel        string `json:"summary_model"`
	// SignatureCacheEntries bounds each of the signature cache's three maps.
	SignatureCacheEntries int `json:"signature_cache_entries"`
	// CacheAware times the lossy layers to the session's prompt cache: while it is warm, a step
	// that would make the upstream write the conversation again waits until it pays for that
	// (docs/ARCHITECTURE.md "Compaction and the prompt cache"); off runs them on pressure alone.
	CacheAware bool `json:"cache_aware"`
	// ForceRatio is the pressure above which every layer runs whatever the cache.
	ForceRatio float64 `json:"force_ratio"`
	// PaybackRequests is how many requests a step's savings are counted over against the
	// cache re-write it causes.
	PaybackRequests int `json:"payback_requests"`
	// FoldDuplicates turns a tool result identical to a later one into a note naming it.
	FoldDuplicates bool `json:"fold_duplicates"`
}

// HistorySettings bound what the request history keeps.
type HistorySettings struct {
	RetentionDays int   `json:"retention_days"` // exchanges (metadata)
	MaxBytes      int64 `json:"max_bytes"`      // the whole database file
	StoreBodies   bool  `json:"store_bodies"`
	// BodyRetentionDays keeps request and reply bodies for less time than the metadata: they
	// are most of the bytes and mostly useful for recent debugging.
	BodyRetentionDays int `json:"body_retention_days"`
	MaxBodyBytes      int `json:"max_body_bytes"` // cap of each stored body
}

// MonitorSettings shape what the monitor and the request pages point out.
type MonitorSettings struct {
	// ToolWarningCount: a request offering more tools than this gets a warning badge; models
	// choose worse among many tools, and the definitions take context on every turn.
	ToolWarningCount int `json:"tool_warning_count"`
}

// AppSettings belong to the desktop app.
type AppSettings struct {
	Autostart      bool   `json:"autostart"`
	StartMinimized bool   `json:"start_minimized"`
	CheckUpdates   bool   `json:"check_updates"`
	Language       string `json:"language"` // "en" or "zh-CN"
}

// Duration is a time.Duration that reads and writes Go duration strings ("90s", "10m0s"),
// in JSON and on the command line alike.
type Duration time.Duration

func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

const (
	kib = 1 << 10
	mib = 1 << 20
	gib = 1 << 30
)

// DefaultSettings returns the settings of a fresh install. Each call returns new maps and slices.
func DefaultSettings() Settings {
	return Settings{
		Proxy: ProxySettings{
			Port:              8045,
			Bind:              "127.0.0.1",
			MaxBodyBytes:      32 * mib,
			MemoryBudgetBytes: gib,
			RequestTimeout:    Duration(10 * time.Minute),
			Rotation: RotationSettings{
				Policy:          PolicyRoundRobin,
				SessionAffinity: true,
				MaxAttempts:     3,
			},
			ModelMap:            []ModelMapping{},
			AllowedOrigins:      []string{},
			ContextLimits:       map[string]int{"claude-*": 200000, "gemini-*": 1048576},
			DefaultContextLimit: 200000,
			Experimental: ExperimentalSettings{
				EnableSignatureCache:          true,
				EnableToolLoopRecovery:        true,
				EnableCrossModelChecks:        true,
				EnableUsageScaling:            true,
				ContextCompressionThresholdL1: 0.4,
				ContextCompressionThresholdL2: 0.55,
				ContextCompressionThresholdL3: 0.7,
			},
		},
		Compaction: CompactionSettings{
			KeepToolRounds:        5,
			ProtectLastMessages:   4,
			MaxToolResultChars:    200000,
			SummaryModel:          "claude-haiku-4-5",
			SignatureCacheEntries: 10000,
			CacheAware:            true,
			ForceRatio:            0.85,
			PaybackRequests:       10,
			FoldDuplicates:        true,
		},
		History: HistorySettings{RetentionDays: 90, MaxBytes: gib, StoreBodies: true, BodyRetentionDays: 7, MaxBodyBytes: 2 * mib},
		Monitor: MonitorSettings{ToolWarningCount: 30},
		Pricing: PricingSettings{Table: DefaultPrices()},
		App:     AppSettings{CheckUpdates: true, Language: "en"},
	}
}

// normalize replaces nil maps and lists with empty ones, so "unset" and "empty" look the same
// in JSON and in comparisons.
func (s *Settings) normalize() {
	if s.Proxy.ModelMap == nil {
		s.Proxy.ModelMap = []ModelMapping{}
	}
	if s.Proxy.ContextLimits == nil {
		s.Proxy.ContextLimits = map[string]int{}
	}
	if s.Proxy.AllowedOrigins == nil {
		s.Proxy.AllowedOrigins = []string{}
	}
	if s.Pricing.Table == nil {
		s.Pricing.Table = map[string]ModelPrice{}
	}
}

// ValidationError says which setting (or account field) is wrong and why.
type ValidationError struct {
	Field   string // dotted key, e.g. "proxy.experimental.context_compression_threshold_l2"
	Message string
}

func (e *ValidationError) Error() string { return e.Field + ": " + e.Message }

// Validate reports the first invalid setting as a *ValidationError.
func (s Settings) Validate() error {
	p, x := s.Proxy, s.Proxy.Experimental
	const l1, l2, l3 = "context_compression_threshold_l1", "context_compression_threshold_l2", "context_compression_threshold_l3"
	inUnit := func(v float64) bool { return v > 0 && v <= 1 }
	checks := []struct {
		ok          bool
		field, msgf string
		args        []any
	}{
		{p.Port >= 1 && p.Port <= 65535, "proxy.port", "must be between 1 and 65535", nil},
		{p.Bind == "localhost" || net.ParseIP(p.Bind) != nil, "proxy.bind", "must be an IP address or localhost", nil},
		{p.MaxBodyBytes >= kib && p.MaxBodyBytes <= gib, "proxy.max_body_bytes", "must be between 1024 (1 KiB) and 1073741824 (1 GiB)", nil},
		{p.MemoryBudgetBytes == 0 || p.MemoryBudgetBytes >= 16*mib && p.MemoryBudgetBytes <= 1<<40, "proxy.memory_budget_bytes",
			"must be 0 (the default, 1 GiB) or between 16777216 (16 MiB) and 1099511627776 (1 TiB)", nil},
		{p.RequestTimeout > 0, "proxy.request_timeout", "must be greater than 0", nil},
		{slices.Contains([]string{PolicyRoundRobin, PolicyFillFirst, PolicyLeastUsed, PolicyWeighted}, p.Rotation.Policy),
			"proxy.rotation.policy", "must be one of round-robin, fill-first, least-used, weighted", nil},
		{p.Rotation.MaxAttempts >= 1 && p.Rotation.MaxAttempts <= 10, "proxy.rotation.max_attempts", "must be between 1 and 10", nil},
		{p.DefaultContextLimit > 0, "proxy.default_context_limit", "must be greater than 0", nil},
		{inUnit(x.ContextCompressionThresholdL1), "proxy.experimental." + l1, "must be greater than 0 and at most 1", nil},
		{inUnit(x.ContextCompressionThresholdL2), "proxy.experimental." + l2, "must be greater than 0 and at most 1", nil},
		{inUnit(x.ContextCompressionThresholdL3), "proxy.experimental." + l3, "must be greater than 0 and at most 1", nil},
		{x.ContextCompressionThresholdL2 >= x.ContextCompressionThresholdL1, "proxy.experimental." + l2,
			"must be ≥ %s (%v)", []any{l1, x.ContextCompressionThresholdL1}},
		{x.ContextCompressionThresholdL3 >= x.ContextCompressionThresholdL2, "proxy.experimental." + l3,
			"must be ≥ %s (%v)", []any{l2, x.ContextCompressionThresholdL2}},
		{s.Compaction.KeepToolRounds >= 1, "compaction.keep_tool_rounds", "must be at least 1", nil},
		// 0 would let Layer 2 rewrite the thinking of the turn in progress, whose signature the
		// upstream checks against its text: refused rather than silently read as the default.
		{s.Compaction.ProtectLastMessages >= 1, "compaction.protect_last_messages", "must be at least 1 (the turn in progress keeps its thinking)", nil},
		{s.Compaction.MaxToolResultChars >= 1000, "compaction.max_tool_result_chars", "must be at least 1000", nil},
		{s.Compaction.SummaryModel != "", "compaction.summary_model", "must not be empty", nil},
		{s.Compaction.SignatureCacheEntries >= 100 && s.Compaction.SignatureCacheEntries <= 1_000_000,
			"compaction.signature_cache_entries", "must be between 100 and 1000000", nil},
		{inUnit(s.Compaction.ForceRatio), "compaction.force_ratio", "must be greater than 0 and at most 1", nil},
		{s.Compaction.PaybackRequests >= 1 && s.Compaction.PaybackRequests <= 1000,
			"compaction.payback_requests", "must be between 1 and 1000", nil},
		{s.History.RetentionDays >= 1, "history.retention_days", "must be at least 1", nil},
		{s.History.MaxBytes >= mib, "history.max_bytes", "must be at least 1048576 (1 MiB)", nil},
		{s.History.BodyRetentionDays >= 1, "history.body_retention_days", "must be at least 1", nil},
		{s.Monitor.ToolWarningCount >= 1, "monitor.tool_warning_count", "must be at least 1", nil},
		{s.History.MaxBodyBytes >= kib && s.History.MaxBodyBytes <= 64*mib, "history.max_body_bytes", "must be between 1024 (1 KiB) and 67108864 (64 MiB)", nil},
		{s.App.Language == "en" || s.App.Language == "zh-CN", "app.language", "must be en or zh-CN", nil},
	}
	for _, c := range checks {
		if !c.ok {
			return &ValidationError{Field: c.field, Message: fmt.Sprintf(c.msgf, c.args...)}
		}
	}
	for i, m := range p.ModelMap {
		if m.Pattern == "" || m.Model == "" {
			return &ValidationError{Field: "proxy.model_map", Message: fmt.Sprintf("entry %d: pattern and model must not be empty", i+1)}
		}
	}
	for _, o := range p.AllowedOrigins {
		if !isWebOrigin(o) {
			return &ValidationError{Field: "proxy.allowed_origins", Message: fmt.Sprintf("%q is not an origin (scheme://host[:port], e.g. https://chat.example.com)", o)}
		}
	}
	for _, pattern := range sortedKeys(p.ContextLimits) { // sorted, so the reported entry is stable
		if pattern == "" {
			return &ValidationError{Field: "proxy.context_limits", Message: "model pattern must not be empty"}
		}
		if p.ContextLimits[pattern] <= 0 {
			return &ValidationError{Field: "proxy.context_limits." + pattern, Message: "must be greater than 0"}
		}
	}
	return validatePricing(s.Pricing)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
