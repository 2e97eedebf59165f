// Package traytest plays a desktop's tray host on a private DBus session bus,
// so a tray can be tested end to end: it owns org.kde.StatusNotifierWatcher,
// takes the StatusNotifierItem registrations, reads the item's menu over
// com.canonical.dbusmenu and clicks its entries, as a panel would.
package traytest

import (
	"bufio"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"
)

// StartBus starts a private session bus (dbus-daemon --session) for the
// test's lifetime and returns its address for DBUS_SESSION_BUS_ADDRESS. A
// test that needs a bus fails without dbus-daemon rather than skipping:
// `make test` installs it (.ci/deps.sh), and a skipped tray test would hide
// that the tray went untested.
func StartBus(tb testing.TB) string {
	tb.Helper()
	daemon, err := exec.LookPath("dbus-daemon")
	if err != nil {
		tb.Fatalf("the tray tests need dbus-daemon (Debian: apt-get install dbus; `make deps-test` installs it): %v", err)
	}
	sock := filepath.Join(tb.TempDir(), "bus")
	cmd := exec.Command(daemon, "--session", "--nofork", "--nopidfile", "--print-address=1", "--address=unix:path="+sock)
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		tb.Fatalf("start dbus-daemon: %v", err)
	}
	tb.Cleanup(func() {
		cmd.Process.Kill() //nolint:errcheck // it may have exited
		cmd.Wait()         //nolint:errcheck // killed
	})
	lines := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(out).ReadString('\n') //nolint:errcheck // an empty line is the failure
		lines <- strings.TrimSpace(line)
	}()
	select {
	case addr := <-lines:
		if addr == "" {
			tb.Fatalf("dbus-daemon printed no address: %s", stderr.String())
		}
		return addr
	case <-time.After(10 * time.Second):
		tb.Fatalf("dbus-daemon did not start: %s", stderr.String())
	}
	return ""
}

// Host is the tray host: the StatusNotifierWatcher on the bus.
type Host struct {
	conn  *dbus.Conn
	mu    sync.Mutex
	items chan Item
}

// Item is a registered tray icon: its bus name and object path.
type Item struct {
	Service string
	Path    dbus.ObjectPath
}

// watcher is the exported org.kde.StatusNotifierWatcher.
type watcher struct{ h *Host }

// RegisterStatusNotifierItem is called by a tray icon on start. service is
// an object path (as fyne.io/systray and libappindicator send) or a bus name.
func (w watcher) RegisterStatusNotifierItem(sender dbus.Sender, service string) *dbus.Error {
	it := Item{Service: string(sender), Path: "/StatusNotifierItem"}
	if strings.HasPrefix(service, "/") {
		it.Path = dbus.ObjectPath(service)
	} else if service != "" {
		it.Service = service
	}
	select {
	case w.h.items <- it:
	default:
	}
	return nil
}

// RegisterStatusNotifierHost is part of the interface; there is only us.
func (w watcher) RegisterStatusNotifierHost(sender dbus.Sender, service string) *dbus.Error {
	return nil
}

// TB is the part of testing.TB that NewHost needs (a program can provide it too).
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
	Cleanup(func())
}

// NewHost connects to the bus at addr and owns the watcher name.
func NewHost(tb TB, addr string) *Host {
	tb.Helper()
	conn, err := dbus.Connect(addr)
	if err != nil {
		tb.Fatalf("connect to the test bus: %v", err)
	}
	tb.Cleanup(func() { conn.Close() }) //nolint:errcheck // end of test
	h := &Host{conn: conn, items: make(chan Item, 8)}
	if err := conn.Export(watcher{h}, "/StatusNotifierWatcher", "org.kde.StatusNotifierWatcher"); err != nil {
		tb.Fatalf("export the watcher: %v", err)
	}
	reply, err := conn.RequestName("org.kde.StatusNotifierWatcher", dbus.NameFlagDoNotQueue)
	if err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		tb.Fatalf("own org.kde.StatusNotifierWatcher: reply %v, %v", reply, err)
	}
	return h
}

// WaitItem waits for a tray icon to register, skipping registrations of
// processes that have gone since.
func (h *Host) WaitItem(timeout time.Duration) (Item, error) {
	deadline := time.After(timeout)
	for {
		select {
		case it := <-h.items:
			var alive bool
			err := h.conn.BusObject().Call("org.freedesktop.DBus.NameHasOwner", 0, it.Service).Store(&alive)
			if err != nil || alive {
				return it, err
			}
		case <-deadline:
			return Item{}, fmt.Errorf("no StatusNotifierItem registered within %v", timeout)
		}
	}
}

// MenuItem is one entry of a dbusmenu, with the properties a panel draws.
type MenuItem struct {
	ID          int32
	Label       string
	Type        string // "separator" or ""
	Enabled     bool
	Visible     bool
	ToggleType  string // "checkmark", "radio" or ""
	ToggleState int32  // 1 checked, 0 not, -1 unknown
	Children    []MenuItem
}

// menuPath reads the item's Menu property.
func (h *Host) menuPath(it Item) (dbus.ObjectPath, error) {
	v, err := h.conn.Object(it.Service, it.Path).GetProperty("org.kde.StatusNotifierItem.Menu")
	if err != nil {
		return "", fmt.Errorf("read the item's Menu property: %w", err)
	}
	p, ok := v.Value().(dbus.ObjectPath)
	if !ok {
		return "", fmt.Errorf("Menu property is %T", v.Value())
	}
	return p, nil
}

