// Package autostart keeps the "start when I log in" entry of the platform in
// step with the app.autostart setting: an XDG autostart file on Linux, a
// launch agent on macOS, the Run key on Windows.
package autostart

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// name is the login entry's name: longhaul.desktop in the XDG autostart
// folder on Linux, the "Longhaul" value of the Run key on Windows, a launch
// agent on macOS.
const name = "longhaul"

// loginItem is the platform's "start when I log in" entry (autostart_*.go).
type loginItem interface {
	Enable() error
	Disable() error
	IsEnabled() bool
}

// Entry keeps the login entry in step with the app.autostart setting. The
// setting is applied when it changes, and an enabled entry is rewritten at
// start so it follows the binary if it moved. A fresh "off" at start is left
// alone: another data directory (a test run, a second profile) must not remove
// the entry the user's main profile made.
type Entry struct {
	item loginItem
	mu   sync.Mutex
	seen bool // a setting has been applied
	on   bool // the last value applied
}

// command is what the login entry runs: this binary, hidden in the
// tray, on the same data directory.
func command(exe, dataDir string) []string {
	cmd := []string{exe, "--minimized"}
	if dataDir != "" {
		if abs, err := filepath.Abs(dataDir); err == nil {
			dataDir = abs
		}
		cmd = append(cmd, "--data-dir", dataDir)
	}
	return cmd
}

// New returns the login entry that starts this binary on dataDir. It changes
// nothing until Apply.
func New(dataDir string) *Entry {
	exe, err := os.Executable()
	if err != nil {
		exe = "longhaul"
	} else if resolved, err := filepath.EvalSymlinks(exe); err == nil {
		exe = resolved
	}
	return &Entry{item: newLoginItem(command(exe, dataDir))}
}

// Apply brings the login entry in line with the setting (on: write it, for
// this binary, --minimized, on this data directory).
func (s *Entry) Apply(on bool) error {
	if s == nil || s.item == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	changed := !s.seen || s.on != on
	first := !s.seen
	s.seen, s.on = true, on
	switch {
	case on && changed:
		if err := s.item.Enable(); err != nil {
			return fmt.Errorf("enable autostart: %w", err)
		}
	case !on && changed && !first:
		if err := s.item.Disable(); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("disable autostart: %w", err)
		}
	}
	return nil
}
