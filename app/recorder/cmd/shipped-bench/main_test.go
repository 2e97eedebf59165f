package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"longhaul/proxy/proxytest"
)

// TestHarnessSmoke runs the measurements once, tiny, against a bare reverse proxy in this
// process: every request is checked, the figures come out, and the table names each target.
// It times nothing; `make bench` is where figures are taken.
func TestHarnessSmoke(t *testing.T) {
	up := proxytest.NewUpstream()
	defer up.Close()
	up.SetRecordBodies(false)
	target, err := url.Parse(up.URL)
	if err != nil {
		t.Fatal(err)
	}
	var proxied atomic.Int64
	rp := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) { pr.SetURL(target) }, FlushInterval: -1}
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proxied.Add(1)
		rp.ServeHTTP(w, r)
	}))
	defer front.Close()
	p := &process{name: "bare", base: front.URL}
	w := newWorkload()
	l := load{large: 3, small: 3, c32: 50 * time.Millisecond, streams: 4, waves: 1}

	// Blocks of 2 over 5 requests: every endpoint gets all 5 (and one warm-up), checked each.
	msg := proxytest.TextMessage(proxytest.DefaultModel, "Hello from the benchmark.")
	up.SetDefault(proxytest.Reply{Message: msg})
	eps := []endpoint{{name: "direct", base: up.URL}, {name: "bare", base: front.URL}}
	var sent []string
	lat, err := interleaved(newClient(), eps, 5, 2, 1, func(ep endpoint) []byte {
		sent = append(sent, ep.name)
		return w.next(w.largeHead, w.largeTail)
	}, len(msg.JSON()))
	if err != nil || lat["direct"] <= 0 || lat["bare"] <= 0 {
		t.Fatalf("interleaved = %v, %v; want a p50 for each endpoint", lat, err)
	}
	if n := proxied.Load(); n != 6 {
		t.Errorf("the proxy got %d requests; want 6 (5 and a warm-up)", n)
	}
	// The targets take turns: after the warm-ups, blocks of 2, 2 and 1, starting with bare
	// (round 1 rotates the order by one).
	if got, want := strings.Join(sent, " "), "direct bare bare bare direct direct direct direct bare bare bare direct"; got != want {
		t.Errorf("requests went to\n%s\nwant\n%s", got, want)
	}
	if _, err := quiesceAll(eps[:1]); err != nil {
		t.Errorf("quiesceAll with no process: %v", err)
	}
	if rps, err := throughput(newClient(), p.base, 4, l.c32, w.small, len(msg.JSON())); err != nil || rps <= 0 {
		t.Fatalf("throughput = %v, %v", rps, err)
	}
	stream := proxytest.ManyEvents(3, "")
	up.SetDefault(proxytest.Reply{Message: stream})
	if err := concurrentWave(newClient(), p.base, l.streams, func(int) []byte { return w.next(w.streamHead, w.streamTail) }, len(stream.SSE())); err != nil {
		t.Fatalf("concurrentWave: %v", err)
	}
	// A wrong length is an error, not a figure.
	if err := post(newClient(), p.base, w.small, 1); err == nil {
		t.Error("post with the wrong expected length succeeded; want an error")
	}

	// The 800 KB bodies differ from each other only in their last user text.
	a, b := w.next(w.largeHead, w.largeTail), w.next(w.largeHead, w.largeTail)
	if bytes.Equal(a, b) || len(a) < 800<<10 || !bytes.HasPrefix(b, w.largeHead) {
		t.Errorf("workload bodies: %d and %d bytes, equal %t; want distinct 800 KB turns", len(a), len(b), bytes.Equal(a, b))
	}

	checkCPUClocksAgree(t)
	self, err := os.FindProcess(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	idle, err := cpuWhileIdle([]*process{{name: "self", cmd: &exec.Cmd{Process: self}}}, 50*time.Millisecond)
	if err != nil || idle["self"] < 0 {
		t.Errorf("cpuWhileIdle(self) = %v, %v; want a figure", idle, err)
	}
	peak, cur, err := proxytest.ProcMemMB(os.Getpid())
	if err != nil || peak < cur || cur <= 0 {
		t.Errorf("proxytest.ProcMemMB(self) = %v, %v, %v; want peak ≥ current > 0", peak, cur, err)
	}

	d := figures{large: lat["direct"], small: lat["direct"]}
	f := figures{large: lat["bare"], small: lat["bare"], c32: 100, cpuPer1000: time.Second, peakMB: 50, idleMB: 20}
	var out strings.Builder
	printTable(&out, options{rounds: 1, idle: time.Minute}, []figures{d}, map[string][]figures{"bare": {f}, "shipped": {f}},
		[]*process{p, {name: "shipped"}})
	for _, tg := range targets {
		if !strings.Contains(out.String(), tg.label) {
			t.Errorf("table lacks %q:\n%s", tg.label, out.String())
		}
	}
	if !strings.Contains(out.String(), "CPU while idle") {
		t.Errorf("table lacks the idle CPU:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "shipped/bare 1.00× MET") || !strings.Contains(out.String(), "shipped 50.0 MB MET") {
		t.Errorf("table does not judge equal figures as met:\n%s", out.String())
	}
}

// checkCPUClocksAgree: procCPU (the threads' schedstat, in nanoseconds) and the kernel's
// per-process account in clock ticks (/proc/PID/stat) tell the same CPU time: over a stretch of
// busy work they differ by no more than the ticks' rounding.
func checkCPUClocksAgree(t *testing.T) {
	t.Helper()
	pid := os.Getpid()
	read := func() (sched, ticks time.Duration) {
		var err1, err2 error
		sched, err1 = procCPU(pid)
		ticks, err2 = statCPU(pid)
		if err1 != nil || err2 != nil || sched <= 0 {
			t.Fatalf("procCPU = %v, %v; statCPU = %v, %v", sched, err1, ticks, err2)
		}
		return sched, ticks
	}
	sched0, ticks0 := read()
	sum := uint64(0)
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
		for i := range 1 << 20 { // busy work the compiler cannot drop
			sum = sum*31 + uint64(i)
		}
		if _, ticks := read(); ticks-ticks0 >= 300*time.Millisecond {
			break
		}
	}
	sched1, ticks1 := read()
	dSched, dTicks := sched1-sched0, ticks1-ticks0
	if dTicks < 300*time.Millisecond {
		t.Fatalf("the busy loop ran %v of CPU by /proc/PID/stat (sum %d); want 300 ms", dTicks, sum)
	}
	if diff := (dSched - dTicks).Abs(); diff > 40*time.Millisecond+dTicks/10 {
		t.Errorf("over the same work procCPU counted %v, /proc/PID/stat %v; want them within the ticks' rounding", dSched, dTicks)
	}
}

