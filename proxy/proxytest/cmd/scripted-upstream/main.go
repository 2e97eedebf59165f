// Command scripted-upstream serves proxytest's scripted Anthropic API on a
// loopback address, for trying Longhaul without a real key:
//
//	go run ./proxy/proxytest/cmd/scripted-upstream -addr 127.0.0.1:9099
//	longhaul account add --base-url http://127.0.0.1:9099 --key sk-test-local-0000
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"longhaul/proxy/proxytest"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:9099", "loopback address to listen on")
	gap := flag.Duration("gap", 50*time.Millisecond, "pause between streamed events")
	flag.Parse()
	if err := run(*addr, *gap); err != nil {
		fmt.Fprintln(os.Stderr, "scripted-upstream:", err)
		os.Exit(1)
	}
}

func run(addr string, gap time.Duration) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("%s is not a loopback address", addr)
	}
	up := proxytest.NewUpstream()
	defer up.Close()
	up.SetRecordBodies(false)
	msg := &proxytest.Message{Content: []proxytest.Block{
		proxytest.Thinking("The user said hello; a short greeting back is enough.", "EqScriptedSignature"),
		proxytest.Text("Hello from the scripted upstream! This reply streams event by event."),
	}, Usage: proxytest.Usage{InputTokens: 12, OutputTokens: 24}}
	up.SetDefault(proxytest.Reply{Message: msg, EventGap: gap})

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv := &http.Server{Addr: addr, Handler: up, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
	fmt.Printf("scripted Anthropic upstream on http://%s\n", addr)
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
