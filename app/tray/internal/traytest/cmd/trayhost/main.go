// Command trayhost plays the desktop's tray host on the session bus for the
// desktop smoke test (.ci/desktop-smoke.sh): it owns
// org.kde.StatusNotifierWatcher until stdin closes, and answers one line per
// command read from stdin:
//
//	wait             wait for a tray icon to register: "ok SERVICE"
//	menu             the visible entries' labels: "ok LABEL|LABEL|..." (checked toggles end in " [x]")
//	click PREFIX     click the first entry whose label starts with PREFIX: "ok"
//
// Failures answer "error MESSAGE".
package main

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"time"

	"longhaul/app/tray/internal/traytest"
)

func main() {
	addr := os.Getenv("DBUS_SESSION_BUS_ADDRESS")
	if addr == "" {
		fmt.Fprintln(os.Stderr, "trayhost: DBUS_SESSION_BUS_ADDRESS is not set")
		os.Exit(2)
	}
	// traytest's helpers take a testing.TB for setup failures.
	tb := &fatalTB{}
	host := traytest.NewHost(tb, addr)
	var (
		item  traytest.Item
		found bool
	)
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		cmd, arg, _ := strings.Cut(strings.TrimSpace(in.Text()), " ")
		reply := func() string {
			if cmd != "wait" && !found {
				return "error no tray icon yet (send wait first)"
			}
			switch cmd {
			case "wait":
				it, err := host.WaitItem(30 * time.Second)
				if err != nil {
					return "error " + err.Error()
				}
				item, found = it, true
				return "ok " + it.Service
			case "menu":
				menu, err := host.Menu(item)
				if err != nil {
					return "error " + err.Error()
				}
				var labels []string
				for _, m := range menu {
					if m.Type == "separator" || !m.Visible {
						continue
					}
					if m.ToggleState == 1 {
						m.Label += " [x]"
					}
					labels = append(labels, m.Label)
				}
				return "ok " + strings.Join(labels, "|")
			case "click":
				menu, err := host.Menu(item)
				if err != nil {
					return "error " + err.Error()
				}
				m, ok := traytest.Find(menu, arg)
				if !ok {
					return fmt.Sprintf("error no entry starts with %q", arg)
				}
				if err := host.Click(item, m.ID); err != nil {
					return "error " + err.Error()
				}
				return "ok"
			}
			return fmt.Sprintf("error unknown command %q", cmd)
		}()
		fmt.Println(reply)
	}
	tb.cleanup()
}

// fatalTB is traytest.TB for a program: setup failures end it.
type fatalTB struct {
	cleanups []func()
}

func (t *fatalTB) Helper() {}
func (t *fatalTB) Fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "trayhost: "+format+"\n", args...)
	os.Exit(1)
}
func (t *fatalTB) Cleanup(f func()) { t.cleanups = append(t.cleanups, f) }
func (t *fatalTB) cleanup() {
	for i := len(t.cleanups) - 1; i >= 0; i-- {
		t.cleanups[i]()
	}
}
