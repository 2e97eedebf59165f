package app

import (
	"github.com/wailsapp/wails/v2"
	"github.com/wailsapp/wails/v2/pkg/options"
)

// GeneratingBindings is true when `wails generate module` (build tag
// "bindings") runs this binary only to read the bound facades.
const GeneratingBindings = generatingBindings

// GenerateBindings lets Wails inspect the bound facades (Proxy, Accounts, Settings, History,
// Clients, Updates) without opening a store or starting the proxy.
func GenerateBindings() error {
	var a *App // the facades are only inspected, never called
	return wails.Run(&options.App{Bind: a.Facades(nil).Bindings()})
}
