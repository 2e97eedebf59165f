package desktop

import (
	"strings"
	"testing"
)

func TestInstanceIDPerDataDir(t *testing.T) {
	a, b := instanceID("/home/u/.config/Longhaul"), instanceID("/tmp/other")
	if a == b {
		t.Errorf("two data directories share the instance id %q", a)
	}
	if a != instanceID("/home/u/.config/Longhaul/") {
		t.Errorf("instance id depends on a trailing slash")
	}
	// Wails turns it into a DBus name element: letters, digits, underscores after the dashes go.
	for _, r := range strings.ReplaceAll(a, "-", "_") {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
			t.Errorf("instance id %q has %q, not valid in a DBus name", a, r)
		}
	}
}
