//go:build linux

package tray

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"longhaul/app/internal/wait"
	"longhaul/app/tray/internal/traytest"
)

// The tray runs in a child process (this test binary again): fyne.io/systray
// keeps package state and runs once per process, and the child must see the
// test's private session bus from its start.
const childEnv = "LONGHAUL_TRAY_CHILD"

// The child runs from init rather than a test function: the testing package
// fails a test on any race report, and the child must tolerate one inside
// fyne.io/systray (see checkRaces). init, not TestMain, so the package stays
// free to have a TestMain of its own.
func init() {
	if os.Getenv(childEnv) != "" {
		os.Exit(childMain())
	}
}

// childAddress is where the child's stand-in proxy says it listens.
const childAddress = "127.0.0.1:8045"

// childApp stands in for the app behind the tray: a proxy that is on or off,
// a language, an installed update. changed is what Options.Changes reports.
type childApp struct {
	say     func(string)
	changed chan struct{}
	drawn   sync.Once

	mu sync.Mutex
	st State
}

func (c *childApp) state(context.Context) State {
	c.drawn.Do(func() { c.say("drawn") })
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.st
}

func (c *childApp) change(f func(*State)) {
	c.mu.Lock()
	f(&c.st)
	c.mu.Unlock()
	select {
	case c.changed <- struct{}{}:
	default:
	}
}

func (c *childApp) changes(ctx context.Context, changed func()) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.changed:
			changed()
		}
	}
}

// childMain is the child: the tray in front of a stand-in app. It reports
// on stdout ("ready", "drawn", "proxy on"/"proxy off" from the toggle,
// "restart", "open window", "quit", "stopped") and takes the rest of the
// app's changes on stdin ("proxy off"/"proxy on": the window's toggle;
// "update ready"; "lang zh-CN"/"lang en": a settings change; "pressure
// RATIO NEXT AT": a session's latest request, "pressure none": no session
// active; "stop").
func childMain() int {
	say := func(s string) { fmt.Fprintln(os.Stdout, "tray-child:", s) }
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	app := &childApp{say: say, changed: make(chan struct{}, 1),
		st: State{Running: true, Address: childAddress, Language: "en"}}
	go func() {
		in := bufio.NewScanner(os.Stdin)
		for in.Scan() {
			switch cmd := in.Text(); cmd {
			case "proxy off", "proxy on":
				app.change(func(st *State) { st.Running = cmd == "proxy on" })
			case "update ready": // as an installed update leaves it
				app.change(func(st *State) { st.Update = "9.9.9" })
			case "lang zh-CN", "lang en":
				app.change(func(st *State) { st.Language = strings.TrimPrefix(cmd, "lang ") })
			case "stop":
				cancel()
			default:
				if p, ok := parsePressure(cmd); ok {
					app.change(func(st *State) { st.Pressure = p })
				}
			}
		}
		cancel()
	}()
	say("ready")
	err := Run(ctx, Options{
		State:   app.state,
		Changes: app.changes,
		SetProxy: func(_ context.Context, on bool) error {
			say(map[bool]string{true: "proxy on", false: "proxy off"}[on])
			app.change(func(st *State) { st.Running = on })
			return nil
		},
		Restart:    func() error { say("restart"); return nil },
		ShowWindow: func() { say("open window") },
		Quit:       func() { say("quit"); cancel() },
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "tray child: Run:", err)
		return 1
	}
	say("stopped")
	return 0
}

// parsePressure reads the child's "pressure RATIO NEXT AT" and "pressure none".
func parsePressure(cmd string) (Pressure, bool) {
	if cmd == "pressure none" {
		return Pressure{}, true
	}
	p := Pressure{Session: "6d0b8f3e-1111-4222-8333-944455556666"}
	_, err := fmt.Sscanf(cmd, "pressure %g %d %g", &p.Ratio, &p.NextLayer, &p.NextThreshold)
	return p, err == nil
}

type trayChild struct {
	cmd      *exec.Cmd
	stdin    io.WriteCloser
	lines    chan string
	raceLogs string
}

func startTrayChild(t *testing.T, busAddr string) *trayChild {
	t.Helper()
	raceLogs := t.TempDir()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), childEnv+"=1", "DBUS_SESSION_BUS_ADDRESS="+busAddr,
		// Under -race, reports go to files the parent sorts (see checkRaces).
		"GORACE=exitcode=0 log_path="+filepath.Join(raceLogs, "race"))
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &trayChild{cmd: cmd, stdin: stdin, lines: make(chan string, 64), raceLogs: raceLogs}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			if s, ok := strings.CutPrefix(line, "tray-child: "); ok {
				c.lines <- s
			} else {
				t.Logf("child: %s", line)
			}
		}
		close(c.lines)
	}()
	t.Cleanup(func() {
		stdin.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(wait.Timeout):
			cmd.Process.Kill() //nolint:errcheck // stuck child
			<-done
		}
	})
	c.expect(t, "ready")
	c.expect(t, "drawn")
	return c
}

