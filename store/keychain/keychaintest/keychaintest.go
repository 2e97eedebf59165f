// Package keychaintest runs a private, real Secret Service for tests: a session dbus-daemon and
// gnome-keyring-daemon (unlocked with a password given on stdin) in a temporary directory, so
// keychain code is tested against what a Linux desktop really runs, never the user's keyring.
package keychaintest

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// SecretService starts a private session bus with gnome-keyring's Secret Service on it and
// points DBUS_SESSION_BUS_ADDRESS at it for the rest of the test (t.Setenv: restored after,
// and the test cannot be parallel). Both daemons are stopped at cleanup. It fails the test
// when dbus-daemon or gnome-keyring-daemon is missing (.ci/deps.sh installs them).
func SecretService(t testing.TB) {
	t.Helper()
	for _, bin := range []string{"dbus-daemon", "gnome-keyring-daemon"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Fatalf("%s is needed for the keychain tests (Debian: apt-get install dbus gnome-keyring; .ci/deps.sh test): %v", bin, err)
		}
	}
	dir := t.TempDir()
	for _, d := range []string{"home", "data", "config", "cache", "run"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	// The daemons get a home of their own: the keyring file lands in the temp dir.
	env := append(os.Environ(),
		"HOME="+filepath.Join(dir, "home"), "XDG_DATA_HOME="+filepath.Join(dir, "data"),
		"XDG_CONFIG_HOME="+filepath.Join(dir, "config"), "XDG_CACHE_HOME="+filepath.Join(dir, "cache"),
		"XDG_RUNTIME_DIR="+filepath.Join(dir, "run"))

	bus := exec.Command("dbus-daemon", "--session", "--nofork", "--nopidfile", "--print-address=1",
		"--address=unix:path="+filepath.Join(dir, "bus"))
	bus.Env = env
	out, err := bus.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := bus.Start(); err != nil {
		t.Fatalf("start dbus-daemon: %v", err)
	}
	t.Cleanup(func() { stop(t, bus) })
	addr, err := firstLine(out, 30*time.Second)
	if err != nil {
		t.Fatalf("dbus-daemon did not print its address: %v", err)
	}
	env = append(env, "DBUS_SESSION_BUS_ADDRESS="+addr)

	keyring := exec.Command("gnome-keyring-daemon", "--foreground", "--unlock", "--components=secrets")
	keyring.Env = env
	keyring.Stdin = strings.NewReader("longhaul-test-password") // --unlock reads it from stdin
	if err := keyring.Start(); err != nil {
		t.Fatalf("start gnome-keyring-daemon: %v", err)
	}
	t.Cleanup(func() { stop(t, keyring) })
	waitForName(t, env, "org.freedesktop.secrets")
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", addr)
}

// NoSecretService points DBUS_SESSION_BUS_ADDRESS at a socket nobody listens on, as on a
// headless server, for the rest of the test.
func NoSecretService(t testing.TB) {
	t.Helper()
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path="+filepath.Join(t.TempDir(), "no-bus"))
}

func firstLine(r interface{ Read([]byte) (int, error) }, timeout time.Duration) (string, error) {
	line := make(chan string, 1)
	fail := make(chan error, 1)
	go func() {
		s, err := bufio.NewReader(r).ReadString('\n')
		if err != nil {
			fail <- err
			return
		}
		line <- strings.TrimSpace(s)
	}()
	select {
	case s := <-line:
		return s, nil
	case err := <-fail:
		return "", err
	case <-time.After(timeout):
		return "", errors.New("timed out")
	}
}

// waitForName polls the bus (dbus-send, from the dbus package) until name has an owner:
// gnome-keyring claims the Secret Service name a moment after it starts.
func waitForName(t testing.TB, env []string, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		cmd := exec.CommandContext(ctx, "dbus-send", "--session", "--print-reply", "--dest=org.freedesktop.DBus",
			"/org/freedesktop/DBus", "org.freedesktop.DBus.NameHasOwner", "string:"+name)
		cmd.Env = env
		out, err := cmd.Output()
		if err == nil && strings.Contains(string(out), "boolean true") {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s did not appear on the private bus within 30 s (last: %v %s)", name, err, out)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func stop(t testing.TB, cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	if err := cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		t.Errorf("stop %s: %v", cmd.Path, err)
	}
	cmd.Wait() //nolint:errcheck // killed on purpose
}
