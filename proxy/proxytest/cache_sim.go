package proxytest

import (
	"crypto/sha256"
	"sync"
	"time"
)

// Prompt caching as Anthropic's API does it, checked against its prompt-caching and pricing
// documentation (platform.claude.com, docs corpus) and the errors clients report:
//
//   - The cache holds prefixes of the rendered prompt, in the order tools, system, messages.
//     A cache_control breakpoint on a block caches everything up to and including that block;
//     the marker itself is not content, so moving it (as Claude Code does each turn) keeps the
//     prefix. A top-level cache_control is automatic caching: a breakpoint on the last block.
//   - A request reads the longest cached prefix it repeats: at each breakpoint the API looks
//     back up to 20 blocks for an entry. usage.cache_read_input_tokens is that prefix;
//     cache_creation_input_tokens the rest up to the last breakpoint, written now (split by
//     TTL in usage.cache_creation.ephemeral_5m_input_tokens / ephemeral_1h_input_tokens);
//     input_tokens what follows the last breakpoint. The three add up to the prompt.
//   - An entry lives 5 minutes ("ttl":"5m", the default) or an hour ("1h") after its last
//     use: every hit refreshes it at no cost.
//   - A prefix shorter than the model's minimum is not cached, silently (1,024 tokens for
//     Sonnet 4.5, Sonnet 4, Opus 4.1; 4,096 for Opus 4.5 and Haiku 4.5).
//   - At most 4 blocks may carry cache_control: a 5th is a 400 invalid_request_error "A maximum
//     of 4 blocks with cache_control may be provided. Found 5."
//   - Prices relative to base input: 5-minute write 1.25×, 1-hour write 2×, read 0.1×; Sonnet
//     4.5's output is 5× its input ($3 / $3.75 / $6 / $0.30 / $15 per million tokens).
//
// Not modelled: caches per organization (one CacheSim is one organization), the invalidation
// of message caches by thinking or tool_choice changes, breakpoints inside tool results.

// Defaults of a CacheSim's zero fields.
const (
	DefaultCacheTTL       = 5 * time.Minute
	DefaultCacheLongTTL   = time.Hour
	DefaultCacheMinTokens = 1024 // Sonnet 4.5's minimum cacheable prefix
	DefaultCacheLookback  = 20
	maxBreakpoints        = 4
	cacheSweepAt          = 4096 // entries held before expired ones are dropped
)

// CacheSim is a simulated prompt cache (Simulation.Caching). Several upstreams may share one,
// as accounts of one organization share a cache. Its zero value is ready to use; set the
// fields before the first request.
type CacheSim struct {
	TTL       time.Duration    // life of a "5m" entry after its last use; 0 = DefaultCacheTTL
	LongTTL   time.Duration    // life of a "1h" entry; 0 = DefaultCacheLongTTL
	Now       func() time.Time // the clock, so tests jump time instead of sleeping; nil = time.Now
	MinTokens int              // shortest prefix cached; 0 = DefaultCacheMinTokens, <0 = any
	Lookback  int              // blocks a breakpoint looks back for an entry; 0 = DefaultCacheLookback, <0 = all

	mu      sync.Mutex
	entries map[[sha256.Size]byte]cacheEntry // by the hash of the prefix
	tally   CacheTally
}

type cacheEntry struct {
	expires time.Time
	ttl     time.Duration // what a hit extends it by
}

// CacheTally adds up the usage a CacheSim reported.
type CacheTally struct {
	Requests int `json:"requests"`  // replies served
	Hits     int `json:"hits"`      // replies that read a cached prefix
	Uncached int `json:"uncached"`  // input_tokens
	Reads    int `json:"reads"`     // cache_read_input_tokens
	Writes5m int `json:"writes_5m"` // cache_creation_input_tokens written for 5 minutes
	Writes1h int `json:"writes_1h"` // cache_creation_input_tokens written for an hour
	Output   int `json:"output"`    // output_tokens
}

// Writes is every cache_creation_input_tokens.
func (t CacheTally) Writes() int { return t.Writes5m + t.Writes1h }

// Input is every input token, however billed: the prompts' total.
func (t CacheTally) Input() int { return t.Uncached + t.Reads + t.Writes() }

// Add counts one reply's usage (a write without its TTL split counts as 5-minute).
func (t *CacheTally) Add(u Usage) {
	t.Requests++
	if u.CacheReadInputTokens > 0 {
		t.Hits++
	}
	t.Uncached += u.InputTokens
	t.Reads += u.CacheReadInputTokens
	long := min(u.CacheCreation.Ephemeral1h, u.CacheCreationInputTokens)
	t.Writes1h += long
	t.Writes5m += u.CacheCreationInputTokens - long
	t.Output += u.OutputTokens
}

// Tally is what the cache reported so far.
func (c *CacheSim) Tally() CacheTally {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tally
}

// Prices are a model's list prices in USD per million tokens.
type Prices struct {
	Input, CacheWrite5m, CacheWrite1h, CacheRead, Output float64
}

