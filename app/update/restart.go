package update

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// restartAfterEnv tells a restarted Longhaul which process it replaces: it
// waits for that one to exit (releasing the single-instance lock and the
// proxy's port) before it starts.
const restartAfterEnv = "LONGHAUL_RESTART_AFTER_PID"

// ErrNoWindow: restarting needs the window (the only place that offers it).
var ErrNoWindow = errors.New("restart is offered in the desktop window only")

// SetQuit registers how to close the window while it is open (nil once it
// has closed): Restart closes it that way.
func (u *Updater) SetQuit(quit func()) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.quit = quit
}

// Restart closes the window so that FinishRestart starts the binary again
// once it has: the "restart to finish" of an installed update. The usual
// shutdown (the proxy drains, the store closes) happens in between; the new
// process waits for this one to exit.
func (u *Updater) Restart() error {
	u.mu.Lock()
	quit := u.quit
	u.mu.Unlock()
	if quit == nil {
		return ErrNoWindow
	}
	u.restart.Store(true)
	quit()
	return nil
}

// FinishRestart starts the binary again with args (this run's, without
// --minimized), if Restart was asked; call it once the window has closed.
// The new process waits in WaitForPredecessor until this one has exited.
func (u *Updater) FinishRestart(args []string) error {
	if !u.restart.Load() {
		return nil
	}
	exe, err := u.executable()
	if err != nil {
		return fmt.Errorf("restart: %w", err)
	}
	return spawnRestart(exe, args)
}

// restartArgs are this run's arguments for the next one: the same, but shown
// (the user asked for the restart from the window).
func restartArgs(args []string) []string {
	out := make([]string, 0, len(args))
	for _, arg := range args {
		switch strings.TrimLeft(arg, "-") {
		case "minimized", "minimized=true", "minimized=1":
			continue
		}
		out = append(out, arg)
	}
	return out
}

// spawnRestart starts exe with args, to wait for this process to exit.
func spawnRestart(exe string, args []string) error {
	cmd := exec.Command(exe, restartArgs(args)...)
	cmd.Env = append(os.Environ(), restartAfterEnv+"="+strconv.Itoa(os.Getpid()))
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	detach(cmd)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("restart %s: %w", exe, err)
	}
	return cmd.Process.Release()
}

// WaitForPredecessor returns once the process a restart replaces has exited
// (at most a minute); at once when this run is not a restart. Call it before
// taking the single-instance lock or the proxy's port.
func WaitForPredecessor() {
	v := os.Getenv(restartAfterEnv)
	if v == "" {
		return
	}
	os.Unsetenv(restartAfterEnv) //nolint:errcheck // only children would see it
	pid, err := strconv.Atoi(v)
	if err != nil || pid <= 0 || pid == os.Getpid() {
		return
	}
	deadline := time.Now().Add(time.Minute)
	for processAlive(pid) && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
}