// TestTargetsStartAnswerAndStop builds bench-target and runs its yardsticks as shipped-bench
// does: each answers a checked request in front of the scripted upstream and ends on SIGINT,
// and a target that cannot start says why.
func TestTargetsStartAnswerAndStop(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "bench-target")
	build := exec.Command("go", "build", "-o", bin, "longhaul/app/recorder/cmd/bench-target")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build bench-target: %v\n%s", err, out)
	}
	up := proxytest.NewUpstream()
	defer up.Close()
	msg := proxytest.TextMessage(proxytest.DefaultModel, "Hello from the benchmark.")
	up.SetDefault(proxytest.Reply{Message: msg})
	for _, kind := range []string{"bare", "recorder-off", "recorder-inproc"} {
		t.Run(kind, func(t *testing.T) {
			p, err := startTarget(bin, kind, kind, up.URL, t.TempDir(), t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			before := len(up.Requests())
			if err := post(newClient(), p.base, smallRequest(), len(msg.JSON())); err != nil {
				t.Errorf("request through %s: %v", kind, err)
			}
			if got := len(up.Requests()) - before; got != 1 {
				t.Errorf("the upstream got %d requests through %s; want 1", got, kind)
			}
			p.stop()
			if code := p.cmd.ProcessState.ExitCode(); code != 0 {
				t.Errorf("%s exited with %d after SIGINT; want 0 (stderr: %s)", kind, code, p.stderr.String())
			}
		})
	}
	t.Run("bare, upstream answering before the body's end", func(t *testing.T) {
		checkBareRelaysEarlyAnswers(t, bin)
	})
	if _, err := startTarget(bin, "nonsense", "nonsense", up.URL, t.TempDir(), ""); err == nil || !strings.Contains(err.Error(), "unknown kind") {
		t.Errorf("startTarget(nonsense) = %v; want the target's own reason", err)
	}
}

// checkBareRelaysEarlyAnswers: an upstream that begins its reply before the request body has
// all arrived (a reply racing the body's last bytes, as the scripted upstream's streams did, by
// a hair, once in several `make bench` runs) still gets the whole body through the bare
// yardstick, and the client the whole reply. The race is forced: the client holds back the
// body's last 100 KB until the reply has begun. Without full duplex, net/http's server read
// the rest of the body away itself as the reply began, and the transport cut the upstream
// connection, or (as here, where the client waits for the reply) held the reply back until the
// body had all arrived.
func checkBareRelaysEarlyAnswers(t *testing.T, bin string) {
	const bodySize, heldBack = 800 << 10, 100 << 10
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.NewResponseController(w).EnableFullDuplex() //nolint:errcheck // HTTP/1: supported
		first := make([]byte, bodySize-heldBack)
		if _, err := io.ReadFull(r.Body, first); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte("started, "))          //nolint:errcheck // the client checks the reply
		http.NewResponseController(w).Flush() //nolint:errcheck // the test server flushes
		n, _ := io.Copy(io.Discard, r.Body)
		fmt.Fprintf(w, "read %d", len(first)+int(n))
	}))
	defer up.Close()
	p, err := startTarget(bin, "bare", "bare", up.URL, t.TempDir(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer p.stop()
	body, send := io.Pipe()
	release := make(chan struct{})
	go func() {
		send.Write(make([]byte, bodySize-heldBack)) //nolint:errcheck // a failed request says
		<-release
		send.Write(make([]byte, heldBack)) //nolint:errcheck // a failed request says
		send.Close()
	}()
	defer close(release)
	// Without full duplex the bare proxy does not even begin the reply: its server waits for the
	// held-back bytes first. The deadline turns that wait into a failure.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	context.AfterFunc(ctx, func() { send.CloseWithError(ctx.Err()) }) // the transport waits on the body
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.base+"/v1/messages", body)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = bodySize
	resp, err := newClient().Do(req)
	if err != nil {
		t.Fatalf("no reply began while the body's end was held back: %v (bare's stderr: %s)", err, p.stderr.String())
	}
	defer resp.Body.Close()
	started := make([]byte, len("started, "))
	if _, err := io.ReadFull(resp.Body, started); err != nil {
		t.Fatalf("the reply's beginning: %v", err)
	}
	release <- struct{}{}
	rest, err := io.ReadAll(resp.Body)
	if want := fmt.Sprintf("read %d", bodySize); err != nil || string(rest) != want {
		t.Fatalf("reply %q then %q, %v; want %q (bare's stderr: %s)", started, rest, err, want, p.stderr.String())
	}
}