// SonnetPrices are Claude Sonnet 4.5's (and Sonnet 4's) list prices: writes 1.25× and 2× the
// input price, reads 0.1×, output 5×.
func SonnetPrices() Prices {
	return Prices{Input: 3, CacheWrite5m: 3.75, CacheWrite1h: 6, CacheRead: 0.30, Output: 15}
}

// InputCost is what t's input costs, in USD.
func (p Prices) InputCost(t CacheTally) float64 {
	return (float64(t.Uncached)*p.Input + float64(t.Writes5m)*p.CacheWrite5m +
		float64(t.Writes1h)*p.CacheWrite1h + float64(t.Reads)*p.CacheRead) / 1e6
}

// Cost is what t costs, input and output, in USD.
func (p Prices) Cost(t CacheTally) float64 { return p.InputCost(t) + float64(t.Output)*p.Output/1e6 }

// EffectiveInput is t's input cost in uncached input tokens: the tokens that, sent without a
// cache, would cost the same. Below t.Input() the cache saved; above it, it cost.
func (p Prices) EffectiveInput(t CacheTally) float64 { return p.InputCost(t) / p.Input * 1e6 }

func (c *CacheSim) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

func (c *CacheSim) ttl(cc *cacheControl) time.Duration {
	if cc.TTL == "1h" {
		if c.LongTTL > 0 {
			return c.LongTTL
		}
		return DefaultCacheLongTTL
	}
	if c.TTL > 0 {
		return c.TTL
	}
	return DefaultCacheTTL
}

func (c *CacheSim) minTokens() int {
	switch {
	case c.MinTokens < 0:
		return 0
	case c.MinTokens == 0:
		return DefaultCacheMinTokens
	}
	return c.MinTokens
}

// breakpoints counts p's cache_control blocks, for the API's limit of 4.
func (p *prompt) breakpoints() int {
	n := 0
	for _, b := range p.blocks {
		if b.breakpoint != nil {
			n++
		}
	}
	return n
}

// use serves p from the cache and writes its breakpoints' prefixes: the usage of a reply to p
// that produced output tokens.
func (c *CacheSim) use(p *prompt, output int) Usage {
	// The running hash of the prompt up to each block, and its tokens there. The model leads:
	// caches are per model. The request's framing comes last, after every breakpoint, as the
	// few input_tokens the API reports with a breakpoint on the last block show.
	hashes := make([][sha256.Size]byte, len(p.blocks))
	upTo := make([]int, len(p.blocks))
	h := sha256.Sum256([]byte("model\x00" + p.model))
	total := 0
	for i, b := range p.blocks {
		s := sha256.New()
		s.Write(h[:])
		s.Write(b.content)
		s.Sum(h[:0])
		hashes[i] = h
		total += b.tokens
		upTo[i] = total
	}
	total += requestTokens
	var marks []int // the breakpoints long enough to cache
	for i, b := range p.blocks {
		if b.breakpoint != nil && upTo[i] >= c.minTokens() {
			marks = append(marks, i)
		}
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	if c.entries == nil {
		c.entries = map[[sha256.Size]byte]cacheEntry{}
	}
	if len(c.entries) >= cacheSweepAt {
		for k, e := range c.entries {
			if !now.Before(e.expires) {
				delete(c.entries, k)
			}
		}
	}
	hit := -1 // the block the longest cached prefix ends at
	for _, m := range marks {
		for i := m; i >= 0 && m-i < c.lookback(len(p.blocks)); i-- {
			if e, ok := c.entries[hashes[i]]; ok && now.Before(e.expires) {
				hit = max(hit, i)
				break
			}
		}
	}
	u := Usage{OutputTokens: output}
	covered := 0 // the prefix's tokens read or written so far
	if hit >= 0 {
		covered = upTo[hit]
		u.CacheReadInputTokens = covered
		e := c.entries[hashes[hit]] // a hit refreshes the entry it read, for free
		e.expires = now.Add(e.ttl)
		c.entries[hashes[hit]] = e
	}
	for _, m := range marks {
		bp := p.blocks[m].breakpoint
		if w := upTo[m] - covered; w > 0 {
			u.CacheCreationInputTokens += w
			if bp.TTL == "1h" {
				u.CacheCreation.Ephemeral1h += w
			} else {
				u.CacheCreation.Ephemeral5m += w
			}
			covered = upTo[m]
		}
		ttl := c.ttl(bp)
		if e, ok := c.entries[hashes[m]]; !ok || now.Add(ttl).After(e.expires) {
			c.entries[hashes[m]] = cacheEntry{expires: now.Add(ttl), ttl: ttl}
		}
	}
	u.InputTokens = total - covered
	c.tally.Add(u)
	return u
}

// lookback is how many blocks a breakpoint looks back over, of a prompt of n.
func (c *CacheSim) lookback(n int) int {
	switch {
	case c.Lookback < 0:
		return n
	case c.Lookback == 0:
		return DefaultCacheLookback
	}
	return c.Lookback
}
