// Command longhaul is a desktop app with an embedded local LLM API proxy that
// keeps long coding-agent sessions alive. This file only wires the parts.
package main

import (
	"context"
	"embed"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sync"
	"syscall"
	"time"

	"longhaul/app"
	"longhaul/app/cli"
	"longhaul/app/desktop"
	"longhaul/app/door"
	"longhaul/app/recorder"
	"longhaul/app/update"
	"longhaul/proxy"
	"longhaul/proxy/compact"
	"longhaul/store"
	"longhaul/store/keychain"
)

//go:embed all:frontend/dist
var frontendDist embed.FS

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// The self-update release source, set at build time (-ldflags "-X main.updateRepo=owner/name");
// empty: updates are off. updateAPI is a GitHub Enterprise API base (empty: github.com);
// updateKey a PEM ECDSA public key that signs checksums.txt (empty: checksums only).
var updateRepo, updateAPI, updateKey string

func main() {
	os.Exit(run(os.Args[1:]))
}

// options are the command line's flags.
type options struct {
	headless  bool
	dataDir   string
	port      int
	uiAddr    string
	minimized bool
	args      []string // what follows the flags: a CLI subcommand, or nothing
}

func run(args []string) int {
	if app.GeneratingBindings {
		if err := app.GenerateBindings(); err != nil {
			fmt.Fprintln(os.Stderr, "generate bindings:", err)
			return 1
		}
		return 0
	}
	o, exit, done := parseFlags(args)
	if done {
		return exit
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if cli.IsCommand(o.args) {
		return runCommand(ctx, o)
	}
	if len(o.args) > 0 {
		fmt.Fprintf(os.Stderr, "longhaul: unknown command %q (try: account, settings, history, replay, --headless)\n", o.args[0])
		return 2
	}
	if !o.headless {
		update.WaitForPredecessor() // after "restart to update": the old process still holds the lock and the port
		if desktop.FocusRunningInstance(o.dataDir) {
			return 0 // a window is already running on this data: it shows itself
		}
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	if err := serve(ctx, o, log); err != nil {
		log.Error(err.Error())
		return 1
	}
	return 0
}

// parseFlags reads the command line; done says to exit at once with exit (-version, a bad flag).
func parseFlags(args []string) (o options, exit int, done bool) {
	fl := flag.NewFlagSet("longhaul", flag.ContinueOnError)
	fl.BoolVar(&o.headless, "headless", false, "run the proxy and serve the UI to a browser instead of opening a window")
	fl.StringVar(&o.dataDir, "data-dir", defaultDataDir(), "data directory (env LONGHAUL_DATA_DIR)")
	fl.IntVar(&o.port, "port", 0, "proxy port for this run, overriding proxy.port")
	fl.StringVar(&o.uiAddr, "ui-addr", "127.0.0.1:8046", "address of the browser UI in headless mode")
	fl.BoolVar(&o.minimized, "minimized", false, "start with the window hidden (used by autostart)")
	getVersion := fl.Bool("version", false, "print the version and exit")
	if err := fl.Parse(args); err != nil {
		return o, 2, true
	}
	if *getVersion {
		fmt.Println("longhaul", version)
		return o, 0, true
	}
	o.args = fl.Args()
	return o, 0, false
}

// runCommand runs a CLI subcommand (app/cli) against the data dir.
func runCommand(ctx context.Context, o options) int {
	// The CLI's output is its answer: the store logs only errors there (`account list` says
	// where keys are kept itself).
	quiet := store.WithLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})))
	open := func(ctx context.Context, dataDir string) (*store.Store, error) { return openStore(ctx, dataDir, quiet) }
	c := &cli.CLI{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, DataDir: o.dataDir, Open: open,
		Version: version, GOOS: runtime.GOOS, GOARCH: runtime.GOARCH}
	if err := c.Run(ctx, o.args); err != nil {
		if !errors.Is(err, cli.ErrUsage) {
			fmt.Fprintln(os.Stderr, "longhaul:", err)
		}
		return 1
	}
	return 0
}

