package proxytest

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeClock is a CacheSim's clock that tests move by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{t: time.Date(2025, 11, 1, 12, 0, 0, 0, time.UTC)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// session is a Claude-Code-shaped request after the given tool rounds: a system prompt with a
// breakpoint (its ttl when given), then the user's task and per round a tool call and its
// result, with the breakpoint on the last block, as Claude Code moves it each turn.
type session struct {
	model     string
	systemTTL string
	rounds    int
	edited    int // the round whose tool result is rewritten (as a lossy compaction would); 0 = none
	extraBPs  int // breakpoints added on earlier tool results
}

func (s session) body() string {
	cc := map[string]any{"type": "ephemeral"}
	sysCC := map[string]any{"type": "ephemeral"}
	if s.systemTTL != "" {
		sysCC["ttl"] = s.systemTTL
	}
	msgs := []map[string]any{{"role": "user", "content": []map[string]any{{"type": "text", "text": "Fix the failing tests."}}}}
	for r := 1; r <= s.rounds; r++ {
		id := fmt.Sprintf("toolu_%04d", r)
		result := strings.Repeat(fmt.Sprintf("line %d of the file read in round %d\n", r, r), 40)
		if r == s.edited {
			result = "[elided by compaction]"
		}
		block := map[string]any{"type": "tool_result", "tool_use_id": id, "content": result}
		if r <= s.extraBPs {
			block["cache_control"] = cc
		}
		msgs = append(msgs,
			map[string]any{"role": "assistant", "content": []map[string]any{
				{"type": "text", "text": "Reading the next file."},
				{"type": "tool_use", "id": id, "name": "Read", "input": map[string]any{"path": fmt.Sprintf("/src/f%d.go", r)}}}},
			map[string]any{"role": "user", "content": []map[string]any{block}})
	}
	last := msgs[len(msgs)-1]["content"].([]map[string]any)
	last[len(last)-1]["cache_control"] = cc
	model := s.model
	if model == "" {
		model = DefaultModel
	}
	b, err := json.Marshal(map[string]any{
		"model": model, "max_tokens": 1000, "stream": false,
		"system":   []map[string]any{{"type": "text", "text": strings.Repeat("Follow the repository conventions and keep changes small. ", 200), "cache_control": sysCC}},
		"messages": msgs,
	})
	if err != nil {
		panic(err)
	}
	return string(b)
}

// prefixUpTo is the cache prefix's tokens through the system prompt and the given round.
func (s session) prefixUpTo(t *testing.T, rounds int) int {
	t.Helper()
	p, err := parsePrompt([]byte(session{model: s.model, systemTTL: s.systemTTL, rounds: rounds, edited: s.edited}.body()))
	if err != nil {
		t.Fatal(err)
	}
	return p.tokens() - requestTokens
}

func (s session) systemPrefix(t *testing.T) int {
	t.Helper()
	p, err := parsePrompt([]byte(s.body()))
	if err != nil {
		t.Fatal(err)
	}
	return p.blocks[0].tokens
}

func cachedUsage(t *testing.T, u *Upstream, body string) Usage {
	t.Helper()
	resp := post(t, u, "/v1/messages", body)
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("POST = %d %s", resp.StatusCode, raw)
	}
	var m Message
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m.Usage
}

func newCachingUpstream(t *testing.T, cache *CacheSim) *Upstream {
	t.Helper()
	u := NewUpstream()
	t.Cleanup(u.Close)
	u.SetSimulation(Simulation{Caching: cache})
	return u
}

