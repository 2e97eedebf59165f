package proxy

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"longhaul/proxy/anthropic"
	"longhaul/proxy/pool"
	"longhaul/proxy/proxytest"
)

// agentSession is a Claude-Code-shaped conversation: a long system prompt and tool list, then
// rounds of thinking, a tool call and its result. Like Claude Code it marks the system prompt
// and the last message with cache_control, and sends the whole history every turn.
type agentSession struct {
	system, tools string
	msgs          []string
}

func newAgentSession() *agentSession {
	var tools []string
	for i := range 20 {
		tools = append(tools, fmt.Sprintf(`{"name":"Tool%02d","description":%s,"input_schema":{"type":"object","properties":{"path":{"type":"string"}}}}`,
			i, anthropic.Quote(strings.Repeat("Performs an operation on the workspace and reports the result. ", 6))))
	}
	return &agentSession{
		system: string(anthropic.Quote(strings.Repeat("You are a careful coding agent working in a large repository. ", 60))),
		tools:  "[" + strings.Join(tools, ",") + "]",
		// The task comes with a long specification pasted in: after Layer 1 the request still
		// sits above Layer 2's line, where pressure alone elides a little more thinking, and
		// so re-writes the cache from there, on every turn.
		msgs: []string{`{"role":"user","content":[{"type":"text","text":` + string(anthropic.Quote("Refactor the storage layer and keep every test green. The specification follows.\n"+
			strings.Repeat("The storage layer must keep every record it accepted, in order, and answer reads from a consistent snapshot. ", 300))) + `}]}`},
	}
}

// addRound appends round i: the assistant thinks, calls a tool, and the tool's result comes back.
func (s *agentSession) addRound(i int) {
	id := fmt.Sprintf("toolu_%04d", i)
	thinking := fmt.Sprintf("Round %d: I should look at the next file, compare it with what the tests expect and decide. ", i)
	s.msgs = append(s.msgs,
		fmt.Sprintf(`{"role":"assistant","content":[{"type":"thinking","thinking":%s,"signature":"sig_%04d_%s"},{"type":"tool_use","id":"%s","name":"Tool%02d","input":{"path":"pkg/file%d.go"}}]}`,
			anthropic.Quote(strings.Repeat(thinking, 25)), i, strings.Repeat("s", 60), id, i%20, i),
		fmt.Sprintf(`{"role":"user","content":[{"type":"tool_result","tool_use_id":"%s","content":%s}]}`,
			id, anthropic.Quote(strings.Repeat(fmt.Sprintf("line %d of the file, with some code in it;\n", i), 80+i%5*15))))
}

func (s *agentSession) body() string {
	last := len(s.msgs) - 1
	msgs := append([]string(nil), s.msgs[:last]...)
	// The breakpoint on the last block of the last message, as Claude Code marks it.
	lastMsg := s.msgs[last]
	k := strings.LastIndex(lastMsg, "}]}")
	msgs = append(msgs, lastMsg[:k]+`,"cache_control":{"type":"ephemeral"}}]}`)
	return `{"model":"claude-sonnet-4-5","max_tokens":4096,"stream":false,` +
		`"metadata":{"user_id":"user_cost_account__session_0f0e0d0c-0b0a-4909-8807-060504030201"},` +
		`"system":[{"type":"text","text":` + s.system + `,"cache_control":{"type":"ephemeral"}}],` +
		`"tools":` + s.tools + `,"messages":[` + strings.Join(msgs, ",") + `]}`
}

type sessionCost struct {
	effective  float64 // input cost in uncached-token units, summary calls included
	tally      proxytest.CacheTally
	failedAt   int // round of the first request that did not get a 200 (0: none)
	overWindow int // requests the upstream counted above its window
	peak       int // largest request the upstream counted
}

