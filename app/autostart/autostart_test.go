//go:build linux

package autostart

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// go-autostart reads XDG_CONFIG_HOME and HOME once, at program start, so each
// step runs in a child process (this test binary again) with the test's
// folders in its environment.
const childEnv = "LONGHAUL_AUTOSTART_CHILD"

// TestAutostartChildProcess is the child: it applies each value listed in
// LONGHAUL_AUTOSTART_CHILD ("on,off") in turn, as the app does when it
// starts and when the app.autostart setting changes.
func TestAutostartChildProcess(t *testing.T) {
	steps := os.Getenv(childEnv)
	if steps == "" {
		t.Skip("runs as the child of the autostart tests")
	}
	entry := New(os.Getenv("LONGHAUL_AUTOSTART_DATA"))
	for _, step := range strings.Split(steps, ",") {
		if err := entry.Apply(step == "on"); err != nil {
			t.Fatal(err)
		}
	}
}

type autostartEnv struct {
	config, home, data string
}

func (e autostartEnv) entry() string { return filepath.Join(e.config, "autostart", "longhaul.desktop") }

func (e autostartEnv) run(t *testing.T, steps string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestAutostartChildProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"="+steps, "LONGHAUL_AUTOSTART_DATA="+e.data,
		"XDG_CONFIG_HOME="+e.config, "HOME="+e.home)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child %q: %v\n%s", steps, err, out)
	}
}

func newAutostartEnv(t *testing.T) autostartEnv {
	root := t.TempDir()
	e := autostartEnv{config: filepath.Join(root, "config"), home: filepath.Join(root, "home"), data: filepath.Join(root, "data")}
	for _, d := range []string{e.config, e.home, e.data} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

func TestAutostartFollowsTheSetting(t *testing.T) {
	e := newAutostartEnv(t)

	e.run(t, "on")
	b, err := os.ReadFile(e.entry())
	if err != nil {
		t.Fatalf("enabling autostart wrote no entry: %v", err)
	}
	entry := string(b)
	var execLine string
	for _, line := range strings.Split(entry, "\n") {
		if v, ok := strings.CutPrefix(line, "Exec="); ok {
			execLine = v
		}
	}
	exe, err := filepath.EvalSymlinks(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	var quoted []string
	for _, arg := range []string{exe, "--minimized", "--data-dir", e.data} {
		quoted = append(quoted, strconv.Quote(arg))
	}
	if want := strings.Join(quoted, " "); execLine != want {
		t.Errorf("Exec=%s; want %s (this binary, --minimized, the same data directory)", execLine, want)
	}
	for _, want := range []string{"[Desktop Entry]", "Type=Application", "Name=Longhaul"} {
		if !strings.Contains(entry, want) {
			t.Errorf("entry lacks %q:\n%s", want, entry)
		}
	}

	// The setting is on at start (the entry is rewritten), then turned off.
	e.run(t, "on,off")
	if _, err := os.Stat(e.entry()); !os.IsNotExist(err) {
		t.Errorf("disabling autostart left the entry (stat: %v)", err)
	}

	// Turning it off when there is no entry is fine; on again writes the same entry.
	e.run(t, "on,off,off,on")
	if again, err := os.ReadFile(e.entry()); err != nil || string(again) != entry {
		t.Errorf("entry after on,off,on = %q, %v; want %q", again, err, entry)
	}
}

// An app starting with the setting off leaves an entry alone: it may belong
// to another profile (another data directory) of the same user.
func TestAutostartOffAtStartKeepsEntry(t *testing.T) {
	e := newAutostartEnv(t)
	if err := os.MkdirAll(filepath.Dir(e.entry()), 0o755); err != nil {
		t.Fatal(err)
	}
	const other = "[Desktop Entry]\nType=Application\nName=Longhaul\nExec=/opt/longhaul --minimized\n"
	if err := os.WriteFile(e.entry(), []byte(other), 0o644); err != nil {
		t.Fatal(err)
	}
	e.run(t, "off")
	if b, err := os.ReadFile(e.entry()); err != nil || string(b) != other {
		t.Errorf("entry after a start with autostart off = %q, %v; want it untouched", b, err)
	}
}

// Without XDG_CONFIG_HOME the entry goes under $HOME/.config.
func TestAutostartUnderHome(t *testing.T) {
	e := newAutostartEnv(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestAutostartChildProcess$", "-test.count=1")
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "XDG_CONFIG_HOME=") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, childEnv+"=on", "LONGHAUL_AUTOSTART_DATA="+e.data, "HOME="+e.home)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(e.home, ".config", "autostart", "longhaul.desktop")); err != nil {
		t.Errorf("no entry under $HOME/.config/autostart: %v", err)
	}
}
