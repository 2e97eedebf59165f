//go:build darwin

package app

import "context"

// RunTray returns at once on macOS: fyne.io/systray must start on the main
// thread there, which Wails owns. The window keeps the proxy toggle.
func (a *App) RunTray(ctx context.Context, act TrayActions) error { return errTrayUnsupported }

// TrayHostPresent is false on macOS: there is no tray to close to (the dock
// icon and a second launch bring the window back).
func TrayHostPresent() bool { return false }
