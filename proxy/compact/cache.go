package compact

import (
	"fmt"
	"time"
)

// Prompt caching, as the engine reasons about it. A cache holds the prefix of the last request
// of a session; the next request that starts with the same bytes reads it at a tenth of the
// input price, and whatever follows the first changed byte is written again at 1.25× (Anthropic's
// list prices: docs/ARCHITECTURE.md "Compaction and the prompt cache"). A cache lives TTL after
// its last use: 5 minutes by default, an hour when the request marked its breakpoints "1h".
//
// Every lossy edit of history — a Layer-1 boundary move, Layer 2 reaching further, a Layer-3
// fork — changes the prefix, so the next request writes everything after the edit again. While
// the cache is warm such an edit runs only when it pays for that: when what it saves, read on
// every request of the payback horizon, is worth more than the re-write it causes. When the
// cache has gone cold everything is written anyway, so every pending step runs at once. Above
// the force ratio of the window everything runs, whatever it costs.

// Cache defaults.
const (
	DefaultCacheTTL        = 5 * time.Minute
	LongCacheTTL           = time.Hour
	DefaultForceRatio      = 0.85
	DefaultPaybackRequests = 10
	// DefaultCacheReadPrice and DefaultCacheWritePrice are the prices of a cached token read
	// and written, as a fraction of an uncached input token's (5-minute writes).
	DefaultCacheReadPrice  = 0.1
	DefaultCacheWritePrice = 1.25
)

// CacheOptions configure the cache-aware scheduling of lossy steps.
type CacheOptions struct {
	// Off runs every step on pressure alone, as if no cache existed.
	Off bool
	// ForceRatio is the pressure (tokens / window) above which every step runs; 0 =
	// DefaultForceRatio.
	ForceRatio float64
	// PaybackRequests is how many requests a step's savings are counted over against the
	// re-write it causes; 0 = DefaultPaybackRequests.
	PaybackRequests int
	// ReadPrice and WritePrice price cached tokens against uncached ones; 0 = the defaults.
	ReadPrice, WritePrice float64
}

func (o CacheOptions) withDefaults() CacheOptions {
	if o.ForceRatio <= 0 || o.ForceRatio > 1 {
		o.ForceRatio = DefaultForceRatio
	}
	if o.PaybackRequests <= 0 {
		o.PaybackRequests = DefaultPaybackRequests
	}
	if o.ReadPrice <= 0 {
		o.ReadPrice = DefaultCacheReadPrice
	}
	if o.WritePrice <= 0 {
		o.WritePrice = DefaultCacheWritePrice
	}
	return o
}

// CacheState is what the engine knows of a session's prompt cache, from the usage of its
// replies.
type CacheState struct {
	LastUsed time.Time     // when a request last read or wrote it
	TTL      time.Duration // how long it lives after that
	Tokens   int           // the prefix it holds: the last reply's cache read plus cache write
}

// Warm reports whether the cache still holds its prefix at now.
func (c CacheState) Warm(now time.Time) bool { return c.Tokens > 0 && now.Sub(c.LastUsed) < c.TTL }

// Left is how long until the cache goes cold (0 when it is).
func (c CacheState) Left(now time.Time) time.Duration {
	if !c.Warm(now) {
		return 0
	}
	return c.LastUsed.Add(c.TTL).Sub(now)
}

// Describe reads like the session view: "cache warm, 142k tokens, cold in 3:12".
func (c CacheState) Describe(now time.Time) string {
	if c.Tokens <= 0 {
		return "no prompt cache seen"
	}
	if !c.Warm(now) {
		return fmt.Sprintf("cache cold (%s tokens were cached)", kTokens(c.Tokens))
	}
	left := c.Left(now).Round(time.Second)
	return fmt.Sprintf("cache warm, %s tokens, cold in %d:%02d", kTokens(c.Tokens), int(left.Minutes()), int(left.Seconds())%60)
}

func kTokens(n int) string {
	if n >= 1000 {
		return fmt.Sprintf("%dk", (n+500)/1000)
	}
	return fmt.Sprint(n)
}

// CacheUsage is the part of a reply's usage that tells about the cache.
type CacheUsage struct {
	Input, CacheRead, CacheWrite int
}

// LearnCache updates session's cache state from a reply to a request made at: a reply that read
// or wrote the cache shows it in use, for ttl from then.
func (p *Pipeline) LearnCache(session string, u CacheUsage, at time.Time, ttl time.Duration) {
	if session == "" || u.CacheRead+u.CacheWrite <= 0 {
		return
	}
	if ttl <= 0 {
		ttl = DefaultCacheTTL
	}
	p.cache.put(session, CacheState{LastUsed: at, TTL: ttl, Tokens: u.CacheRead + u.CacheWrite})
}

// Cache returns what the engine knows of session's prompt cache.
func (p *Pipeline) Cache(session string) (CacheState, bool) { return p.cache.get(session) }

// cachePlan is one run's view of the cache: whether lossy steps must pay for themselves, and
// the prefix the cache holds to price them against.
type cachePlan struct {
	o      CacheOptions
	left   time.Duration
	prev   *anchor // the session's last forwarded request, when the engine profiled it
	factor float64
}

// rewrite is how many tokens of a request, profiled as p, the cache does not hold. A cache
// entry ends at a cache_control breakpoint, and clients mark the system prompt and the last
// message (Claude Code does): a request that repeats the whole of the last forwarded one reads
// it and writes only what it adds; one that changes any message of it reads the system prompt
// and tools alone and writes every message again. The last forwarded message is compared by
// position only: the client moves its breakpoint off it, which changes its bytes and not what
// the cache holds.
func (c *cachePlan) rewrite(p *Profile) float64 {
	prev := c.prev
	if prev == nil || len(prev.hashes) == 0 || prev.header != p.header {
		return p.Raw() - p.fixed
	}
	n := len(prev.hashes)
	if n > len(p.hashes) || (n > 1 && prev.hashes[n-2] != p.hashes[n-2]) {
		return p.Raw() - p.fixed
	}
	return p.Raw() - p.fixed - p.raws[n-1]
}

// cost is the input cost, in uncached-token units, of sending a request of size tokens of which
// rewrite are not cached, and of reading it on each request of the payback horizon.
func (c *cachePlan) cost(size, rewrite float64) float64 {
	o := c.o
	return rewrite*o.WritePrice + (size-rewrite)*o.ReadPrice + float64(o.PaybackRequests)*size*o.ReadPrice
}

// pays reports whether going from the request profiled as before to the one profiled as after
// costs less over the payback horizon, and the tokens the change re-writes.
func (c *cachePlan) pays(before, after *Profile) (ok bool, rewrite int) {
	sb, sa := before.Raw()*c.factor, after.Raw()*c.factor
	wb, wa := c.rewrite(before)*c.factor, c.rewrite(after)*c.factor
	return c.cost(sa, wa) <= c.cost(sb, wb), int(max(wa-wb, 0) + 0.5)
}

// deferral is the reason recorded for a step that waits.
func (c *cachePlan) deferral(saves, rewrite int) string {
	left := c.left.Round(time.Second)
	return fmt.Sprintf("deferred: cache warm, %d:%02d left; would save %s tokens a turn and re-write %s once",
		int(left.Minutes()), int(left.Seconds())%60, kTokens(saves), kTokens(rewrite))
}