func TestCacheSimAcrossASession(t *testing.T) {
	clock := newFakeClock()
	cache := &CacheSim{Now: clock.Now}
	u := newCachingUpstream(t, cache)
	s := session{rounds: 3}
	total := func(s session) int { n, _ := CountTokens([]byte(s.body())); return n }

	steps := []struct {
		name    string
		advance time.Duration
		s       session
		want    func() Usage
	}{
		{"the first request writes its whole prefix", 0, s, func() Usage {
			return Usage{InputTokens: requestTokens, CacheCreationInputTokens: s.prefixUpTo(t, 3)}
		}},
		{"the next turn reads it and writes only the new rounds", time.Minute, session{rounds: 5}, func() Usage {
			return Usage{InputTokens: requestTokens, CacheReadInputTokens: s.prefixUpTo(t, 3),
				CacheCreationInputTokens: s.prefixUpTo(t, 5) - s.prefixUpTo(t, 3)}
		}},
		{"the same request again is all read", 4 * time.Minute, session{rounds: 5}, func() Usage {
			return Usage{InputTokens: requestTokens, CacheReadInputTokens: s.prefixUpTo(t, 5)}
		}},
		{"a hit refreshed the entry: 8 minutes after its write it is still warm", 4 * time.Minute, session{rounds: 5}, func() Usage {
			return Usage{InputTokens: requestTokens, CacheReadInputTokens: s.prefixUpTo(t, 5)}
		}},
		{"an edit in the history reads only up to the system prompt", time.Minute, session{rounds: 6, edited: 2}, func() Usage {
			sys := s.systemPrefix(t)
			return Usage{InputTokens: requestTokens, CacheReadInputTokens: sys,
				CacheCreationInputTokens: session{rounds: 6, edited: 2}.prefixUpTo(t, 6) - sys}
		}},
		{"five idle minutes later the cache is cold", 5 * time.Minute, session{rounds: 6, edited: 2}, func() Usage {
			return Usage{InputTokens: requestTokens, CacheCreationInputTokens: session{rounds: 6, edited: 2}.prefixUpTo(t, 6)}
		}},
		{"another model has a cache of its own", time.Second, session{rounds: 6, edited: 2, model: "claude-haiku-4-5-20251001"}, func() Usage {
			return Usage{InputTokens: requestTokens, CacheCreationInputTokens: session{rounds: 6, edited: 2, model: "claude-haiku-4-5-20251001"}.prefixUpTo(t, 6)}
		}},
	}
	var want CacheTally
	for _, st := range steps {
		clock.Advance(st.advance)
		got := cachedUsage(t, u, st.s.body())
		w := st.want()
		w.OutputTokens = got.OutputTokens
		w.CacheCreation.Ephemeral5m = w.CacheCreationInputTokens
		if got != w {
			t.Errorf("%s: usage %+v; want %+v", st.name, got, w)
		}
		if sum := got.InputTokens + got.CacheReadInputTokens + got.CacheCreationInputTokens; sum != total(st.s) {
			t.Errorf("%s: input+read+write = %d; want the count %d", st.name, sum, total(st.s))
		}
		want.Add(got)
	}
	if got := cache.Tally(); got != want || got.Requests != len(steps) || got.Hits != 4 {
		t.Errorf("Tally() = %+v; want %+v with %d requests and 4 hits", got, want, len(steps))
	}
}

func TestCacheSimOneHourBreakpoint(t *testing.T) {
	clock := newFakeClock()
	u := newCachingUpstream(t, &CacheSim{Now: clock.Now})
	s := session{systemTTL: "1h", rounds: 2}
	sys := s.systemPrefix(t)
	first := cachedUsage(t, u, s.body())
	if first.CacheCreation != (CacheCreation{Ephemeral1h: sys, Ephemeral5m: s.prefixUpTo(t, 2) - sys}) {
		t.Errorf("first write by TTL %+v; want 1h %d (system) and 5m the rest", first.CacheCreation, sys)
	}
	clock.Advance(30 * time.Minute)
	got := cachedUsage(t, u, s.body())
	if got.CacheReadInputTokens != sys || got.CacheCreation != (CacheCreation{Ephemeral5m: s.prefixUpTo(t, 2) - sys}) {
		t.Errorf("after 30 minutes %+v; want the 1h system prefix read (%d) and the messages re-written for 5m", got, sys)
	}
	clock.Advance(61 * time.Minute)
	if got := cachedUsage(t, u, s.body()); got.CacheReadInputTokens != 0 {
		t.Errorf("after 61 idle minutes read %d; want a miss", got.CacheReadInputTokens)
	}
}

