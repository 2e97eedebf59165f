// Command shipped-bench measures Longhaul as users run it: the real `longhaul --headless`
// process with default settings (history recorded, bodies stored, a temp data directory)
// beside a bare httputil.ReverseProxy and Longhaul's proxy without the recorder, each in its
// own process, against one scripted upstream, in one run. It prints the table of the
// performance targets (docs/benchmarks.md); `make bench` runs it.
//
//	go build -o build/bin/longhaul-headless . && go run ./app/recorder/cmd/shipped-bench -longhaul build/bin/longhaul-headless
//
// Processes make the memory figures real: peak RSS is VmHWM, CPU is utime+stime from
// /proc/PID/stat. Every request's reply is checked (status, length), so a broken target
// cannot post a fast figure. With -profile DIR a fourth target runs the same wiring as main.go
// (store → recorder → proxy) inside this binary and writes CPU, heap and allocation profiles.
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
	flag.IntVar(&o.rounds, "rounds", 3, "rounds of the whole table; figures are medians")
	flag.DurationVar(&o.idle, "idle", time.Minute, "how long after its load a process's RSS is read")
	flag.StringVar(&o.profile, "profile", "", "directory for the in-process recorder target's pprof profiles")
	serve := flag.String("serve", "", "internal: run as a child target of this kind")
	upstream := flag.String("upstream", "", "internal: the child's upstream")
	dataDir := flag.String("data-dir", "", "internal: the child's data directory")
	flag.Parse()
	if *serve != "" {
		if err := serveChild(*serve, *upstream, *dataDir, o.profile); err != nil {
			fmt.Fprintln(os.Stderr, "shipped-bench child:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(o, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "shipped-bench:", err)
		os.Exit(1)
	}
}

type options struct {
	longhaul string
	rounds   int
	idle     time.Duration
	profile  string
}

// load sizes one round of one target.
type load struct {
	large, small   int           // sequential 800 KB and ~1 KB requests
	c32            time.Duration // small requests at concurrency 32
	streams, waves int           // concurrent 800 KB streams, waves of them
}

var fullLoad = load{large: 200, small: 300, c32: 2 * time.Second, streams: 64, waves: 2}

// figures are one round's measurements of one target.
type figures struct {
	large, small time.Duration // p50 round trips
	c32          float64       // req/s
	cpuPer1000   time.Duration // CPU per 1,000 large requests
	peakMB       float64
	idleMB       float64
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

	names := []string{"bare", "recorder-off"}
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
		p, err := startChild(n, up.URL, dir, o.profile)
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
		d, err := measureDirect(up, w, fullLoad)
		if err != nil {
			return fmt.Errorf("direct: %w", err)
		}
		direct = append(direct, d)
		// Each round starts with a different target, so no target always runs first.
		for i := range procs {
			p := procs[(i+round)%len(procs)]
			f, err := measure(up, w, p, fullLoad, o.profile != "" && round == o.rounds-1)
			if err != nil {
				return fmt.Errorf("%s: %w", p.name, err)
			}
			loadEnd[p.name] = time.Now()
			results[p.name] = append(results[p.name], f)
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
	printTable(out, o, direct, results, procs)
	for _, p := range procs {
		if p.name == "shipped" {
			printHistoryStatus(out, p)
		}
	}
	return nil
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
		DatabaseBytes, BodiesRepeated             int64
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil || resp.StatusCode != http.StatusOK {
		fmt.Fprintf(out, "shipped history status: status %d, %v\n", resp.StatusCode, err)
		return
	}
	fmt.Fprintf(out, "shipped history: %d records written, %d lost, %d recorded without their bodies (memory bound), %d failed batches; database %.1f MB; %d request bodies stored from what the proxy found they repeat\n",
		st.Written, st.Dropped, st.BodiesDropped, st.Failures, float64(st.DatabaseBytes)/(1<<20), st.BodiesRepeated)
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
	w.n++
	b := make([]byte, 0, len(head)+len(tail)+32)
	b = append(b, head...)
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

func measureDirect(up *proxytest.Upstream, w *workload, l load) (figures, error) {
	var f figures
	var err error
	if f.large, err = measureLarge(up, w, up.URL, l); err != nil {
		return f, err
	}
	f.small, err = measureSmall(up, w, up.URL, l)
	return f, err
}

// measureLarge returns the p50 round trip of l.large sequential 800 KB requests.
func measureLarge(up *proxytest.Upstream, w *workload, base string, l load) (time.Duration, error) {
	msg := proxytest.TextMessage(proxytest.DefaultModel, "Hello from the benchmark.")
	up.SetDefault(proxytest.Reply{Message: msg})
	c := newClient()
	defer c.CloseIdleConnections()
	// Bodies are built before the clock starts, so the figure is the round trip alone.
	larges := make([][]byte, l.large)
	for i := range larges {
		larges[i] = w.next(w.largeHead, w.largeTail)
	}
	return sequential(c, base, l.large, func(i int) []byte { return larges[i] }, len(msg.JSON()))
}

// measureSmall returns the p50 round trip of l.small sequential ~1 KB requests.
func measureSmall(up *proxytest.Upstream, w *workload, base string, l load) (time.Duration, error) {
	msg := proxytest.TextMessage(proxytest.DefaultModel, "Hello from the benchmark.")
	up.SetDefault(proxytest.Reply{Message: msg})
	c := newClient()
	defer c.CloseIdleConnections()
	return sequential(c, base, l.small, func(int) []byte { return w.small }, len(msg.JSON()))
}

// measure runs one round of the load against p.
func measure(up *proxytest.Upstream, w *workload, p *process, l load, heapProfile bool) (figures, error) {
	// History is written after the reply, so the CPU window opens and closes on a quiet
	// process: it holds the whole cost of the large requests, wherever it was spent.
	cpu0, err := quiesce(p.pid())
	if err != nil {
		return figures{}, err
	}
	var f figures
	if f.large, err = measureLarge(up, w, p.base, l); err != nil {
		return f, err
	}
	cpu1, err := quiesce(p.pid())
	if err != nil {
		return f, err
	}
	f.cpuPer1000 = (cpu1 - cpu0) * 1000 / time.Duration(l.large)
	if f.small, err = measureSmall(up, w, p.base, l); err != nil {
		return f, err
	}

	msg := proxytest.TextMessage(proxytest.DefaultModel, "Hello from the benchmark.")
	c := newClient()
	defer c.CloseIdleConnections()
	if f.c32, err = throughput(c, p.base, 32, l.c32, w.small, len(msg.JSON())); err != nil {
		return f, err
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
			return f, fmt.Errorf("streams: %w", err)
		}
	}
	if f.peakMB, _, err = proxytest.ProcMemMB(p.pid()); err != nil {
		return f, err
	}
	return f, nil
}

// quiesce waits until the process has used no CPU for half a second (at most 30 s) and
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
		if now == last {
			still++
		} else {
			still = 0
		}
		last = now
	}
	return last, nil
}
