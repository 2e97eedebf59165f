package desktop

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// Window size defaults and limits.
const (
	defaultWidth  = 1100
	defaultHeight = 760
	minWidth      = 720
	minHeight     = 520
)

// geometry is the window's size and position, remembered across runs
// in window.json in the data directory (a UI detail, not a setting).
type geometry struct {
	X         int  `json:"x"`
	Y         int  `json:"y"`
	Width     int  `json:"width"`
	Height    int  `json:"height"`
	Maximised bool `json:"maximised,omitempty"`
}

const windowFile = "window.json"

// readGeometry returns the saved geometry, or false when there is none
// (or it is unusable).
func readGeometry(dataDir string) (geometry, bool) {
	var g geometry
	b, err := os.ReadFile(filepath.Join(dataDir, windowFile))
	if err != nil || json.Unmarshal(b, &g) != nil {
		return geometry{}, false
	}
	if g.Width < minWidth || g.Height < minHeight || g.Width > 16384 || g.Height > 16384 {
		return geometry{}, false
	}
	return g, true
}

// writeGeometry writes the geometry atomically (temp file, rename).
func writeGeometry(dataDir string, g geometry) error {
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
func (g geometry) onScreen(screenW, screenH int) bool {
	return g.X >= -g.Width+100 && g.X <= screenW-100 && g.Y >= 0 && g.Y < screenH-50
}
