package app

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

// errNoWindow: restarting needs the window (the only place that offers it).
var errNoWindow = errors.New("restart is offered in the desktop window only")

// Restart closes the window and starts the binary again once this process
// has exited: the "restart to finish" of an installed update. Shutdown is the
// usual one (the proxy drains, the store closes) before the new process starts.
func (a *App) Restart() error {
	quit := a.updates.quitHook()
	if quit == nil {
		return errNoWindow
	}
	a.updates.restart.Store(true)
	quit()
	return nil
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
// (at most a minute); at once when this run is not a restart.
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
