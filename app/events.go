package app

import "longhaul/app/recorder"

// Event names, mirrored in frontend/src/events.ts.
const (
	// EventProxyStatus carries ProxyStatus whenever the proxy's state changes.
	EventProxyStatus = "proxy:status"
	// EventUpdateStatus carries update.Status whenever self-update's state changes.
	EventUpdateStatus = "update:status"
	// EventHistoryExchanges carries batches of exchanges (their latest state), published by
	// the recorder about every 250 ms.
	EventHistoryExchanges = recorder.EventExchanges
)

// Events is the one live feed the UI's doors subscribe to (the window, the HTTP door's event
// streams, the tray).
func (a *App) Events() *recorder.Feed { return a.events }
