package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWindowGeometryRoundTrip(t *testing.T) {
	dir := t.TempDir()
	if _, ok := loadWindowGeometry(dir); ok {
		t.Fatal("a fresh data directory has a saved geometry")
	}
	want := windowGeometry{X: 40, Y: 30, Width: 1200, Height: 800}
	if err := saveWindowGeometry(dir, want); err != nil {
		t.Fatal(err)
	}
	got, ok := loadWindowGeometry(dir)
	if !ok || got != want {
		t.Errorf("loadWindowGeometry = %+v, %t; want %+v", got, ok, want)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != windowFile {
		t.Errorf("data directory holds %d entries; want only %s (no temp files)", len(entries), windowFile)
	}
}

func TestWindowGeometryRejectsUnusable(t *testing.T) {
	for name, content := range map[string]string{
		"not JSON":  "{",
		"too small": `{"x":0,"y":0,"width":100,"height":80}`,
		"too large": `{"x":0,"y":0,"width":100000,"height":800}`,
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, windowFile), []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			if g, ok := loadWindowGeometry(dir); ok {
				t.Errorf("loadWindowGeometry(%s) = %+v, true; want nothing", content, g)
			}
		})
	}
}

func TestWindowOnScreen(t *testing.T) {
	for _, tc := range []struct {
		g    windowGeometry
		want bool
	}{
		{windowGeometry{X: 100, Y: 100, Width: 1100, Height: 760}, true},
		{windowGeometry{X: -1000, Y: 100, Width: 1100, Height: 760}, true}, // 100 px still on screen
		{windowGeometry{X: -1050, Y: 100, Width: 1100, Height: 760}, false},
		{windowGeometry{X: 1900, Y: 100, Width: 1100, Height: 760}, false}, // the monitor to the right is gone
		{windowGeometry{X: 100, Y: -20, Width: 1100, Height: 760}, false},  // title bar out of reach
		{windowGeometry{X: 100, Y: 1060, Width: 1100, Height: 760}, false},
	} {
		if got := tc.g.onScreen(1920, 1080); got != tc.want {
			t.Errorf("%+v.onScreen(1920, 1080) = %t; want %t", tc.g, got, tc.want)
		}
	}
}

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
