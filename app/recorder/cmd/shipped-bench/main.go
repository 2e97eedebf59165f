// Command shipped-bench measures Longhaul as users run it: the real `longhaul --headless`
// process with default settings (history recorded, bodies stored, a temp data directory)
// beside a bare httputil.ReverseProxy and Longhaul's proxy without the recorder, each in its
// own process, against one scripted upstream, in one run. It prints the table of the
// performance targets (docs/benchmarks.md); `make bench` runs it. The yardsticks are
// bench-target, a program of their own as the product is (docs/performance.md, sixth pass).
//
//	go build -o build/bin/longhaul-headless . && go build -o build/bin/bench-target ./app/recorder/cmd/bench-target &&
//	  go build -o build/bin/shipped-bench ./app/recorder/cmd/shipped-bench && build/bin/shipped-bench -longhaul build/bin/longhaul-headless
//
// Processes make the memory figures real: peak RSS is VmHWM, CPU the scheduler's count of each
// thread's time on a CPU (/proc/PID/task/*/schedstat). A second bare proxy, bare-again, is
// measured as a target too: what separates it from bare is the machine's own noise, the floor
// under every other ratio. Every request's reply is checked (status, length), so a broken
// target cannot post a fast figure. With -profile DIR one more target runs the same wiring as main.go
// (store → recorder → proxy) in bench-target and writes CPU, heap and allocation profiles.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"longhaul/proxy/proxytest"
)

func main() {
	var o options
	flag.StringVar(&o.longhaul, "longhaul", "", "the longhaul binary to measure (empty: no shipped column)")
	flag.IntVar(&o.rounds, "rounds", 5, "rounds of the whole table; figures are medians")
	flag.DurationVar(&o.idle, "idle", time.Minute, "how long after its load a process's RSS is read")
	flag.StringVar(&o.profile, "profile", "", "directory for the recorder-inproc target's pprof profiles")
	flag.StringVar(&o.targets, "targets", "", "the bench-target binary (empty: bench-target beside this one)")
	flag.Parse()
	if o.targets == "" {
		self, err := os.Executable()
		if err != nil {
			fmt.Fprintln(os.Stderr, "shipped-bench:", err)
			os.Exit(1)
		}
		o.targets = filepath.Join(filepath.Dir(self), "bench-target")
	}
	if err := run(o, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "shipped-bench:", err)
		os.Exit(1)
	}
}

type options struct {
	longhaul string
	targets  string // bench-target: the yardsticks, each a program of its own
	rounds   int
	idle     time.Duration
	profile  string
}

// load sizes one round of one target.
type load struct {
	large, small           int           // sequential 800 KB and ~1 KB requests
	largeBlock, smallBlock int           // how many of them a target sends before the next takes its turn
	c32                    time.Duration // small requests at concurrency 32
	streams, waves         int           // concurrent 800 KB streams, waves of them
}

// fullLoad is a round of `make bench`. A block of either size outlasts the recorder's 100 ms
// tick (40 × ~2.5 ms, 300 × ~0.7 ms), so the history a target writes after its replies lands
// mostly in its own block, on its own figures. Ten blocks a target: this VM's speed drifts
// within seconds, and a p50 taken over more turns of the targets follows the drift alike for
// each (with four and five, the small and large rows of one run moved by more than their
// distance to the targets from round to round).
var fullLoad = load{large: 400, small: 3000, largeBlock: 40, smallBlock: 300, c32: 2 * time.Second, streams: 64, waves: 2}

// figures are one round's measurements of one target.
type figures struct {
	large, small time.Duration // p50 round trips
	c32          float64       // req/s
	cpuPer1000   time.Duration // CPU per 1,000 large requests
	peakMB       float64
	idleMB       float64
	idleCPU      float64 // ms of CPU per second, idle after the rounds
}

