package desktop

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/godbus/dbus/v5"
)

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
// wails.Run does the same a little later. A run started by a restart
// needs update.WaitForPredecessor first: its predecessor still holds the lock.
func FocusRunningInstance(dataDir string) bool {
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
