//go:build windows

package autostart

import (
	"errors"
	"strings"

	"golang.org/x/sys/windows/registry"
)

// go-autostart needs cgo (mingw) on Windows; the Run key of the current user
// does the same without it.
const runKey = `Software\Microsoft\Windows\CurrentVersion\Run`

type runKeyItem struct{ command string }

func newLoginItem(cmd []string) loginItem {
	quoted := make([]string, len(cmd))
	for i, arg := range cmd {
		quoted[i] = `"` + strings.ReplaceAll(arg, `"`, `\"`) + `"`
	}
	return &runKeyItem{command: strings.Join(quoted, " ")}
}

func (r *runKeyItem) Enable() error {
	k, _, err := registry.CreateKey(registry.CURRENT_USER, runKey, registry.SET_VALUE)
	if err != nil {
		return err
	}
	defer k.Close()
	return k.SetStringValue("Longhaul", r.command)
}

func (r *runKeyItem) Disable() error {
	k, err := registry.OpenKey(registry.CURRENT_USER, runKey, registry.SET_VALUE)
	if err != nil {
		return err
	}
	defer k.Close()
	if err := k.DeleteValue("Longhaul"); err != nil && !errors.Is(err, registry.ErrNotExist) {
		return err
	}
	return nil
}

func (r *runKeyItem) IsEnabled() bool {
	k, err := registry.OpenKey(registry.CURRENT_USER, runKey, registry.QUERY_VALUE)
	if err != nil {
		return false
	}
	defer k.Close()
	_, _, err = k.GetStringValue("Longhaul")
	return err == nil
}