func (c *trayChild) expect(t *testing.T, want string) {
	t.Helper()
	got, ok := wait.Receive(t, fmt.Sprintf("the child saying %q", want), c.lines)
	if !ok {
		t.Fatalf("the child exited; want %q", want)
	}
	if got != want {
		t.Fatalf("child said %q; want %q", got, want)
	}
}

func (c *trayChild) send(t *testing.T, cmd string) {
	t.Helper()
	if _, err := fmt.Fprintln(c.stdin, cmd); err != nil {
		t.Fatal(err)
	}
}

// wait ends the child and checks it exited cleanly.
func (c *trayChild) wait(t *testing.T) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- c.cmd.Wait() }()
	if err, _ := wait.Receive(t, "the child's exit", done); err != nil {
		t.Fatalf("child exited with %v", err)
	}
	c.checkRaces(t)
}

// checkRaces fails the test on any data race the child's race detector
// reported that involves our code: one where some racing access happens in
// our code, not deeper in a library it called. Two races of the tray's
// libraries are theirs, harmless, and not ours to fix here:
//   - fyne.io/systray v1.12.2: GetLayout reads the menu revision under its
//     menu lock while the refresh it schedules after the first GetLayout
//     writes it under another lock (systray_menu_unix.go:91 and :423). A host
//     reading the menu always triggers it.
//   - godbus/dbus v5.2.2's prop package: Get hands out the property's stored
//     value and the reply is encoded after the lock is released, while a set
//     stores the next value into the same memory (prop/prop.go:240 and
//     :283). A host reading IconPixmap while the icon changes (systray.SetIcon,
//     the alert icon) triggers it; at worst that reply mixes two icons.
func (c *trayChild) checkRaces(t *testing.T) {
	t.Helper()
	logs, err := filepath.Glob(filepath.Join(c.raceLogs, "race*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range logs {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, report := range strings.Split(string(b), "WARNING: DATA RACE")[1:] {
			if where, ok := libraryRace(report); ok {
				t.Logf("tolerated a data race inside %s", where)
			} else {
				t.Errorf("data race in the tray child:\n%s", report)
			}
		}
	}
}

// libraryRace reports whether both accesses of a race report happen inside
// fyne.io/systray or godbus/dbus (the first frame of each that is not the
// runtime's or reflect's is theirs), and where.
func libraryRace(report string) (string, bool) {
	var libs []string
	section := false // in an access's stack, before its first frame of note
	for line := range strings.SplitSeq(report, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasSuffix(line, ":") && strings.Contains(line, " at 0x"): // "Read at 0x… by goroutine 7:"
			section = true
		case !section || line == "" || strings.HasPrefix(line, "/"):
		case strings.HasPrefix(line, "runtime.") || strings.HasPrefix(line, "reflect.") || strings.HasPrefix(line, "sync/atomic."):
		default:
			section = false
			lib := ""
			for _, prefix := range []string{"fyne.io/systray", "github.com/godbus/dbus"} {
				if strings.HasPrefix(line, prefix) {
					lib = prefix
				}
			}
			if lib == "" {
				return "", false
			}
			libs = append(libs, lib)
		}
	}
	return strings.Join(libs, " and "), len(libs) == 2
}

func toggleIs(on bool) func([]traytest.MenuItem) bool {
	want := int32(0)
	if on {
		want = 1
	}
	return func(menu []traytest.MenuItem) bool {
		m, ok := traytest.Find(menu, labelProxy)
		status := ""
		if len(menu) > 0 {
			status = menu[0].Label
		}
		return ok && m.ToggleState == want && strings.HasPrefix(status, "Listening on ") == on
	}
}

func pressureLineIs(line string) func([]traytest.MenuItem) bool {
	return func(menu []traytest.MenuItem) bool { return len(menu) > 1 && menu[1].Label == line }
}

// amber is the alert dot's colour as IconPixmap carries it (A, R, G, B).
var amber = []byte{alertDot.A, alertDot.R, alertDot.G, alertDot.B}

