//go:build linux

package keychain_test

import (
	"errors"
	"testing"

	"longhaul/store/keychain"
)

// Without any session bus address, the keychain says no at once instead of letting the DBus
// library autolaunch a bus (and a keyring daemon) that would outlive the process.
func TestOSKeychainNeverAutolaunchesABus(t *testing.T) {
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "")
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	k := keychain.OS{Service: "longhaul-test"}
	if err := k.Set("account-1", "sk-no-bus-at-all-0123456789"); !errors.Is(err, keychain.ErrNoSessionBus) {
		t.Fatalf("Set() with no session bus = %v; want ErrNoSessionBus", err)
	}
}
