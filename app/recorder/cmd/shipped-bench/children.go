package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"time"

	"longhaul/app/recorder"
	"longhaul/proxy"
	"longhaul/proxy/pool"
	"longhaul/store"
)

// benchContextLimit keeps every benchmark request below the compaction thresholds, as the
// proxy-only suite does (proxy/benchchild_test.go): the figures measure what Longhaul costs
// a request it forwards unchanged, which is what most requests of a session are.
const benchContextLimit = 10_000_000

// upstreamKey is the key the targets send upstream; the scripted upstream accepts any.
const upstreamKey = "sk-ant-bench-upstream-0001"

// listenPrefix starts the one line a child prints on stdout.
const listenPrefix = "LISTEN "

// serveChild runs one of the in-process targets in this process until stdin closes:
// "bare" (httputil.ReverseProxy), "recorder-off" (Longhaul's proxy without an observer) or
// "recorder-inproc" (store → recorder → proxy wired as main.go does, for profiles).
func serveChild(kind, upstream, dataDir, profileDir string) error {
	target, err := url.Parse(upstream)
	if err != nil || target.Host == "" {
		return fmt.Errorf("bad upstream URL %q: %v", upstream, err)
	}
	if profileDir != "" {
		stop, err := startProfiles(profileDir, kind)
		if err != nil {
			return err
		}
		defer stop()
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var base string
	var stop func()
	switch kind {
	case "bare":
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConnsPerHost = 64
		hs := &http.Server{Handler: &httputil.ReverseProxy{
			Rewrite:       func(pr *httputil.ProxyRequest) { pr.SetURL(target) },
			FlushInterval: -1,
			Transport:     tr,
			ErrorLog:      log.New(io.Discard, "", 0),
		}, ErrorLog: log.New(io.Discard, "", 0), ReadHeaderTimeout: 30 * time.Second}
		go hs.Serve(ln) //nolint:errcheck // ErrServerClosed on stop
		base, stop = "http://"+ln.Addr().String(), func() { hs.Close() }
	case "recorder-off", "recorder-inproc":
		cfg := proxy.Config{Compaction: proxy.CompactionConfig{ContextLimits: map[string]int{"claude-*": benchContextLimit}}}
		opts := proxy.Options{}
		var rec *recorder.Recorder
		if kind == "recorder-inproc" {
			st, err := store.Open(ctx, filepath.Join(dataDir, "longhaul.db"))
			if err != nil {
				return err
			}
			defer st.Close() //nolint:errcheck // the benchmark's own temp database
			h := store.DefaultSettings().History
			rec = recorder.New(st, recorder.Options{Logger: slog.New(slog.DiscardHandler)})
			rec.Configure(h)
			cfg.CaptureBodies, cfg.MaxCaptureBytes = h.StoreBodies, h.MaxBodyBytes
			opts.Observer = rec
			done := make(chan struct{})
			go func() { rec.Run(ctx); close(done) }()
			defer func() { cancel(); <-done; rec.Flush(context.Background()) }() //nolint:errcheck // end of a benchmark
		}
		srv, err := proxy.New(cfg, opts)
		if err != nil {
			return err
		}
		srv.SetAccounts([]pool.Account{{ID: 1, Label: "bench", Kind: "anthropic", BaseURL: upstream, Secret: upstreamKey, Enabled: true}})
		if err := srv.Start(); err != nil {
			return err
		}
		base = "http://" + srv.Addr()
		stop = func() {
			sctx, c := context.WithTimeout(context.Background(), 5*time.Second)
			defer c()
			srv.Stop(sctx) //nolint:errcheck // end of a benchmark
		}
	default:
		return fmt.Errorf("unknown child %q", kind)
	}
	fmt.Printf("%s%s\n", listenPrefix, base)
	// Each "heap" line asks for a heap profile now (the parent sends it at the load's peak);
	// EOF says the parent is done with us.
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		if in.Text() == "heap" && profileDir != "" {
			writeProfile(filepath.Join(profileDir, kind+".heap.pprof"), "heap")
		}
	}
	stop()
	return nil
}

func writeProfile(path, name string) {
	f, err := os.Create(path)
	if err != nil {
		return
	}
	defer f.Close()
	pprof.Lookup(name).WriteTo(f, 0) //nolint:errcheck // diagnostics only
}

func startProfiles(dir, kind string) (func(), error) {
	prefix := filepath.Join(dir, kind)
	cpu, err := os.Create(prefix + ".cpu.pprof")
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(cpu); err != nil {
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		cpu.Close()
		writeProfile(prefix+".allocs.pprof", "allocs")
	}, nil
}

// process is a running target in its own process.
type process struct {
	name  string
	base  string
	cmd   *exec.Cmd
	stdin io.WriteCloser // closing it asks a child of this binary to exit
}

// startChild re-executes this binary as one of serveChild's targets.
func startChild(kind, upstream, dataDir, profileDir string) (*process, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, "-serve", kind, "-upstream", upstream, "-data-dir", dataDir, "-profile", profileDir)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", kind, err)
	}
	p := &process{name: kind, cmd: cmd, stdin: stdin}
	line, err := bufio.NewReader(out).ReadString('\n')
	base, ok := strings.CutPrefix(strings.TrimSpace(line), listenPrefix)
	if err != nil || !ok {
		p.stop()
		return nil, fmt.Errorf("child %s did not start: %q %v", kind, line, err)
	}
	go io.Copy(io.Discard, out) //nolint:errcheck // drain until exit
	p.base = base
	return p, nil
}

// startShipped runs the real product: `longhaul --headless` on a fresh data directory with
// default settings (history on, bodies stored) except one account for the scripted upstream
// and the context limit above, set through the product's own CLI.
func startShipped(bin, upstream, dataDir string) (*process, error) {
	for _, args := range [][]string{
		{"account", "add", "--data-dir", dataDir, "--base-url", upstream, "--key", upstreamKey, "--label", "bench"},
		{"settings", "set", "--data-dir", dataDir, "proxy.context_limits", fmt.Sprintf(`{"claude-*": %d}`, benchContextLimit)},
	} {
		if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("longhaul %s: %v: %s", strings.Join(args[:2], " "), err, out)
		}
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "--headless", "--data-dir", dataDir, "--port", fmt.Sprint(port), "--ui-addr", "127.0.0.1:0")
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start longhaul: %w", err)
	}
	p := &process{name: "shipped", base: fmt.Sprintf("http://127.0.0.1:%d", port), cmd: cmd}
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(p.base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p, nil
			}
		}
		if time.Now().After(deadline) {
			p.stop()
			return nil, errors.New("longhaul --headless did not answer /healthz within 30 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// stop ends the process: children of this binary by closing stdin, longhaul by SIGINT (its
// graceful shutdown); either is killed after 30 s.
func (p *process) stop() {
	if p.stdin != nil {
		p.stdin.Close()
	} else {
		p.cmd.Process.Signal(os.Interrupt) //nolint:errcheck // already gone is fine
	}
	done := make(chan struct{})
	go func() { p.cmd.Wait(); close(done) }() //nolint:errcheck // exit status is not a figure
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		p.cmd.Process.Kill() //nolint:errcheck // our own child
		<-done
	}
}

func (p *process) pid() int { return p.cmd.Process.Pid }

// askHeapProfile asks a child of this binary to write a heap profile now.
func (p *process) askHeapProfile() {
	if p.stdin != nil {
		io.WriteString(p.stdin, "heap\n") //nolint:errcheck // diagnostics only
	}
}