// readIcon reads the tray icon's one pixmap.
func readIcon(t *testing.T, host *traytest.Host, item traytest.Item) traytest.Pixmap {
	t.Helper()
	icon, err := host.Icon(item)
	if err != nil {
		t.Fatal(err)
	}
	if len(icon) != 1 || icon[0].Width == 0 {
		t.Fatalf("tray icon = %d pixmaps (first %+v); want one", len(icon), icon)
	}
	return icon[0]
}

// dotPixel is the pixel at the centre of the alert dot.
func dotPixel(p traytest.Pixmap) []byte {
	x, y := dotCentre(int(p.Width))
	return p.At(x, y)
}

// waitMenu waits until the menu satisfies ok, and returns it.
func waitMenu(t *testing.T, host *traytest.Host, item traytest.Item, what string, ok func([]traytest.MenuItem) bool) []traytest.MenuItem {
	t.Helper()
	menu, err := host.WaitMenu(item, wait.Timeout, ok)
	if err != nil {
		t.Fatalf("%s: menu %+v: %v", what, menu, err)
	}
	return menu
}

// TestTrayOverDBus plays the tray host on a private session bus: the menu has
// a status line, the proxy toggle, "Open window" and "Quit"; the toggle turns
// the proxy off and on; a toggle elsewhere (the window), an installed update
// and the language show in the menu; every entry does what it says.
func TestTrayOverDBus(t *testing.T) {
	bus := traytest.StartBus(t)
	host := traytest.NewHost(t, bus)
	child := startTrayChild(t, bus)
	item, err := host.WaitItem(wait.Timeout)
	if err != nil {
		t.Fatal(err)
	}
	menu := waitMenu(t, host, item, "at start", toggleIs(true))
	var labels []string
	for _, m := range menu {
		if m.Type != "separator" && m.Visible {
			labels = append(labels, m.Label)
		}
	}
	wantStatus := "Listening on " + childAddress + " · 0 requests today · 0 active sessions"
	if want := []string{wantStatus, "No active session", labelProxy, labelOpen, labelQuit}; strings.Join(labels, "|") != strings.Join(want, "|") {
		t.Fatalf("menu labels = %q; want %q", labels, want)
	}
	if menu[0].Enabled || menu[1].Enabled {
		t.Errorf("the status or pressure line is clickable; want both disabled (information only)")
	}
	toggle, _ := traytest.Find(menu, labelProxy)
	if toggle.ToggleType != "checkmark" || toggle.ToggleState != 1 {
		t.Errorf("toggle = %+v; want a checked checkmark", toggle)
	}

	// Off and on again from the tray.
	click := func(id int32) {
		t.Helper()
		if err := host.Click(item, id); err != nil {
			t.Fatal(err)
		}
	}
	click(toggle.ID)
	child.expect(t, "proxy off")
	waitMenu(t, host, item, "after turning off", toggleIs(false))
	click(toggle.ID)
	child.expect(t, "proxy on")
	waitMenu(t, host, item, "after turning on", toggleIs(true))
	// The window's toggle: the tray follows.
	child.send(t, "proxy off")
	waitMenu(t, host, item, "after the window turned the proxy off", toggleIs(false))
	child.send(t, "proxy on")
	waitMenu(t, host, item, "after the window turned the proxy on", toggleIs(true))

	// An installed update: the restart entry appears and restarts.
	child.send(t, "update ready")
	menu = waitMenu(t, host, item, "after an update", func(menu []traytest.MenuItem) bool {
		_, ok := traytest.Find(menu, labelRestart+" (version 9.9.9)")
		return ok
	})
	restart, _ := traytest.Find(menu, labelRestart)
	click(restart.ID)
	child.expect(t, "restart")

	// app.language: the tray speaks Chinese, then English again.
	child.send(t, "lang zh-CN")
	waitMenu(t, host, item, "after app.language=zh-CN", func(menu []traytest.MenuItem) bool {
		_, proxy := traytest.Find(menu, "启用代理")
		_, open := traytest.Find(menu, "打开窗口")
		_, quit := traytest.Find(menu, "退出")
		return proxy && open && quit && strings.HasPrefix(menu[0].Label, "监听 127.0.0.1:") && menu[1].Label == "没有活动会话"
	})
	child.send(t, "lang en")
	menu = waitMenu(t, host, item, "after app.language=en", func(menu []traytest.MenuItem) bool {
		_, ok := traytest.Find(menu, labelOpen)
		return ok && strings.HasPrefix(menu[0].Label, "Listening on ")
	})

	// The busiest session's pressure: the line follows it as it rises, and
	// says so when no session is active any more; from Layer 2 on (62%, past
	// the Layer-2 threshold) the icon has the alert dot.
	normal := readIcon(t, host, item)
	if px := dotPixel(normal); bytes.Equal(px, amber) {
		t.Fatalf("the normal icon is amber at the dot's centre")
	}
	for _, step := range []struct {
		cmd, line string
		alert     bool
	}{
		{"pressure 0.42 2 0.55", "Context 42% · next: Layer 2 at 55%", false},
		{"pressure 0.62 3 0.7", "Context 62% · next: Layer 3 at 70%", true},
		{"pressure 0.74 0 0", "Context 74% · every layer reached", true},
		{"pressure 0.5 2 0.55", "Context 50% · next: Layer 2 at 55%", false},
		{"pressure 0.7 0 0", "Context 70% · every layer reached", true},
		{"pressure none", "No active session", false},
	} {
		child.send(t, step.cmd)
		waitMenu(t, host, item, "after "+step.cmd, pressureLineIs(step.line))
		var icon traytest.Pixmap
		wait.Until(t, fmt.Sprintf("the icon after %q with alert=%v", step.cmd, step.alert), func() bool {
			icon = readIcon(t, host, item)
			if !step.alert {
				return icon.Width == normal.Width && bytes.Equal(icon.ARGB, normal.ARGB)
			}
			return bytes.Equal(dotPixel(icon), amber)
		})
		if step.alert && (icon.Width != normal.Width || icon.Height != normal.Height || !bytes.Equal(icon.At(4, 4), normal.At(4, 4))) {
			t.Errorf("alert icon %dx%d, top-left %x; want the normal icon's %dx%d, %x, with a dot",
				icon.Width, icon.Height, icon.At(4, 4), normal.Width, normal.Height, normal.At(4, 4))
		}
	}

	open, _ := traytest.Find(menu, labelOpen)
	click(open.ID)
	child.expect(t, "open window")
	quit, _ := traytest.Find(menu, labelQuit)
	click(quit.ID)
	child.expect(t, "quit")
	child.expect(t, "stopped")
	child.wait(t)
}

