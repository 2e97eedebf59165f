package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// benchContextLimit keeps every benchmark request below the compaction thresholds, as
// bench-target does for the recorder-off yardstick: the figures measure what Longhaul costs a
// request it forwards unchanged, which is what most requests of a session are.
const benchContextLimit = 10_000_000

// upstreamKey is the key the shipped process sends upstream; the scripted upstream accepts any.
const upstreamKey = "sk-ant-bench-upstream-0001"

// process is a running target in its own process.
type process struct {
	name   string
	base   string
	cmd    *exec.Cmd
	stderr *tailWriter
	exited chan struct{} // closed once the process has exited
}

// startTarget runs one of bench-target's yardsticks (bare, recorder-off, recorder-inproc) as a
// program of its own, started and stopped as the shipped process is: the same code run as a
// child of this harness's own binary answered 30–100 µs faster than as a program of its own
// (docs/performance.md, sixth pass), which flattered the yardstick.
func startTarget(bin, name, kind, upstream, dataDir, profileDir string) (*process, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	return startProcess(name, fmt.Sprintf("http://127.0.0.1:%d", port), false, bin,
		"-kind", kind, "-upstream", upstream, "-port", fmt.Sprint(port), "-data-dir", dataDir, "-profile", profileDir)
}

// startProcess starts a target and waits until it answers HTTP on base (with 200 on /healthz
// when healthy is set: the product's own check; a bare reverse proxy answers whatever the
// upstream does). Every target is started alike: no stdin, stdout discarded, stderr kept for
// the error a failed start reports.
func startProcess(name, base string, healthy bool, bin string, args ...string) (*process, error) {
	cmd := exec.Command(bin, args...)
	p := &process{name: name, base: base, cmd: cmd, stderr: &tailWriter{}}
	cmd.Stdout, cmd.Stderr = io.Discard, p.stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	exited := make(chan struct{})
	p.exited = exited
	go func() { cmd.Wait(); close(exited) }() //nolint:errcheck // the exit is reported below or by stop
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if !healthy || resp.StatusCode == http.StatusOK {
				return p, nil
			}
		}
		select {
		case <-exited:
			return nil, fmt.Errorf("%s exited before answering: %s", name, p.stderr.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			p.stop()
			return nil, fmt.Errorf("%s did not answer within 30 s: %s", name, p.stderr.String())
		}
	}
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
	return startProcess("shipped", fmt.Sprintf("http://127.0.0.1:%d", port), true, bin,
		"--headless", "--data-dir", dataDir, "--port", fmt.Sprint(port), "--ui-addr", "127.0.0.1:0")
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// stop ends the process by SIGINT (the targets' graceful shutdown), killing it after 30 s.
func (p *process) stop() {
	p.cmd.Process.Signal(os.Interrupt) //nolint:errcheck // already gone is fine
	select {
	case <-p.exited:
	case <-time.After(30 * time.Second):
		p.cmd.Process.Kill() //nolint:errcheck // our own child
		<-p.exited
	}
}

func (p *process) pid() int { return p.cmd.Process.Pid }

// askHeapProfile asks the recorder-inproc target to write a heap profile now.
func (p *process) askHeapProfile() {
	if p.name == "recorder-inproc" {
		p.cmd.Process.Signal(syscall.SIGUSR1) //nolint:errcheck // diagnostics only
	}
}

// tailWriter keeps the last 4 KiB written to it: a target's stderr, for the error that says
// why it did not start.
type tailWriter struct {
	mu  sync.Mutex
	buf []byte
}

func (w *tailWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, b...)
	if over := len(w.buf) - 4<<10; over > 0 {
		w.buf = w.buf[over:]
	}
	return len(b), nil
}

func (w *tailWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.TrimSpace(string(w.buf))
}
