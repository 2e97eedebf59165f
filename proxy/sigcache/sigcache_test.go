package sigcache

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeClock is a settable clock safe for concurrent reads.
type fakeClock struct{ ns atomic.Int64 }

func newClock() *fakeClock {
	c := &fakeClock{}
	c.ns.Store(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).UnixNano())
	return c
}
func (c *fakeClock) Now() time.Time          { return time.Unix(0, c.ns.Load()).UTC() }
func (c *fakeClock) Advance(d time.Duration) { c.ns.Add(int64(d)) }

func TestRecordAndLookup(t *testing.T) {
	c := New(Options{})
	c.Record("sess-1", "claude", "sigA", "toolu_1", "toolu_2")
	for _, id := range []string{"toolu_1", "toolu_2"} {
		if got, ok := c.ToolSignature(id); !ok || got != "sigA" {
			t.Errorf("ToolSignature(%q) = %q, %v; want sigA, true", id, got, ok)
		}
	}
	if got, ok := c.Family("sigA"); !ok || got != "claude" {
		t.Errorf("Family(sigA) = %q, %v; want claude, true", got, ok)
	}
	if got, ok := c.SessionSignature("sess-1"); !ok || got != "sigA" {
		t.Errorf("SessionSignature(sess-1) = %q, %v; want sigA, true", got, ok)
	}
	if _, ok := c.SessionSignature("sess-2"); ok {
		t.Errorf("SessionSignature(sess-2) found; sessions must not leak into each other")
	}
	c.Record("sess-1", "claude", "sigB")
	if got, _ := c.SessionSignature("sess-1"); got != "sigB" {
		t.Errorf("SessionSignature after second Record = %q; want the latest, sigB", got)
	}
}

func TestEmptyValuesAreIgnored(t *testing.T) {
	c := New(Options{})
	c.Record("", "", "sig")
	c.Record("s", "claude", "")
	c.PutToolSignature("", "sig")
	if s := c.Stats(); s.Sessions != 0 || s.Tools != 0 || s.Signatures != 0 {
		t.Errorf("Stats = %+v; want no session/tool entries and no family for an empty family", s)
	}
}

func TestExpiry(t *testing.T) {
	clk := newClock()
	c := New(Options{Now: clk.Now})
	c.Record("s", "claude", "sig", "toolu_1")
	clk.Advance(DefaultTTL - time.Second)
	if _, ok := c.ToolSignature("toolu_1"); !ok {
		t.Fatalf("entry expired before its TTL")
	}
	clk.Advance(time.Second)
	if _, ok := c.ToolSignature("toolu_1"); ok {
		t.Errorf("entry alive at exactly TTL; want expired")
	}
	if _, ok := c.SessionSignature("s"); ok {
		t.Errorf("session entry alive after TTL")
	}
	if got := c.Stats().Expired; got < 2 {
		t.Errorf("Stats().Expired = %d; want >= 2", got)
	}
}

func TestReadDoesNotExtendTTL(t *testing.T) {
	clk := newClock()
	c := New(Options{Now: clk.Now, TTL: time.Hour})
	c.PutToolSignature("t", "sig")
	clk.Advance(50 * time.Minute)
	c.ToolSignature("t")
	clk.Advance(20 * time.Minute)
	if _, ok := c.ToolSignature("t"); ok {
		t.Errorf("a read kept the entry alive past its TTL")
	}
}

func TestWriteRefreshesTTL(t *testing.T) {
	clk := newClock()
	c := New(Options{Now: clk.Now, TTL: time.Hour})
	c.PutToolSignature("t", "sig")
	clk.Advance(50 * time.Minute)
	c.PutToolSignature("t", "sig2")
	clk.Advance(50 * time.Minute)
	if got, ok := c.ToolSignature("t"); !ok || got != "sig2" {
		t.Errorf("ToolSignature after rewrite = %q, %v; want sig2, true", got, ok)
	}
}

func TestBoundEvictsLeastRecentlyUsed(t *testing.T) {
	c := New(Options{MaxTools: 3})
	c.PutToolSignature("a", "1")
	c.PutToolSignature("b", "2")
	c.PutToolSignature("c", "3")
	c.ToolSignature("a") // a is now the most recent; b the least
	c.PutToolSignature("d", "4")
	if _, ok := c.ToolSignature("b"); ok {
		t.Errorf("b survived; want it evicted as least recently used")
	}
	if got := c.tools.keys(); !slices.Equal(got, []string{"d", "a", "c"}) {
		t.Errorf("recency order = %v; want [d a c]", got)
	}
	if s := c.Stats(); s.Tools != 3 || s.Evicted != 1 {
		t.Errorf("Stats = %+v; want Tools 3, Evicted 1", s)
	}
}