// libraryRace tells the libraries' races from ours by the first frame of note
// of each access.
func TestLibraryRace(t *testing.T) {
	const (
		godbusRead = `Previous read at 0x00c00008d620 by goroutine 67:
  reflect.Value.Int()
      /usr/local/go/src/reflect/value.go:1461 +0x6dd
  github.com/godbus/dbus/v5.(*encoder).encode()
      /root/go/pkg/mod/github.com/godbus/dbus/v5@v5.2.2/encoder.go:114 +0x6b1
`
		fyneWrite = `Write at 0x00c00008d620 by main goroutine:
  fyne.io/systray.argbForImage()
      /root/go/pkg/mod/fyne.io/systray@v1.12.2/systray_unix.go:441 +0x157
  longhaul/app/tray.(*systrayMenu).setPressure()
      /work/app/tray/systray.go:151 +0x16d
`
		ourWrite = `Write at 0x00c00008d620 by main goroutine:
  runtime.slicecopy()
      /usr/local/go/src/runtime/slice.go:325 +0x0
  longhaul/app/tray.(*systrayMenu).setPressure()
      /work/app/tray/systray.go:151 +0x16d
  fyne.io/systray.SetIcon()
      /root/go/pkg/mod/fyne.io/systray@v1.12.2/systray_unix.go:62 +0x2f6
`
		created = `Goroutine 67 (running) created at:
  longhaul/app/tray.Run()
      /work/app/tray/systray.go:57 +0xc5a
`
	)
	for _, tc := range []struct {
		name, report string
		want         bool
	}{
		{"both accesses in the libraries, called from our code", "\n" + fyneWrite + "\n" + godbusRead + "\n" + created, true},
		{"one access in our code", "\n" + ourWrite + "\n" + godbusRead + "\n" + created, false},
		{"a report without both accesses", "\n" + godbusRead, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if where, got := libraryRace(tc.report); got != tc.want {
				t.Errorf("libraryRace = %q, %v; want %v", where, got, tc.want)
			}
		})
	}
}

// TestTrayWithoutSessionBus: no bus to talk to must not crash the app; the
// menu is drawn where nobody sees it, and the tray stops when asked.
func TestTrayWithoutSessionBus(t *testing.T) {
	child := startTrayChild(t, "unix:path="+filepath.Join(t.TempDir(), "no-bus"))
	child.send(t, "stop")
	child.expect(t, "stopped")
	child.wait(t)
}
