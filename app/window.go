package app

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/godbus/dbus/v5"
)

// Window size defaults and limits.
const (
	defaultWindowWidth  = 1100
	defaultWindowHeight = 760
	minWindowWidth      = 720
	minWindowHeight     = 520
)

// windowGeometry is the window's size and position, remembered across runs
// in window.json in the data directory (a UI detail, not a setting).
type windowGeometry struct {
	X         int  `json:"x"`
	Y         int  `json:"y"`
	Width     int  `json:"width"`
	Height    int  `json:"height"`
	Maximised bool `json:"maximised,omitempty"`
}

const windowFile = "window.json"

// loadWindowGeometry returns the saved geometry, or false when there is none
// (or it is unusable).
func loadWindowGeometry(dataDir string) (windowGeometry, bool) {
	var g windowGeometry
	b, err := os.ReadFile(filepath.Join(dataDir, windowFile))
	if err != nil || json.Unmarshal(b, &g) != nil {
		return windowGeometry{}, false
	}
	if g.Width < minWindowWidth || g.Height < minWindowHeight || g.Width > 16384 || g.Height > 16384 {
		return windowGeometry{}, false
	}
	return g, true
}

// saveWindowGeometry writes the geometry atomically (temp file, rename).
func saveWindowGeometry(dataDir string, g windowGeometry) error {
	if dataDir == "" || g.Width <= 0 || g.Height <= 0 {
		return nil
	}
	b, err := json.Marshal(g)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dataDir, ".window-*.json")
	if err != nil {
		return fmt.Errorf("save window geometry: %w", err)
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()           //nolint:errcheck // the write error is the one to report
		os.Remove(tmp.Name()) //nolint:errcheck // best effort
		return fmt.Errorf("save window geometry: %w", err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name()) //nolint:errcheck // best effort
		return fmt.Errorf("save window geometry: %w", err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(dataDir, windowFile)); err != nil {
		os.Remove(tmp.Name()) //nolint:errcheck // best effort
		return fmt.Errorf("save window geometry: %w", err)
	}
	return nil
}

// onScreen reports whether enough of the window (a 100×50 corner) lies on a
// screen of the given size, so a window saved on a monitor since unplugged
// is not restored out of reach.
func (g windowGeometry) onScreen(screenW, screenH int) bool {
	return g.X >= -g.Width+100 && g.X <= screenW-100 && g.Y >= 0 && g.Y < screenH-50
}

// instanceID names the single-instance lock: one running window per data
// directory (a second launch on the same data focuses the first; another
// profile, e.g. a test's, runs alongside).
func instanceID(dataDir string) string {
	if abs, err := filepath.Abs(dataDir); err == nil {
		dataDir = abs
	}
	sum := sha256.Sum256([]byte(dataDir))
	return "longhaul-" + hex.EncodeToString(sum[:8])
}

// FocusRunningInstance asks the window already running on dataDir to show
// itself and reports whether one did, so a second launch exits before opening
// the store or binding the proxy's port. It speaks the message Wails'
// SingleInstanceLock listens for on Linux (the first instance's
// OnSecondInstanceLaunch runs); elsewhere it returns false and the lock in
// wails.Run does the same a little later. A run started by Restart first
// waits for the process it replaces to exit.
func FocusRunningInstance(dataDir string) bool {
	WaitForPredecessor()
	if ok, _ := CanShowWindow(); !ok || runtime.GOOS != "linux" {
		return false
	}
	id := "wails_app_" + strings.NewReplacer("-", "_", ".", "_").Replace(instanceID(dataDir))
	name, path := "org."+id+".SingleInstance", dbus.ObjectPath("/org/"+id+"/SingleInstance")
	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		return false
	}
	defer conn.Close() //nolint:errcheck // a private connection
	var owned bool
	if err := conn.BusObject().Call("org.freedesktop.DBus.NameHasOwner", 0, name).Store(&owned); err != nil || !owned {
		return false
	}
	wd, err := os.Getwd()
	if err != nil {
		wd = ""
	}
	msg, err := json.Marshal(struct {
		Args             []string
		WorkingDirectory string
	}{os.Args[1:], wd})
	if err != nil {
		return false
	}
	return conn.Object(name, path).Call(name+".SendMessage", 0, string(msg)).Err == nil
}