func run(o options, out io.Writer) error {
	tmp, err := os.MkdirTemp("", "longhaul-shipped-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	up := proxytest.NewUpstream()
	defer up.Close()
	up.SetRecordBodies(false)
	w := newWorkload()

	// bare twice: the second ("bare-again", the same program) shows what the machine alone does
	// to a ratio, the floor under every other column's.
	names := []string{"bare", "bare-again", "recorder-off"}
	if o.profile != "" {
		if err := os.MkdirAll(o.profile, 0o755); err != nil {
			return err
		}
		names = append(names, "recorder-inproc")
	}
	var procs []*process
	defer func() {
		for _, p := range procs {
			p.stop()
		}
	}()
	for _, n := range names {
		dir := filepath.Join(tmp, n)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		p, err := startTarget(o.targets, n, strings.TrimSuffix(n, "-again"), up.URL, dir, o.profile)
		if err != nil {
			return err
		}
		procs = append(procs, p)
	}
	if o.longhaul != "" {
		dir := filepath.Join(tmp, "shipped")
		p, err := startShipped(o.longhaul, up.URL, dir)
		if err != nil {
			return err
		}
		procs = append(procs, p)
	}
	fmt.Fprintf(out, "shipped-bench: %d rounds; targets:", o.rounds)
	for _, p := range procs {
		fmt.Fprintf(out, " %s (pid %d)", p.name, p.pid())
	}
	fmt.Fprintln(out)

	results := map[string][]figures{}
	var direct []figures
	loadEnd := map[string]time.Time{}
	for round := range o.rounds {
		// Latency and CPU: every target (and the upstream itself, direct) in turns.
		lat, err := measureLatency(up, w, procs, fullLoad, round)
		if err != nil {
			return withStderr(err, procs)
		}
		direct = append(direct, lat["direct"])
		// Load and memory: one target at a time; each round starts with a different one.
		for i := range procs {
			p := procs[(i+round)%len(procs)]
			f := lat[p.name]
			if err := measureLoad(up, w, p, fullLoad, &f, o.profile != "" && round == o.rounds-1); err != nil {
				return withStderr(fmt.Errorf("%s: %w", p.name, err), procs)
			}
			loadEnd[p.name] = time.Now()
			results[p.name] = append(results[p.name], f)
		}
		for _, p := range procs {
			f := results[p.name][round]
			fmt.Fprintf(out, "  round %d %-16s 800KB p50 %8v  small p50 %8v  c32 %6.0f req/s  cpu/1000 %6.2fs  peak %6.1f MB\n",
				round+1, p.name, f.large.Round(time.Microsecond), f.small.Round(time.Microsecond), f.c32, f.cpuPer1000.Seconds(), f.peakMB)
		}
	}
	// Memory given back: each process's RSS once it has been idle for o.idle.
	for _, p := range procs {
		time.Sleep(time.Until(loadEnd[p.name].Add(o.idle)))
		_, rss, err := proxytest.ProcMemMB(p.pid())
		if err != nil {
			return err
		}
		rs := results[p.name]
		rs[len(rs)-1].idleMB = rss
	}
	// What each process spends doing nothing, after all that: timers and pollers that wake an
	// app a user keeps running all day.
	idleCPU, err := cpuWhileIdle(procs, idleCPUWindow)
	if err != nil {
		return err
	}
	for _, p := range procs {
		rs := results[p.name]
		rs[len(rs)-1].idleCPU = idleCPU[p.name]
	}
	printTable(out, o, direct, results, procs)
	for _, p := range procs {
		if p.name == "shipped" {
			printHistoryStatus(out, p)
		}
	}
	return nil
}

// withStderr adds to a failed phase's error what the targets wrote on stderr: why a target
// dropped a request is there, not in the client's "unexpected EOF".
func withStderr(err error, procs []*process) error {
	var b strings.Builder
	for _, p := range procs {
		if s := p.stderr.String(); s != "" {
			fmt.Fprintf(&b, "\n%s stderr:\n%s", p.name, s)
		}
	}
	return fmt.Errorf("%w%s", err, b.String())
}

// printHistoryStatus prints what the shipped process's history kept, from its own status
// endpoint: under the bursts of 64 large streams the recorder's byte budget drops bodies (never
// metadata), and a table without that count would flatter its memory figures.
func printHistoryStatus(out io.Writer, p *process) {
	resp, err := http.Get(p.base + "/longhaul/v1/history/status")
	if err != nil {
		fmt.Fprintf(out, "shipped history status: %v\n", err)
		return
	}
	defer resp.Body.Close()
	var st struct {
		Written, Dropped, BodiesDropped, Failures int64
		DatabaseBytes, BodiesRepeated, BodiesLost int64
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil || resp.StatusCode != http.StatusOK {
		fmt.Fprintf(out, "shipped history status: status %d, %v\n", resp.StatusCode, err)
		return
	}
	fmt.Fprintf(out, "shipped history: %d records written, %d lost, %d recorded without their bodies (memory bound), %d bodies lost, %d failed batches; database %.1f MB; %d request bodies stored from what the proxy found they repeat\n",
		st.Written, st.Dropped, st.BodiesDropped, st.BodiesLost, st.Failures, float64(st.DatabaseBytes)/(1<<20), st.BodiesRepeated)
}

// workload holds the request bodies: a Claude Code request of 800 KB whose last user text
// differs per request (as consecutive turns of a session do), and a ~1 KB one.
type workload struct {
	largeHead, largeTail   []byte // non-stream, around the varying text
	streamHead, streamTail []byte
	small                  []byte
	n                      int
}

const varyingText = `"text":"continue"`

func newWorkload() *workload {
	w := &workload{small: smallRequest()}
	split := func(b []byte) ([]byte, []byte) {
		i := strings.LastIndex(string(b), varyingText)
		return b[:i], b[i+len(varyingText):]
	}
	w.largeHead, w.largeTail = split(proxytest.ClaudeCodeRequest(800<<10, false))
	w.streamHead, w.streamTail = split(proxytest.ClaudeCodeRequest(800<<10, true))
	return w
}

// next returns a fresh body: head + a text no other request of the run carries + tail.
func (w *workload) next(head, tail []byte) []byte {
	return w.nextInto(nil, head, tail)
}

// nextInto is next written into buf's memory (reused once the previous request is done).
func (w *workload) nextInto(buf, head, tail []byte) []byte {
	w.n++
	b := append(buf[:0], head...)
	b = fmt.Appendf(b, `"text":"continue with step %d"`, w.n)
	return append(b, tail...)
}

func smallRequest() []byte {
	const size = 1024
	head := `{"model":"claude-sonnet-4-5-20250929","max_tokens":1024,"stream":false,` +
		`"metadata":{"user_id":"user_3f2a_account_9c1e_session_6d0b8f3e-1111-4222-8333-944455556666"},` +
		`"messages":[{"role":"user","content":"`
	tail := `"}]}`
	text := strings.Repeat("Summarise the change in this diff. ", size/30)
	return []byte(head + text[:size-len(head)-len(tail)] + tail)
}

// endpoint is where a latency phase sends its requests: a target process, or the upstream
// itself ("direct", pid 0: no CPU is read).
type endpoint struct {
	name, base string
	pid        int
}

// measureLatency measures one round's sequential latencies (800 KB and small requests) and the
// CPU per 1,000 large requests, with the targets taking turns in blocks (interleaved): this
// 2-core VM's own drift moved a whole back-to-back phase by ±30 %, which blocks spread over
// every target alike. A process's CPU is its own whenever it is spent, so it is read around the
// whole large phase, every process quiet at both ends: the history written after the replies
// is in it.
func measureLatency(up *proxytest.Upstream, w *workload, procs []*process, l load, round int) (map[string]figures, error) {
	eps := []endpoint{{name: "direct", base: up.URL}}
	for _, p := range procs {
		eps = append(eps, endpoint{name: p.name, base: p.base, pid: p.pid()})
	}
	cpu0, err := quiesceAll(eps)
	if err != nil {
		return nil, err
	}
	msg := proxytest.TextMessage(proxytest.DefaultModel, "Hello from the benchmark.")
	up.SetDefault(proxytest.Reply{Message: msg})
	want := len(msg.JSON())
	c := newClient()
	defer c.CloseIdleConnections()
	// Each request a session's next turn, written into one buffer per endpoint outside the clock
	// (the previous request is done with it).
	bufs := map[string][]byte{}
	large, err := interleaved(c, eps, l.large, l.largeBlock, round, func(ep endpoint) []byte {
		bufs[ep.name] = w.nextInto(bufs[ep.name], w.largeHead, w.largeTail)
		return bufs[ep.name]
	}, want)
	if err != nil {
		return nil, fmt.Errorf("800 KB requests: %w", err)
	}
	cpu1, err := quiesceAll(eps)
	if err != nil {
		return nil, err
	}
	small, err := interleaved(c, eps, l.small, l.smallBlock, round, func(endpoint) []byte { return w.small }, want)
	if err != nil {
		return nil, fmt.Errorf("small requests: %w", err)
	}
	out := map[string]figures{}
	for _, ep := range eps {
		f := figures{large: large[ep.name], small: small[ep.name]}
		if ep.pid != 0 {
			// The window holds l.large requests and interleaved's warm-up one.
			f.cpuPer1000 = (cpu1[ep.name] - cpu0[ep.name]) * 1000 / time.Duration(l.large+1)
		}
		out[ep.name] = f
	}
	return out, nil
}

// interleaved sends each endpoint n requests one after another, in blocks of block requests,
// the endpoints taking turns block by block (the order rotated by round and by block, so none
// always follows the same neighbour), and returns each endpoint's p50 round trip.
func interleaved(c *http.Client, eps []endpoint, n, block, round int, body func(endpoint) []byte, wantLen int) (map[string]time.Duration, error) {
	took := map[string][]time.Duration{}
	for _, ep := range eps { // a warm connection each, outside the figures
		if err := post(c, ep.base, body(ep), wantLen); err != nil {
			return nil, fmt.Errorf("%s: %w", ep.name, err)
		}
	}
	for b := 0; b*block < n; b++ {
		for i := range eps {
			ep := eps[(i+b+round)%len(eps)]
			for range min(block, n-b*block) {
				req := body(ep)
				t0 := time.Now()
				if err := post(c, ep.base, req, wantLen); err != nil {
					return nil, fmt.Errorf("%s: %w", ep.name, err)
				}
				took[ep.name] = append(took[ep.name], time.Since(t0))
			}
		}
	}
	p50 := map[string]time.Duration{}
	for name, ds := range took {
		p50[name] = median(ds)
	}
	return p50, nil
}

// quiesceAll waits until every target process is quiet and returns each one's CPU time then.
func quiesceAll(eps []endpoint) (map[string]time.Duration, error) {
	cpu := map[string]time.Duration{}
	for _, ep := range eps {
		if ep.pid == 0 {
			continue
		}
		if _, err := quiesce(ep.pid); err != nil {
			return nil, err
		}
	}
	// Read after all are quiet: one still writing when the first was read would move.
	for _, ep := range eps {
		if ep.pid == 0 {
			continue
		}
		t, err := procCPU(ep.pid)
		if err != nil {
			return nil, err
		}
		cpu[ep.name] = t
	}
	return cpu, nil
}

// measureLoad runs one round's load phases against p alone: small requests at concurrency 32,
// then waves of concurrent 800 KB streams (its peak RSS).
func measureLoad(up *proxytest.Upstream, w *workload, p *process, l load, f *figures, heapProfile bool) error {
	msg := proxytest.TextMessage(proxytest.DefaultModel, "Hello from the benchmark.")
	up.SetDefault(proxytest.Reply{Message: msg})
	c := newClient()
	defer c.CloseIdleConnections()
	var err error
	if f.c32, err = throughput(c, p.base, 32, l.c32, w.small, len(msg.JSON())); err != nil {
		return err
	}

	// 20 events 30 ms apart: each stream lasts ~600 ms, so all of a wave overlap.
	stream := proxytest.ManyEvents(20, "")
	up.SetDefault(proxytest.Reply{Message: stream, EventGap: 30 * time.Millisecond})
	for range l.waves {
		bodies := make([][]byte, l.streams)
		for i := range bodies {
			bodies[i] = w.next(w.streamHead, w.streamTail)
		}
		if heapProfile {
			time.AfterFunc(400*time.Millisecond, p.askHeapProfile)
		}
		if err := concurrentWave(c, p.base, l.streams, func(i int) []byte { return bodies[i] }, len(stream.SSE())); err != nil {
			return fmt.Errorf("streams: %w", err)
		}
	}
	if f.peakMB, _, err = proxytest.ProcMemMB(p.pid()); err != nil {
		return err
	}
	return nil
}

// idleCPUWindow is how long each process's CPU is read while it is idle.
const idleCPUWindow = 10 * time.Second

// cpuWhileIdle reads every process's CPU over the same window of d, with nothing sent to any,
// in milliseconds per second.
func cpuWhileIdle(procs []*process, d time.Duration) (map[string]float64, error) {
	read := func() (map[string]time.Duration, error) {
		m := map[string]time.Duration{}
		for _, p := range procs {
			t, err := procCPU(p.pid())
			if err != nil {
				return nil, err
			}
			m[p.name] = t
		}
		return m, nil
	}
	before, err := read()
	if err != nil {
		return nil, err
	}
	time.Sleep(d)
	after, err := read()
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for name, t := range after {
		out[name] = ms(t-before[name]) / d.Seconds()
	}
	return out, nil
}

// quietCPU is how much CPU a target may use in a quarter of a second and count as quiet: an
// idle process still runs its timers (the shipped one has the history writer's 100 ms tick),
// which procCPU, counting nanoseconds, sees.
const quietCPU = 2 * time.Millisecond

// quiesce waits until the process has been quiet for half a second (at most 30 s) and
// returns its CPU time then.
func quiesce(pid int) (time.Duration, error) {
	last, err := procCPU(pid)
	if err != nil {
		return 0, err
	}
	deadline := time.Now().Add(30 * time.Second)
	for still := 0; still < 2 && time.Now().Before(deadline); {
		time.Sleep(250 * time.Millisecond)
		now, err := procCPU(pid)
		if err != nil {
			return 0, err
		}
		if now-last < quietCPU {
			still++
		} else {
			still = 0
		}
		last = now
	}
	return last, nil
}
