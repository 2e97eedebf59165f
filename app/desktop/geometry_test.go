package desktop

import (
	"os"
	"path/filepath"
	"testing"
)

func TestGeometryRoundTrip(t *testing.T) {
	dir := t.TempDir()
	if _, ok := readGeometry(dir); ok {
		t.Fatal("a fresh data directory has a saved geometry")
	}
	want := geometry{X: 40, Y: 30, Width: 1200, Height: 800}
	if err := writeGeometry(dir, want); err != nil {
		t.Fatal(err)
	}
	got, ok := readGeometry(dir)
	if !ok || got != want {
		t.Errorf("readGeometry = %+v, %t; want %+v", got, ok, want)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != windowFile {
		t.Errorf("data directory holds %d entries; want only %s (no temp files)", len(entries), windowFile)
	}
}

func TestGeometryRejectsUnusable(t *testing.T) {
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
			if g, ok := readGeometry(dir); ok {
				t.Errorf("readGeometry(%s) = %+v, true; want nothing", content, g)
			}
		})
	}
}

func TestWindowOnScreen(t *testing.T) {
	for _, tc := range []struct {
		g    geometry
		want bool
	}{
		{geometry{X: 100, Y: 100, Width: 1100, Height: 760}, true},
		{geometry{X: -1000, Y: 100, Width: 1100, Height: 760}, true}, // 100 px still on screen
		{geometry{X: -1050, Y: 100, Width: 1100, Height: 760}, false},
		{geometry{X: 1900, Y: 100, Width: 1100, Height: 760}, false}, // the monitor to the right is gone
		{geometry{X: 100, Y: -20, Width: 1100, Height: 760}, false},  // title bar out of reach
		{geometry{X: 100, Y: 1060, Width: 1100, Height: 760}, false},
	} {
		if got := tc.g.onScreen(1920, 1080); got != tc.want {
			t.Errorf("%+v.onScreen(1920, 1080) = %t; want %t", tc.g, got, tc.want)
		}
	}
}
