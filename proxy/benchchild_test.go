package proxy

// Child-process plumbing for BenchmarkConcurrency and TestPeakRSSPerRequest: the
// proxy under load runs in a re-executed copy of this test binary so that its peak
// RSS (VmHWM) is the proxy's alone, not the load generator's or the upstream's.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"sync"
	"testing"
	"time"

	"longhaul/proxy/pool"
	"longhaul/proxy/proxytest"
)

const (
	// benchChildEnv names the proxy a child runs: "bare" or "longhaul".
	benchChildEnv = "LONGHAUL_BENCH_CHILD"
	// benchChildUpstreamEnv is the scripted upstream's base URL.
	benchChildUpstreamEnv = "LONGHAUL_BENCH_UPSTREAM"
	// benchChildProfileEnv, if set (in the parent's environment, which the
	// child inherits), is a directory where the child writes a CPU profile
	// and an allocation profile of its whole life. Diagnostics only.
	benchChildProfileEnv = "LONGHAUL_BENCH_CHILD_PROFILE"
	// benchChildListenPrefix starts the one line a child prints on stdout.
	benchChildListenPrefix = "LISTEN "
)

// TestBenchChild is the proxy process of BenchmarkConcurrency. Without
// LONGHAUL_BENCH_CHILD it returns at once, so a normal `go test` is unaffected.
// With it, it starts the named proxy in front of LONGHAUL_BENCH_UPSTREAM,
// prints "LISTEN http://127.0.0.1:PORT" and serves until its stdin closes.
func TestBenchChild(t *testing.T) {
	kind := os.Getenv(benchChildEnv)
	if kind == "" {
		return
	}
	if dir := os.Getenv(benchChildProfileEnv); dir != "" {
		stopProfiles := startChildProfiles(t, dir, kind)
		defer stopProfiles()
	}
	base, stop, err := startBenchProxy(kind, os.Getenv(benchChildUpstreamEnv))
	if err != nil {
		t.Fatalf("start %s proxy: %v", kind, err)
	}
	fmt.Fprintf(os.Stdout, "%s%s\n", benchChildListenPrefix, base)
	io.Copy(io.Discard, os.Stdin) //nolint:errcheck // EOF or error: either way the parent is done with us
	stop()
}

func startChildProfiles(t *testing.T, dir, kind string) func() {
	prefix := filepath.Join(dir, fmt.Sprintf("%s-%d", kind, os.Getpid()))
	cpu, err := os.Create(prefix + ".cpu.pprof")
	if err != nil {
		t.Fatal(err)
	}
	if err := pprof.StartCPUProfile(cpu); err != nil {
		t.Fatal(err)
	}
	return func() {
		pprof.StopCPUProfile()
		cpu.Close()
		if f, err := os.Create(prefix + ".allocs.pprof"); err == nil {
			pprof.Lookup("allocs").WriteTo(f, 0) //nolint:errcheck // diagnostics only
			f.Close()
		}
	}
}

// startBenchProxy starts a proxy of the given kind on a loopback port in
// front of upstream and returns its base URL and a stop function.
// benchContextLimit keeps every benchmark request below the compaction thresholds.
const benchContextLimit = 10_000_000

func startBenchProxy(kind, upstream string) (base string, stop func(), err error) {
	target, err := url.Parse(upstream)
	if err != nil || target.Host == "" {
		return "", nil, fmt.Errorf("bad upstream URL %q: %v", upstream, err)
	}
	switch kind {
	case "longhaul":
		// A window large enough that the 800 KB request triggers no layer:
		// the benchmark measures what the compaction engine costs a request
		// it leaves alone (it still parses, estimates and screens it).
		// With a client key (the one benchPost sends), so the guard's full check is measured.
		return startBenchLonghaul(Config{Port: 0, ClientKey: "sk-ant-bench-client", Compaction: CompactionConfig{ContextLimits: map[string]int{"claude-*": benchContextLimit}}},
			pool.Account{ID: 1, Label: "bench", Kind: pool.KindAnthropic, BaseURL: upstream, Secret: "sk-ant-bench-upstream-0001", Enabled: true})
	case "longhaul-chat":
		// The same with an OpenAI account, so a Chat Completions client's requests pass
		// through as they came (BenchmarkChatPassthrough800KB).
		return startBenchLonghaul(Config{Port: 0, Compaction: CompactionConfig{ContextLimits: map[string]int{"gpt-*": benchContextLimit}}},
			pool.Account{ID: 1, Label: "bench", Kind: pool.KindOpenAI, BaseURL: upstream + "/v1", Secret: "sk-bench-chat-account", Enabled: true})
	case "longhaul-default":
		// The settings a user starts with (no client key, the built-in windows), for what one
		// request costs as users run it (TestPeakRSSPerRequest).
		return startBenchLonghaul(Config{Port: 0},
			pool.Account{ID: 1, Label: "bench", Kind: pool.KindAnthropic, BaseURL: upstream, Secret: "sk-ant-bench-upstream-0001", Enabled: true})
	case "bare":
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return "", nil, err
		}
		hs := &http.Server{Handler: newBareProxy(target), ErrorLog: log.New(io.Discard, "", 0), ReadHeaderTimeout: 30 * time.Second}
		go hs.Serve(ln) //nolint:errcheck // ErrServerClosed on stop
		return "http://" + ln.Addr().String(), func() { hs.Close() }, nil
	}
	return "", nil, fmt.Errorf("unknown proxy kind %q (want bare, longhaul, longhaul-chat or longhaul-default)", kind)
}

