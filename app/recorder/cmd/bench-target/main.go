// Command bench-target serves one of shipped-bench's yardsticks in front of an upstream, as a
// program of its own like the product it is compared with (docs/performance.md, sixth pass):
//
//   - bare: httputil.ReverseProxy (FlushInterval -1), what a proxy costs at the least;
//   - recorder-off: Longhaul's proxy without an observer (what the proxy suite measures);
//   - recorder-inproc: store → recorder → proxy wired as main.go does, with CPU, heap (on
//     SIGUSR1) and allocation profiles written to -profile.
//
// It listens on 127.0.0.1:-port and serves until SIGINT or SIGTERM.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"syscall"
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

func main() {
	kind := flag.String("kind", "", "bare, recorder-off or recorder-inproc")
	upstream := flag.String("upstream", "", "the upstream's base URL")
	port := flag.Int("port", 0, "the port to listen on (127.0.0.1)")
	dataDir := flag.String("data-dir", "", "recorder-inproc's data directory")
	profileDir := flag.String("profile", "", "recorder-inproc's profile directory")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := serve(ctx, *kind, *upstream, *port, *dataDir, *profileDir); err != nil {
		fmt.Fprintln(os.Stderr, "bench-target:", err)
		os.Exit(1)
	}
}

func serve(ctx context.Context, kind, upstream string, port int, dataDir, profileDir string) error {
	target, err := url.Parse(upstream)
	if err != nil || target.Host == "" {
		return fmt.Errorf("bad upstream URL %q: %v", upstream, err)
	}
	switch kind {
	case "bare":
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			return err
		}
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConnsPerHost = 64
		// Errors go to stderr, which shipped-bench shows when a target fails a phase.
		errLog := log.New(os.Stderr, "bare: ", log.LstdFlags)
		rp := &httputil.ReverseProxy{
			Rewrite:       func(pr *httputil.ProxyRequest) { pr.SetURL(target) },
			FlushInterval: -1,
			Transport:     tr,
			ErrorLog:      errLog,
		}
		// Full duplex: the request body streams upstream while the reply comes back. By
		// default net/http's HTTP/1 server closes a request's body once the handler starts
		// its reply, and the transport reads the body once more after its last byte (to check
		// its length): when the upstream answered first, that read failed, the transport closed
		// the upstream connection and the reply was cut ("use of closed network connection";
		// one stream in several `make bench` runs). Longhaul reads a body whole before it
		// forwards it, so it never races so.
		hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if err := http.NewResponseController(w).EnableFullDuplex(); err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			rp.ServeHTTP(w, r)
		}), ErrorLog: errLog, ReadHeaderTimeout: 30 * time.Second}
		go hs.Serve(ln) //nolint:errcheck // ErrServerClosed on stop
		<-ctx.Done()
		return hs.Close()
	case "recorder-off", "recorder-inproc":
		return serveLonghaul(ctx, kind == "recorder-inproc", upstream, port, dataDir, profileDir)
	}
	return fmt.Errorf("unknown kind %q (want bare, recorder-off or recorder-inproc)", kind)
}

// serveLonghaul serves Longhaul's proxy, with the history recorder when recorded.
func serveLonghaul(ctx context.Context, recorded bool, upstream string, port int, dataDir, profileDir string) error {
	cfg := proxy.Config{Port: port, Compaction: proxy.CompactionConfig{ContextLimits: map[string]int{"claude-*": benchContextLimit}}}
	opts := proxy.Options{}
	if recorded {
		if dataDir == "" || profileDir == "" {
			return errors.New("recorder-inproc needs -data-dir and -profile")
		}
		stopProfiles, err := startProfiles(profileDir)
		if err != nil {
			return err
		}
		defer stopProfiles()
		st, err := store.Open(ctx, filepath.Join(dataDir, "longhaul.db"))
		if err != nil {
			return err
		}
		defer st.Close() //nolint:errcheck // the benchmark's own temp database
		h := store.DefaultSettings().History
		rec := recorder.New(st, recorder.Options{Logger: slog.New(slog.DiscardHandler)})
		rec.Configure(h)
		cfg.CaptureBodies, cfg.MaxCaptureBytes = h.StoreBodies, h.MaxBodyBytes
		opts.Observer = rec
		runCtx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { rec.Run(runCtx); close(done) }()
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
	<-ctx.Done()
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return srv.Stop(sctx)
}

// startProfiles starts the CPU profile and writes a heap profile on each SIGUSR1 (shipped-bench
// sends it at the peak of the 64 streams); the returned func stops the CPU profile and writes
// the allocation profile.
func startProfiles(dir string) (func(), error) {
	cpu, err := os.Create(filepath.Join(dir, "recorder-inproc.cpu.pprof"))
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(cpu); err != nil {
		return nil, err
	}
	heap := make(chan os.Signal, 1)
	signal.Notify(heap, syscall.SIGUSR1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range heap {
			writeProfile(filepath.Join(dir, "recorder-inproc.heap.pprof"), "heap")
		}
	}()
	return func() {
		signal.Stop(heap)
		close(heap)
		<-done
		pprof.StopCPUProfile()
		cpu.Close()
		writeProfile(filepath.Join(dir, "recorder-inproc.allocs.pprof"), "allocs")
	}, nil
}

func writeProfile(path, name string) {
	f, err := os.Create(path)
	if err != nil {
		return
	}
	defer f.Close()
	pprof.Lookup(name).WriteTo(f, 0) //nolint:errcheck // diagnostics only
}