func TestCacheSimLimits(t *testing.T) {
	t.Run("a prefix below the minimum is not cached", func(t *testing.T) {
		u := newCachingUpstream(t, &CacheSim{MinTokens: 100000})
		s := session{rounds: 2}
		for range 2 {
			if got := cachedUsage(t, u, s.body()); got.CacheReadInputTokens != 0 || got.CacheCreationInputTokens != 0 ||
				got.InputTokens != s.prefixUpTo(t, 2)+requestTokens {
				t.Errorf("usage %+v; want all %d uncached", got, s.prefixUpTo(t, 2)+requestTokens)
			}
		}
	})
	t.Run("a breakpoint looks back only 20 blocks", func(t *testing.T) {
		u := newCachingUpstream(t, &CacheSim{})
		cachedUsage(t, u, session{rounds: 1}.body())
		// 8 rounds add 24 blocks: the last breakpoint cannot see round 1's entry.
		got := cachedUsage(t, u, session{rounds: 9}.body())
		if sys := (session{}).systemPrefix(t); got.CacheReadInputTokens != sys {
			t.Errorf("read %d; want only the system prompt %d", got.CacheReadInputTokens, sys)
		}
		// A breakpoint on round 1's result (within reach) finds it again.
		u2 := newCachingUpstream(t, &CacheSim{})
		cachedUsage(t, u2, session{rounds: 1}.body())
		got = cachedUsage(t, u2, session{rounds: 9, extraBPs: 1}.body())
		if want := (session{}).prefixUpTo(t, 1); got.CacheReadInputTokens != want {
			t.Errorf("with a breakpoint on round 1, read %d; want %d", got.CacheReadInputTokens, want)
		}
	})
	t.Run("top-level cache_control caches up to the last block", func(t *testing.T) {
		u := newCachingUpstream(t, &CacheSim{MinTokens: -1})
		body := `{"model":"m","cache_control":{"type":"ephemeral"},"system":"be brief","messages":[{"role":"user","content":"hello there"}]}`
		cachedUsage(t, u, body)
		if got := cachedUsage(t, u, body); got.InputTokens != requestTokens || got.CacheReadInputTokens == 0 {
			t.Errorf("usage %+v; want all but the framing read", got)
		}
	})
	t.Run("a fifth breakpoint is refused as the API refuses it", func(t *testing.T) {
		u := newCachingUpstream(t, &CacheSim{})
		resp := post(t, u, "/v1/messages", session{rounds: 5, extraBPs: 4}.body())
		var e struct {
			Type  string
			Error struct{ Type, Message string }
		}
		json.NewDecoder(resp.Body).Decode(&e)
		if resp.StatusCode != 400 || e.Error.Type != "invalid_request_error" ||
			e.Error.Message != "A maximum of 4 blocks with cache_control may be provided. Found 6." {
			t.Errorf("6 breakpoints = %d %+v; want 400 with the API's message", resp.StatusCode, e)
		}
		if got := u.Requests(); len(got) != 1 || got[0].Usage != nil {
			t.Errorf("a refused request reported usage: %+v", got)
		}
	})
}

func TestPrices(t *testing.T) {
	p := SonnetPrices()
	for name, ratio := range map[string]float64{"5m write": p.CacheWrite5m / p.Input, "1h write": p.CacheWrite1h / p.Input,
		"read": p.CacheRead / p.Input, "output": p.Output / p.Input} {
		want := map[string]float64{"5m write": 1.25, "1h write": 2, "read": 0.1, "output": 5}[name]
		if math.Abs(ratio-want) > 1e-9 {
			t.Errorf("SonnetPrices %s/input = %v; want %v", name, ratio, want)
		}
	}
	tally := CacheTally{Uncached: 1_000_000, Reads: 10_000_000, Writes5m: 1_000_000, Writes1h: 500_000, Output: 200_000}
	if got, want := p.InputCost(tally), 3+3+3.75+3.0; math.Abs(got-want) > 1e-9 {
		t.Errorf("InputCost = %v; want %v", got, want)
	}
	if got, want := p.Cost(tally), 12.75+3; math.Abs(got-want) > 1e-9 {
		t.Errorf("Cost = %v; want %v", got, want)
	}
	if got, want := p.EffectiveInput(tally), 12.75/3*1e6; math.Abs(got-want) > 1e-3 {
		t.Errorf("EffectiveInput = %v; want %v", got, want)
	}
	if tally.Input() != 12_500_000 || tally.Writes() != 1_500_000 {
		t.Errorf("Input() = %d, Writes() = %d", tally.Input(), tally.Writes())
	}
}