// runCostSession plays a rounds-long session through a real proxy in front of an upstream
// simulating Anthropic's prompt cache (5-minute TTL) and a window, on a fake clock: gap is the
// think time between turns, and every pauseEvery turns the user steps away for pause.
// A nil cfg sends the session straight to the upstream: no proxy, no compaction.
func runCostSession(t *testing.T, cfg *Config, rounds, window int, gap time.Duration, pauseEvery int, pause time.Duration) sessionCost {
	t.Helper()
	var mu sync.Mutex
	now := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }

	up := proxytest.NewUpstream()
	t.Cleanup(up.Close)
	up.SetRecordBodies(false)
	sim := &proxytest.CacheSim{Now: clock}
	up.SetSimulation(proxytest.Simulation{Caching: sim, Window: window})
	base := up.URL
	if cfg != nil {
		cfg.Compaction.ContextLimits = map[string]int{"claude-*": window}
		srv, err := New(*cfg, Options{Now: clock})
		if err != nil {
			t.Fatal(err)
		}
		srv.SetAccounts([]pool.Account{{ID: 1, Label: "a", BaseURL: up.URL, Secret: "sk-ant-cost-000000000001", Enabled: true}})
		front := httptest.NewServer(srv.Handler())
		t.Cleanup(front.Close)
		base = front.URL
	}

	s := newAgentSession()
	var out sessionCost
	for i := range rounds {
		s.addRound(i)
		resp, err := http.Post(base+"/v1/messages", "application/json", strings.NewReader(s.body()))
		if err != nil {
			t.Fatal(err)
		}
		body := readAll(t, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 && out.failedAt == 0 {
			out.failedAt = i + 1
			t.Logf("round %d: %d %.200s", i+1, resp.StatusCode, body)
			break
		}
		advance(gap)
		if pauseEvery > 0 && (i+1)%pauseEvery == 0 {
			advance(pause)
		}
	}
	for _, r := range up.Requests() {
		out.peak = max(out.peak, r.Tokens)
		if r.Tokens > window {
			out.overWindow++
		}
	}
	out.tally = sim.Tally()
	out.effective = proxytest.SonnetPrices().EffectiveInput(out.tally)
	return out
}

// A 150-round agent session costs at least 10% less with cache-aware compaction than with
// compaction on pressure alone, with and without pauses, and no request exceeds the window.
// The figures are in docs/benchmarks.md ("Compaction and the prompt cache").
func TestCacheAwareCompactionCostsLess(t *testing.T) {
	const rounds, window = 150, 40_000
	for _, sc := range []struct {
		name       string
		pauseEvery int
	}{{"no pauses", 0}, {"a pause every 25 turns", 25}} {
		t.Run(sc.name, func(t *testing.T) {
			gap, pause := 20*time.Second, 7*time.Minute
			none := runCostSession(t, nil, rounds, window, gap, sc.pauseEvery, pause)
			alone := runCostSession(t, &Config{Compaction: CompactionConfig{NoCacheAware: true}}, rounds, window, gap, sc.pauseEvery, pause)
			aware := runCostSession(t, &Config{}, rounds, window, gap, sc.pauseEvery, pause)
			t.Logf("no compaction: %.0f effective input tokens, failed at round %d (peak %d)", none.effective, none.failedAt, none.peak)
			t.Logf("pressure alone: %.0f (reads %d, writes %d, uncached %d; peak %d)", alone.effective, alone.tally.Reads, alone.tally.Writes(), alone.tally.Uncached, alone.peak)
			t.Logf("cache-aware:    %.0f (reads %d, writes %d, uncached %d; peak %d) = %.1f%% of pressure alone",
				aware.effective, aware.tally.Reads, aware.tally.Writes(), aware.tally.Uncached, aware.peak, 100*aware.effective/alone.effective)
			if none.failedAt == 0 {
				t.Errorf("the session never outgrew the %d-token window without compaction: the test proves nothing", window)
			}
			for name, c := range map[string]sessionCost{"pressure alone": alone, "cache-aware": aware} {
				if c.failedAt != 0 || c.overWindow != 0 {
					t.Errorf("%s: failed at round %d, %d requests over the window", name, c.failedAt, c.overWindow)
				}
			}
			if aware.effective > 0.9*alone.effective {
				t.Errorf("cache-aware cost %.0f > 90%% of pressure alone's %.0f", aware.effective, alone.effective)
			}
		})
	}
}
