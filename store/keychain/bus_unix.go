//go:build (dragonfly && cgo) || (freebsd && cgo) || linux || netbsd || openbsd

package keychain

import (
	"os"
	"path/filepath"
)

// checkBus reports whether a session bus is known the way godbus finds one without
// autolaunching: the environment variable, or the bus socket in XDG_RUNTIME_DIR.
func checkBus() error {
	if os.Getenv("DBUS_SESSION_BUS_ADDRESS") != "" {
		return nil
	}
	if dir := os.Getenv("XDG_RUNTIME_DIR"); dir != "" {
		if _, err := os.Stat(filepath.Join(dir, "bus")); err == nil {
			return nil
		}
	}
	return ErrNoSessionBus
}