func TestExpiredEntriesGoBeforeLiveOnes(t *testing.T) {
	clk := newClock()
	c := New(Options{Now: clk.Now, MaxTools: 2, TTL: time.Minute})
	c.PutToolSignature("old", "1")
	clk.Advance(2 * time.Minute)
	c.PutToolSignature("new1", "2")
	c.PutToolSignature("new2", "3")
	if got := c.tools.keys(); !slices.Equal(got, []string{"new2", "new1"}) {
		t.Errorf("keys = %v; want the expired entry dropped, both live ones kept", got)
	}
	if s := c.Stats(); s.Evicted != 0 || s.Expired != 1 {
		t.Errorf("Stats = %+v; want Evicted 0, Expired 1", s)
	}
}

func TestCrossModelCheck(t *testing.T) {
	c := New(Options{})
	c.Record("s", "claude", "sigClaude", "toolu_c")
	c.Record("g", "gemini", "sigGemini", "toolu_g")
	tests := []struct {
		name, sig, family string
		want              bool
	}{
		{"same family", "sigClaude", "claude", true},
		{"claude signature to gemini", "sigClaude", "gemini", false},
		{"gemini signature to claude", "sigGemini", "claude", false},
		{"unknown signature is left to the upstream", "sigOther", "claude", true},
		{"no family given", "sigGemini", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := c.Compatible(tt.sig, tt.family); got != tt.want {
				t.Errorf("Compatible(%q, %q) = %v; want %v", tt.sig, tt.family, got, tt.want)
			}
		})
	}
	if got := c.Stats().CrossModelRefused; got != 2 {
		t.Errorf("CrossModelRefused = %d; want 2", got)
	}
}

func TestRecoveriesAreCounted(t *testing.T) {
	c := New(Options{})
	c.Record("s", "claude", "sig", "toolu_1")
	if got, ok := c.RecoverForTool("toolu_1", "claude"); !ok || got != "sig" {
		t.Errorf("RecoverForTool = %q, %v; want sig, true", got, ok)
	}
	if _, ok := c.RecoverForTool("toolu_1", "gemini"); ok {
		t.Errorf("RecoverForTool crossed model families")
	}
	if _, ok := c.RecoverForTool("toolu_missing", "claude"); ok {
		t.Errorf("RecoverForTool found a missing id")
	}
	if got, ok := c.RecoverForSession("s", "claude"); !ok || got != "sig" {
		t.Errorf("RecoverForSession = %q, %v; want sig, true", got, ok)
	}
	s := c.Stats()
	if s.ToolRecoveries != 1 || s.SessionRecoveries != 1 {
		t.Errorf("Stats = %+v; want one recovery of each kind", s)
	}
}

func TestConcurrentUse(t *testing.T) {
	clk := newClock()
	c := New(Options{Now: clk.Now, MaxTools: 100, MaxSignatures: 100, MaxSessions: 10})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 2000 {
				id := fmt.Sprintf("toolu_%d_%d", g, i%150)
				sig := fmt.Sprintf("sig_%d_%d", g, i%150)
				c.Record(fmt.Sprintf("s%d", i%20), "claude", sig, id)
				c.RecoverForTool(id, "claude")
				c.RecoverForSession(fmt.Sprintf("s%d", (i+1)%20), "claude")
				c.Compatible(sig, "gemini")
				if i%500 == 0 {
					clk.Advance(time.Minute)
					c.Stats()
				}
			}
		})
	}
	wg.Wait()
	if s := c.Stats(); s.Tools > 100 || s.Signatures > 100 || s.Sessions > 10 {
		t.Errorf("Stats = %+v; a bound was exceeded", s)
	}
}

func BenchmarkPut(b *testing.B) {
	c := New(Options{MaxTools: 10000})
	ids := make([]string, 20000)
	for i := range ids {
		ids[i] = fmt.Sprintf("toolu_%024d", i)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		c.PutToolSignature(ids[i%len(ids)], "sig")
		i++
	}
}

func BenchmarkGet(b *testing.B) {
	c := New(Options{MaxTools: 10000})
	ids := make([]string, 10000)
	for i := range ids {
		ids[i] = fmt.Sprintf("toolu_%024d", i)
		c.PutToolSignature(ids[i], "sig")
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		c.ToolSignature(ids[i%len(ids)])
		i++
	}
}

func BenchmarkRecordParallel(b *testing.B) {
	c := New(Options{})
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			c.Record("session", "claude", "sig", "toolu_x")
			c.RecoverForTool("toolu_x", "claude")
			i++
		}
	})
}
