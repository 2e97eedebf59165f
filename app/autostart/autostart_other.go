//go:build !windows

package autostart

import (
	"slices"

	goautostart "github.com/emersion/go-autostart"
)

// On Linux and the BSDs go-autostart writes $XDG_CONFIG_HOME/autostart/longhaul.desktop
// (it reads XDG_CONFIG_HOME and HOME once, at program start); on macOS a launch agent.
func newLoginItem(cmd []string) loginItem { return xdgItem{cmd: cmd} }

type xdgItem struct{ cmd []string }

// entry returns a fresh go-autostart App each time: Enable quotes Exec in
// place, so a reused one would be quoted twice on the next Enable.
func (x xdgItem) entry() *goautostart.App {
	return &goautostart.App{Name: name, DisplayName: "Longhaul", Exec: slices.Clone(x.cmd), Icon: "longhaul"}
}

func (x xdgItem) Enable() error   { return x.entry().Enable() }
func (x xdgItem) Disable() error  { return x.entry().Disable() }
func (x xdgItem) IsEnabled() bool { return x.entry().IsEnabled() }
