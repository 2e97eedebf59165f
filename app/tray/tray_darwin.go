//go:build darwin

package tray

import "context"

// Run returns at once on macOS: fyne.io/systray must start on the main
// thread there, which Wails owns. The window keeps the proxy toggle.
func Run(ctx context.Context, opts Options) error { return ErrUnsupported }

// HostPresent is false on macOS: there is no tray to close to (the dock
// icon and a second launch bring the window back).
func HostPresent() bool { return false }
