// Package sigcache remembers the thinking signatures an upstream issued, so a
// request whose client dropped a signature can be repaired, and a signature is
// never sent to a model family that did not issue it: an upstream rejects a
// signature it did not sign, which would fail the whole request.
//
// Three independent maps, each bounded with LRU eviction and a TTL:
//
//	tool_use_id → signature     (restore the chain of a tool call)
//	signature   → model family  (cross-model check)
//	session_id  → signature     (the latest one of a session)
//
// The cache is filled while replies stream back and read while requests are
// built; both happen on the hot path, so every operation is O(1) and the maps
// lock separately.
package sigcache

import (
	"strings"
	"sync/atomic"
	"time"
)

// Defaults for a zero Options field.
const (
	DefaultTTL     = 2 * time.Hour
	DefaultMaxSize = 10000
)

// Options configures a Cache. The zero value is usable.
type Options struct {
	// TTL is how long an entry lives after it was last written. 0 = DefaultTTL.
	TTL time.Duration
	// MaxTools, MaxSignatures and MaxSessions bound each map; beyond the bound
	// the least recently used entry is dropped. 0 = DefaultMaxSize.
	MaxTools, MaxSignatures, MaxSessions int
	// Now is the clock. nil = time.Now.
	Now func() time.Time
}

// Cache is the three-map signature cache. It is safe for concurrent use.
type Cache struct {
	tools    *lru
	families *lru
	sessions *lru
	// sessionFamilies (session → families that served it) is not one of the
	// three maps: it only tells the proxy when the cross-model check can
	// matter, so requests of single-family sessions skip it.
	sessionFamilies *lru

	toolRecoveries    atomic.Int64
	sessionRecoveries atomic.Int64
	crossModelRefused atomic.Int64
}

// New returns an empty Cache.
func New(opts Options) *Cache {
	if opts.TTL <= 0 {
		opts.TTL = DefaultTTL
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	size := func(n int) int {
		if n <= 0 {
			return DefaultMaxSize
		}
		return n
	}
	return &Cache{
		tools:    newLRU(size(opts.MaxTools), opts.TTL, opts.Now),
		families: newLRU(size(opts.MaxSignatures), opts.TTL, opts.Now),
		sessions: newLRU(size(opts.MaxSessions), opts.TTL, opts.Now),

		sessionFamilies: newLRU(size(opts.MaxSessions), opts.TTL, opts.Now),
	}
}

// Record stores what one upstream reply issued: its signature belongs to
// family, is now the latest of session, and covers the reply's tool calls.
// Empty session, family or ids are skipped, so the stream tap can call it with
// whatever it saw.
func (c *Cache) Record(session, family, signature string, toolUseIDs ...string) {
	if signature == "" {
		return
	}
	c.families.put(signature, family)
	c.sessions.put(session, signature)
	for _, id := range toolUseIDs {
		c.tools.put(id, signature)
	}
}

// PutToolSignature maps a tool_use id to the signature of the thinking block
// that preceded it.
func (c *Cache) PutToolSignature(toolUseID, signature string) { c.tools.put(toolUseID, signature) }

// PutFamily records which model family issued signature.
func (c *Cache) PutFamily(signature, family string) { c.families.put(signature, family) }

// PutSessionSignature records the latest signature of a session.
func (c *Cache) PutSessionSignature(session, signature string) { c.sessions.put(session, signature) }

// ToolSignature looks a tool_use id up without counting a recovery.
func (c *Cache) ToolSignature(toolUseID string) (string, bool) { return c.tools.get(toolUseID) }

// Family returns the model family that issued signature.
func (c *Cache) Family(signature string) (string, bool) { return c.families.get(signature) }

// SessionSignature returns the latest signature of a session without
// counting a recovery.
func (c *Cache) SessionSignature(session string) (string, bool) { return c.sessions.get(session) }

// RecoverForTool returns the signature for a tool call whose thinking
// signature the client dropped, counting the recovery ("Recovered signature
// from TOOL cache"). Only a signature issued by family is returned, so a
// recovery never crosses model families.
func (c *Cache) RecoverForTool(toolUseID, family string) (string, bool) {
	sig, ok := c.tools.get(toolUseID)
	if !ok || !c.compatible(sig, family) {
		return "", false
	}
	c.toolRecoveries.Add(1)
	return sig, true
}

// RecoverForSession returns the latest signature of session, counting the
// recovery ("Recovered signature from SESSION cache"); family as for
// RecoverForTool.
func (c *Cache) RecoverForSession(session, family string) (string, bool) {
	sig, ok := c.sessions.get(session)
	if !ok || !c.compatible(sig, family) {
		return "", false
	}
	c.sessionRecoveries.Add(1)
	return sig, true
}

// Compatible reports whether signature may be sent to a model of family: true
// when the cache does not know the signature (the upstream is the judge then)
// or knows it came from the same family. A refusal is counted.
func (c *Cache) Compatible(signature, family string) bool {
	if c.compatible(signature, family) {
		return true
	}
	c.crossModelRefused.Add(1)
	return false
}

func (c *Cache) compatible(signature, family string) bool {
	got, ok := c.families.get(signature)
	return !ok || family == "" || got == family
}

// Stats is a snapshot of the cache for the monitor.
type Stats struct {
	Tools, Signatures, Sessions int   // live entries per map
	ToolRecoveries              int64 // RecoverForTool hits
	SessionRecoveries           int64 // RecoverForSession hits
	CrossModelRefused           int64 // Compatible refusals
	Evicted, Expired            int64 // entries dropped for size and for age, all maps
}

// Stats returns current sizes and counters.
func (c *Cache) Stats() Stats {
	s := Stats{
		Tools:             c.tools.len(),
		Signatures:        c.families.len(),
		Sessions:          c.sessions.len(),
		ToolRecoveries:    c.toolRecoveries.Load(),
		SessionRecoveries: c.sessionRecoveries.Load(),
		CrossModelRefused: c.crossModelRefused.Load(),
	}
	for _, l := range []*lru{c.tools, c.families, c.sessions} {
		ev, ex := l.counts()
		s.Evicted += ev
		s.Expired += ex
	}
	return s
}

// NoteFamily records that session was served by a model of family.
func (c *Cache) NoteFamily(session, family string) {
	if session == "" || family == "" {
		return
	}
	seen, _ := c.sessionFamilies.get(session)
	for _, f := range strings.Split(seen, ",") {
		if f == family {
			c.sessionFamilies.put(session, seen) // refresh its age
			return
		}
	}
	if seen != "" {
		seen += ","
	}
	c.sessionFamilies.put(session, seen+family)
}

// OtherFamily reports whether session was ever served by a model family
// other than family: only then can its history hold a signature another
// family issued.
func (c *Cache) OtherFamily(session, family string) bool {
	seen, ok := c.sessionFamilies.get(session)
	if !ok {
		return false
	}
	for _, f := range strings.Split(seen, ",") {
		if f != family {
			return true
		}
	}
	return false
}