// Pixmap is one size of an item's icon: Width×Height pixels, row by row,
// each A, R, G, B (StatusNotifierItem's IconPixmap, ARGB32 in network byte
// order).
type Pixmap struct {
	Width, Height int32
	ARGB          []byte
}

// At is the pixel at (x, y) as A, R, G, B; nil outside the pixmap.
func (p Pixmap) At(x, y int) []byte {
	i := (y*int(p.Width) + x) * 4
	if x < 0 || y < 0 || x >= int(p.Width) || y >= int(p.Height) || i+4 > len(p.ARGB) {
		return nil
	}
	return p.ARGB[i : i+4]
}

// Icon reads the item's icon (its IconPixmap property), as a panel draws it.
func (h *Host) Icon(it Item) ([]Pixmap, error) {
	v, err := h.conn.Object(it.Service, it.Path).GetProperty("org.kde.StatusNotifierItem.IconPixmap")
	if err != nil {
		return nil, fmt.Errorf("read the item's IconPixmap property: %w", err)
	}
	var icon []Pixmap
	if err := dbus.Store([]any{v.Value()}, &icon); err != nil {
		return nil, fmt.Errorf("IconPixmap is %s: %w", v.Signature(), err)
	}
	return icon, nil
}

// Menu reads the item's whole menu (GetLayout of the root, all levels).
func (h *Host) Menu(it Item) ([]MenuItem, error) {
	path, err := h.menuPath(it)
	if err != nil {
		return nil, err
	}
	var (
		revision uint32
		layout   struct {
			ID       int32
			Props    map[string]dbus.Variant
			Children []dbus.Variant
		}
	)
	call := h.conn.Object(it.Service, path).Call("com.canonical.dbusmenu.GetLayout", 0, int32(0), int32(-1), []string{})
	if err := call.Store(&revision, &layout); err != nil {
		return nil, fmt.Errorf("GetLayout: %w", err)
	}
	return parseChildren(layout.Children)
}

func parseChildren(children []dbus.Variant) ([]MenuItem, error) {
	var out []MenuItem
	for _, c := range children {
		fields, ok := c.Value().([]any)
		if !ok || len(fields) != 3 {
			return nil, fmt.Errorf("menu entry is %T, want (ia{sv}av)", c.Value())
		}
		id, _ := fields[0].(int32)                      //nolint:errcheck // checked by the type below
		props, _ := fields[1].(map[string]dbus.Variant) //nolint:errcheck // nil when absent
		kids, _ := fields[2].([]dbus.Variant)           //nolint:errcheck // nil when absent
		m := MenuItem{ID: id, Enabled: true, Visible: true, ToggleState: -1}
		for k, v := range props {
			switch k {
			case "label":
				m.Label, _ = v.Value().(string)
			case "type":
				m.Type, _ = v.Value().(string)
			case "enabled":
				m.Enabled, _ = v.Value().(bool)
			case "visible":
				m.Visible, _ = v.Value().(bool)
			case "toggle-type":
				m.ToggleType, _ = v.Value().(string)
			case "toggle-state":
				switch s := v.Value().(type) {
				case int32:
					m.ToggleState = s
				case int64:
					m.ToggleState = int32(s)
				case int:
					m.ToggleState = int32(s)
				}
			}
		}
		var err error
		if m.Children, err = parseChildren(kids); err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// Find returns the first visible entry whose label starts with prefix.
func Find(menu []MenuItem, prefix string) (MenuItem, bool) {
	for _, m := range menu {
		if m.Type != "separator" && m.Visible && strings.HasPrefix(m.Label, prefix) {
			return m, true
		}
	}
	return MenuItem{}, false
}

// Click sends the "clicked" event for entry id, as a panel does.
//
// A click that quits the app (Quit, Restart) may close the item's bus
// connection before the reply to the click goes out: the bus then answers
// NoReply ("recipient disconnected without replying"). The click was
// delivered all the same, so that counts as done; whether the app really
// quit is for the caller to check.
func (h *Host) Click(it Item, id int32) error {
	path, err := h.menuPath(it)
	if err != nil {
		return err
	}
	call := h.conn.Object(it.Service, path).Call("com.canonical.dbusmenu.Event", 0,
		id, "clicked", dbus.MakeVariant(""), uint32(time.Now().Unix()))
	var dbusErr dbus.Error
	if errors.As(call.Err, &dbusErr) && dbusErr.Name == "org.freedesktop.DBus.Error.NoReply" {
		return nil
	}
	if call.Err != nil {
		return fmt.Errorf("click %d: %w", id, call.Err)
	}
	return nil
}

// WaitMenu polls the menu until ok accepts it.
func (h *Host) WaitMenu(it Item, timeout time.Duration, ok func([]MenuItem) bool) ([]MenuItem, error) {
	deadline := time.Now().Add(timeout)
	for {
		menu, err := h.Menu(it)
		if err == nil && ok(menu) {
			return menu, nil
		}
		if time.Now().After(deadline) {
			if err == nil {
				err = errors.New("the menu never reached the expected state")
			}
			return menu, err
		}
		time.Sleep(50 * time.Millisecond)
	}
}