// serve wires the parts top to bottom — store → recorder and revocation sink → proxy → app →
// door — and runs the window, or the headless UI, until the user quits.
func serve(ctx context.Context, o options, log *slog.Logger) error {
	assets, err := fs.Sub(frontendDist, "frontend/dist")
	if err != nil {
		return fmt.Errorf("frontend assets: %w", err)
	}
	st, err := openStore(ctx, o.dataDir)
	if err != nil {
		return fmt.Errorf("open data dir %s: %w", o.dataDir, err)
	}
	defer st.Close() //nolint:errcheck // every write has committed by now
	calibration, err := loadCalibration(ctx, st)
	if err != nil {
		log.Warn("estimator calibration not restored; starting neutral", "err", err)
	}
	// A soft memory limit keeps a burst of large requests (64 streams of 800 KB each hold
	// ~50 MB while in flight) from doubling the heap before the collector runs; the recorder
	// bounds what it holds itself (docs/performance.md). GOMEMLIMIT, when set, wins.
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(memoryLimit)
	}
	// The proxy's two sinks need only the store: the recorder (history and the live feed)
	// observes every exchange; revoked keys wait in their sink for the app to persist them.
	rec := recorder.New(st, recorder.Options{Logger: log})
	revoked := app.NewRevocations()
	srv, err := proxy.New(proxy.Config{}, proxy.Options{Logger: log, Calibrator: calibration, Observer: rec, OnAccountRevoked: revoked.Revoke})
	if err != nil {
		return fmt.Errorf("proxy: %w", err)
	}
	a := app.New(app.Deps{Store: st, Proxy: srv, Logger: log, Version: version, DataDir: o.dataDir,
		Overrides: app.Overrides{Port: o.port}, Recorder: rec, Revocations: revoked,
		Update: update.Config{Repo: updateRepo, APIURL: updateAPI, PublicKey: updateKey}})
	ui := door.New(a, assets, door.Options{Logger: log, Guard: srv.Guard()})
	srv.SetUI(ui.ProxyHandler()) // the UI also rides on the proxy's port under /longhaul/
	if err := a.Reload(ctx); err != nil {
		return fmt.Errorf("load settings: %w", err)
	}
	if _, err := a.SetProxyEnabled(ctx, true); err != nil {
		if o.headless {
			return fmt.Errorf("start proxy: %w", err)
		}
		log.Error("start proxy", "err", err) // the window shows why and offers the toggle
	}
	runCtx, cancelRun := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { a.Run(runCtx) })
	defer func() {
		cancelRun()
		wg.Wait()
		drain, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := a.Shutdown(drain); err != nil {
			log.Warn("proxy drain", "err", err)
		}
	}()

	if !o.headless {
		ok, why := desktop.CanShowWindow()
		if ok {
			if err := a.RunDesktop(assets, o.minimized); err != nil {
				return fmt.Errorf("window: %w", err)
			}
			return nil
		}
		log.Warn("cannot open a window; running headless", "reason", why)
	}
	if err := serveHeadless(ctx, a, ui, o.uiAddr, srv.Config().ClientKey, log); err != nil {
		return fmt.Errorf("headless UI: %w", err)
	}
	return nil
}

// serveHeadless serves the UI's door on its own address until ctx is done (Ctrl-C, SIGTERM).
// An address open to the network needs a client key, as the proxy's bind does.
func serveHeadless(ctx context.Context, a *app.App, ui *door.Door, addr, clientKey string, log *slog.Logger) error {
	if err := proxy.ListenCheck(addr, clientKey); err != nil {
		return fmt.Errorf("--ui-addr: %w", err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	// Cancelling the base context ends the live-event streams, so Shutdown
	// does not wait on them.
	base, cancelBase := context.WithCancel(context.Background())
	defer cancelBase()
	srv := proxy.NewHTTPServer(ui.Handler(proxy.LoopbackAddr(addr)), proxy.Timeouts{}, log)
	srv.BaseContext = func(net.Listener) context.Context { return base }
	st := a.Status()
	fmt.Printf("Longhaul %s\nProxy: %s (running: %t)\nLonghaul UI: http://%s/\nAlso on the proxy's port: %s/longhaul/\n", version, st.BaseURL, st.Running, ln.Addr(), st.BaseURL)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down")
	cancelBase()
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return srv.Shutdown(shutdownCtx)
}

// memoryLimit is the process's soft memory limit (debug.SetMemoryLimit), measured with
// `make bench`: it keeps the peak RSS of 64 concurrent 800 KB streams under 120 MB.
const memoryLimit = 100 << 20

func defaultDataDir() string {
	if d := os.Getenv("LONGHAUL_DATA_DIR"); d != "" {
		return d
	}
	if d, err := os.UserConfigDir(); err == nil {
		return filepath.Join(d, "Longhaul")
	}
	return ".longhaul"
}

// loadCalibration restores what real usage taught the token estimator in
// earlier runs; the app saves it back while running.
func loadCalibration(ctx context.Context, st *store.Store) (*compact.Calibrator, error) {
	cal := compact.NewCalibrator(compact.CalibratorOptions{})
	factors, err := st.CalibrationFactors(ctx)
	if err != nil {
		return cal, err
	}
	cal.Restore(factors)
	return cal, nil
}

func openStore(ctx context.Context, dataDir string, opts ...store.Option) (*store.Store, error) {
	opts = append([]store.Option{store.WithKeychain(keychain.OS{Service: "longhaul"})}, opts...)
	return store.Open(ctx, filepath.Join(dataDir, "longhaul.db"), opts...)
}