// startBenchLonghaul starts Longhaul's proxy with cfg and the one account acct.
func startBenchLonghaul(cfg Config, acct pool.Account) (base string, stop func(), err error) {
	srv, err := New(cfg, Options{})
	if err != nil {
		return "", nil, err
	}
	srv.SetAccounts([]pool.Account{acct})
	if err := srv.Start(); err != nil {
		return "", nil, err
	}
	return "http://" + srv.Addr(), func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Stop(ctx) //nolint:errcheck // best effort at the end of a benchmark
	}, nil
}

// newBareProxy is the baseline: the standard library's reverse proxy with
// immediate flushing, and a Transport as generous as Longhaul's own.
func newBareProxy(target *url.URL) http.Handler {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64
	return &httputil.ReverseProxy{
		Rewrite:       func(pr *httputil.ProxyRequest) { pr.SetURL(target) },
		FlushInterval: -1,
		Transport:     tr,
		ErrorLog:      log.New(io.Discard, "", 0),
	}
}

// benchChild is a running child proxy.
type benchChild struct {
	kind   string
	base   string // http://127.0.0.1:PORT
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *syncBuffer
}

// startBenchChild re-executes the test binary as TestBenchChild.
func startBenchChild(tb testing.TB, kind, upstream string) *benchChild {
	tb.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestBenchChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), benchChildEnv+"="+kind, benchChildUpstreamEnv+"="+upstream)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	first := &firstLineWriter{line: make(chan string, 1)}
	stderr := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = first, stderr
	if err := cmd.Start(); err != nil {
		tb.Fatalf("start child %s: %v", kind, err)
	}
	c := &benchChild{kind: kind, cmd: cmd, stdin: stdin, stderr: stderr}
	select {
	case line := <-first.line:
		base, ok := strings.CutPrefix(line, benchChildListenPrefix)
		if !ok {
			c.stop(tb)
			tb.Fatalf("child %s did not start: %q\nstderr: %s", kind, line, stderr.String())
		}
		c.base = base
	case <-time.After(20 * time.Second):
		c.stop(tb)
		tb.Fatalf("child %s printed no address within 20s; stderr: %s", kind, stderr.String())
	}
	return c
}

// memMB returns the child's peak (VmHWM) and current (VmRSS) resident set in MiB.
func (c *benchChild) memMB() (peak, current float64, err error) {
	return proxytest.ProcMemMB(c.cmd.Process.Pid)
}

// stop closes the child's stdin (its signal to exit) and waits for it; a
// child that does not exit within 10s is killed (it is our own process).
func (c *benchChild) stop(tb testing.TB) {
	tb.Helper()
	c.stdin.Close()
	done := make(chan error, 1)
	go func() { done <- c.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			tb.Errorf("child %s exited: %v\nstderr: %s", c.kind, err, c.stderr.String())
		}
	case <-time.After(10 * time.Second):
		c.cmd.Process.Kill() //nolint:errcheck // already exiting or gone
		<-done
		tb.Errorf("child %s did not exit within 10s; killed", c.kind)
	}
}

// firstLineWriter hands the first line written to it to line and discards
// the rest (e.g. the test framework's trailing PASS).
type firstLineWriter struct {
	buf  []byte
	sent bool
	line chan string
}

func (w *firstLineWriter) Write(p []byte) (int, error) {
	if w.sent {
		return len(p), nil
	}
	w.buf = append(w.buf, p...)
	if i := bytes.IndexByte(w.buf, '\n'); i >= 0 {
		w.line <- string(w.buf[:i])
		w.sent, w.buf = true, nil
	}
	return len(p), nil
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.b.Len() > 64<<10 { // keep only the start: enough to explain a failure
		return len(p), nil
	}
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
