// Event names mirrored from app/events.go. The Wails door receives them
// through runtime.EventsOn; the HTTP door receives them as SSE `event:` names on
// /longhaul/v1/events.

/** Payload: app.ProxyStatus. Emitted by the backend whenever the proxy status changes. */
export const PROXY_STATUS = 'proxy:status'

/**
 * Payload: Exchange[], the latest state of every exchange that started or finished since the
 * previous batch (about every 250 ms). A new subscriber may get the last batch again.
 */
export const HISTORY_EXCHANGES = 'history:exchanges'

/** Payload: update.Status. Emitted when self-update's state changes (app/update). */
export const UPDATE_STATUS = 'update:status'
