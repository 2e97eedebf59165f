// Event names mirrored from app/events.go and app/history.go. The Wails door receives them
// through runtime.EventsOn; the HTTP door receives them as SSE `event:` names on
// /longhaul/v1/events.

/** Payload: ProxyStatus. Emitted by the backend whenever the proxy status changes. */
export const PROXY_STATUS = 'proxy:status'

/**
 * Payload: Exchange[], the latest state of every exchange that started or finished since the
 * previous batch (about every 250 ms). A new subscriber may get the last batch again.
 */
export const HISTORY_EXCHANGES = 'history:exchanges'

/** Payload: UpdateStatus. Emitted when self-update's state changes (app/update.go). */
export const UPDATE_STATUS = 'update:status'
