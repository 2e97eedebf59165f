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
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"longhaul/app"
	"longhaul/proxy"
	"longhaul/proxy/compact"
	"longhaul/store"
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

func run(args []string) int {
	if app.GeneratingBindings {
		if err := app.GenerateBindings(); err != nil {
			fmt.Fprintln(os.Stderr, "generate bindings:", err)
			return 1
		}
		return 0
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	fl := flag.NewFlagSet("longhaul", flag.ContinueOnError)
	var (
		headless   = fl.Bool("headless", false, "run the proxy and serve the UI to a browser instead of opening a window")
		dataDir    = fl.String("data-dir", defaultDataDir(), "data directory (env LONGHAUL_DATA_DIR)")
		port       = fl.Int("port", 0, "proxy port for this run, overriding proxy.port")
		uiAddr     = fl.String("ui-addr", "127.0.0.1:8046", "address of the browser UI in headless mode")
		minimized  = fl.Bool("minimized", false, "start with the window hidden (used by autostart)")
		getVersion = fl.Bool("version", false, "print the version and exit")
	)
	if err := fl.Parse(args); err != nil {
		return 2
	}
	if *getVersion {
		fmt.Println("longhaul", version)
		return 0
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	if app.IsCommand(fl.Args()) {
		cli := &app.CLI{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, DataDir: *dataDir, Open: openStore}
		if err := cli.Run(ctx, fl.Args()); err != nil {
			if !errors.Is(err, app.ErrUsage) {
				fmt.Fprintln(os.Stderr, "longhaul:", err)
			}
			return 1
		}
		return 0
	}
	if fl.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "longhaul: unknown command %q (try: account, settings, history, --headless)\n", fl.Arg(0))
		return 2
	}

	if !*headless && app.FocusRunningInstance(*dataDir) {
		return 0 // a window is already running on this data: it shows itself
	}
	assets, err := fs.Sub(frontendDist, "frontend/dist")
	if err != nil {
		log.Error("frontend assets", "err", err)
		return 1
	}
	st, err := openStore(ctx, *dataDir)
	if err != nil {
		log.Error("open data dir", "dir", *dataDir, "err", err)
		return 1
	}
	defer st.Close() //nolint:errcheck // every write has committed by now

	// The proxy tells the app about revoked keys; the app is built after the
	// proxy, so the hook reaches it through this variable.
	var a *app.App
	calibration, err := loadCalibration(ctx, st)
	if err != nil {
		log.Warn("estimator calibration not restored; starting neutral", "err", err)
	}
	// The recorder (history and live monitor) observes every exchange; it needs only the store.
	rec := app.NewRecorder(st, app.RecorderOptions{Logger: log})
	// The UI is also served on the proxy's port under /longhaul/; like the
	// revocation hook, it reaches the app through a variable set below.
	var proxyDoor http.Handler
	srv, err := proxy.New(proxy.Config{}, proxy.Options{Logger: log, Calibrator: calibration, Observer: rec,
		OnAccountRevoked: func(id int64, reason string) { a.AccountRevoked(id, reason) },
		UI:               http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { proxyDoor.ServeHTTP(w, r) })})
	if err != nil {
		log.Error("proxy", "err", err)
		return 1
	}
	a = app.New(app.Deps{Store: st, Proxy: srv, Logger: log, Version: version, DataDir: *dataDir, Overrides: app.Overrides{Port: *port}, Recorder: rec,
		Update: app.UpdateConfig{Repo: updateRepo, APIURL: updateAPI, PublicKey: updateKey}})
	proxyDoor = a.ProxyDoor(assets)
	if err := a.Reload(ctx); err != nil {
		log.Error("load settings", "err", err)
		return 1
	}
	if _, err := a.SetProxyEnabled(ctx, true); err != nil {
		log.Error("start proxy", "err", err)
		if *headless {
			return 1
		}
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

	if !*headless {
		if ok, why := app.CanShowWindow(); ok {
			if err := a.RunDesktop(assets, *minimized); err != nil {
				log.Error("window", "err", err)
				return 1
			}
			return 0
		} else {
			log.Warn("cannot open a window; running headless", "reason", why)
		}
	}
	if err := serveHeadless(ctx, a, assets, *uiAddr, log); err != nil {
		log.Error("headless UI", "err", err)
		return 1
	}
	return 0
}

// serveHeadless serves the UI door until ctx is done (Ctrl-C, SIGTERM).
func serveHeadless(ctx context.Context, a *app.App, assets fs.FS, addr string, log *slog.Logger) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	// Cancelling the base context ends the live-event streams, so Shutdown
	// does not wait on them.
	base, cancelBase := context.WithCancel(context.Background())
	defer cancelBase()
	srv := &http.Server{Handler: a.Door(assets), ReadHeaderTimeout: 10 * time.Second, BaseContext: func(net.Listener) context.Context { return base }}
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

func openStore(ctx context.Context, dataDir string) (*store.Store, error) {
	return store.Open(ctx, filepath.Join(dataDir, "longhaul.db"))
}
