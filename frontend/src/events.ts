// Event names mirrored from app/events.go. The Wails door receives them through
// runtime.EventsOn; the HTTP door receives them as SSE `event:` names on /longhaul/v1/events.

/** Payload: ProxyStatus. Emitted by the backend whenever the proxy status changes. */
export const PROXY_STATUS = 'proxy:status'
