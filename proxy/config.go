package proxy

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"longhaul/proxy/pool"
)

// Config is what the proxy reads for each request. It is immutable once
// passed to New or Reconfigure; a request keeps the Config it started with.
type Config struct {
	Bind string // address to listen on; "" means 127.0.0.1
	Port int    // 0 picks a free port (tests)
	// ClientKey is the local key clients must present. Optional on loopback,
	// required on any other bind.
	ClientKey string
	// AllowedOrigins are the web origins (scheme://host[:port]) whose pages
	// may call the API from a browser, with CORS; empty: no web page may.
	AllowedOrigins []string
	// MaxBodyBytes caps request bodies; 0 means 32 MiB.
	MaxBodyBytes int64
	// MemoryBudgetBytes bounds the memory the requests in flight may reserve together, each
	// for what its body, messages and blocks are reckoned to cost (budget.go); 0 means 1 GiB.
	MemoryBudgetBytes int64
	// RequestTimeout bounds a non-streaming request and the wait for a
	// stream's first event; 0 means 10 minutes.
	RequestTimeout time.Duration
	// MaxAttempts caps upstream attempts per request; 0 means 3.
	MaxAttempts int
	// KeepAlive is how long a stream may be idle before the proxy writes an
	// SSE comment; 0 means 15 s.
	KeepAlive time.Duration
	// Policy is the rotation policy (pool.PolicyRoundRobin, …); "" means round-robin.
	Policy string
	// NoSessionAffinity turns off keeping a session on one account (on by
	// default: upstream prompt caches are per account).
	NoSessionAffinity bool
	// ModelMap rewrites client model names to upstream ones.
	ModelMap []pool.ModelMapping
	// Compaction configures context pressure, compaction and signature
	// repair on /v1/messages. The zero value is the documented defaults, all on.
	Compaction CompactionConfig
	// CaptureBodies keeps a copy of every request and reply body in the
	// Exchange (history). Off, bodies are kept only when compaction rewrote
	// the request. The copy is made after the reply is complete.
	CaptureBodies bool
	// MaxCaptureBytes caps each captured body; 0 means 2 MiB.
	MaxCaptureBytes int
}

// CompactionConfig is the compaction.* and proxy.experimental.* settings as the
// proxy reads them (docs/ARCHITECTURE.md, "One request's path"). Zero values mean the
// defaults: thresholds 0.4/0.55/0.7, 5 tool rounds, 4 protected messages,
// 200,000-character tool results, the built-in context-limit table, and every
// repair switched on.
type CompactionConfig struct {
	ThresholdL1, ThresholdL2, ThresholdL3 float64
	KeepToolRounds                        int
	ProtectLastMessages                   int
	MaxToolResultChars                    int
	// SummaryModel is the background model Layer 3 asks for a summary,
	// through the same account pool; "" means claude-haiku-4-5.
	SummaryModel string
	// ContextLimits maps model names or * patterns to context windows; nil
	// means the built-in table. DefaultContextLimit is for unknown models.
	ContextLimits       map[string]int
	DefaultContextLimit int

	// SignatureCacheSize bounds each of the signature cache's three maps;
	// 0 means 10,000 entries.
	SignatureCacheSize int

	NoSignatureCache   bool // proxy.experimental.enable_signature_cache off
	NoToolLoopRecovery bool // enable_tool_loop_recovery off: dropped signatures are not restored
	NoCrossModelChecks bool // enable_cross_model_checks off
	NoUsageScaling     bool // enable_usage_scaling off: no calibration against real usage

	// NoCacheAware runs the lossy steps on pressure alone (compaction.cache_aware off);
	// ForceRatio is the pressure above which they run whatever the cache (0 = 0.85), and
	// PaybackRequests the requests a step's savings are counted over (0 = 10).
	NoCacheAware    bool
	ForceRatio      float64
	PaybackRequests int
	// NoFoldDuplicates leaves duplicate tool results alone (compaction.fold_duplicates off).
	NoFoldDuplicates bool
}

const (
	defaultMaxBody        = 32 << 20
	defaultMemoryBudget   = 1 << 30
	defaultRequestTimeout = 10 * time.Minute
	defaultMaxAttempts    = 3
	defaultKeepAlive      = 15 * time.Second
)

// ErrClientKeyRequired is returned when binding a non-loopback address without
// a client key: anyone on the network could otherwise spend the user's quota.
var ErrClientKeyRequired = errors.New("a client key (proxy.client_key) is required to listen on a non-loopback address")

// withDefaults fills zero values.
func (c Config) withDefaults() Config {
	if c.Bind == "" {
		c.Bind = "127.0.0.1"
	}
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = defaultMaxBody
	}
	if c.MemoryBudgetBytes <= 0 {
		c.MemoryBudgetBytes = defaultMemoryBudget
	}
	if c.RequestTimeout <= 0 {
		c.RequestTimeout = defaultRequestTimeout
	}
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = defaultMaxAttempts
	}
	if c.KeepAlive <= 0 {
		c.KeepAlive = defaultKeepAlive
	}
	if c.MaxCaptureBytes <= 0 {
		c.MaxCaptureBytes = defaultMaxCapture
	}
	return c
}

// Addr is the host:port the proxy listens on.
func (c Config) Addr() string {
	return net.JoinHostPort(c.withDefaults().Bind, strconv.Itoa(c.Port))
}

// Loopback reports whether the bind address only accepts local connections.
func (c Config) Loopback() bool {
	return IsLoopbackHost(c.withDefaults().Bind)
}

// Validate reports a config the proxy must refuse to run with.
func (c Config) Validate() error {
	if c.MemoryBudgetBytes < 0 {
		return fmt.Errorf("memory budget of %d bytes (proxy.memory_budget_bytes): must be 0 (the default) or more", c.MemoryBudgetBytes)
	}
	c = c.withDefaults()
	if c.Port < 0 || c.Port > 65535 {
		return fmt.Errorf("port %d out of range 1-65535", c.Port)
	}
	if c.Bind != "localhost" && net.ParseIP(c.Bind) == nil {
		return fmt.Errorf("bind address %q is not an IP address", c.Bind)
	}
	if _, err := pool.NewSelector(c.Policy); err != nil {
		return err
	}
	for i, m := range c.ModelMap {
		if m.Pattern == "" || m.Model == "" {
			return fmt.Errorf("model map entry %d: pattern and model are required", i+1)
		}
	}
	for _, o := range c.AllowedOrigins {
		if err := ValidOrigin(o); err != nil {
			return fmt.Errorf("allowed origins: %w", err)
		}
	}
	if err := c.Compaction.validate(); err != nil {
		return err
	}
	if !c.Loopback() && c.ClientKey == "" {
		return fmt.Errorf("bind %s: %w", c.Bind, ErrClientKeyRequired)
	}
	return nil
}

// IsLoopbackHost reports whether host (a name or an IP, without port or brackets) is
// "localhost" or a loopback address.
func IsLoopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
