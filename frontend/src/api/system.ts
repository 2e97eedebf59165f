// The app.System facade: proxy status and the on/off switch. Works through either door.

import { PROXY_STATUS } from '../events'
import { httpDoor, isWails, wailsDoor, type Door, type Unsubscribe, type WailsSystem } from './door'
import { toProxyStatus, type ProxyStatus } from './types'

let cached: { system: WailsSystem | undefined; door: Door } | undefined

/**
 * currentDoor picks the Wails door when the Go bindings are present and the HTTP door otherwise.
 * The choice is remembered for as long as window.go.app.System stays the same object, so event
 * subscriptions share one backend registration.
 */
export function currentDoor(): Door {
  const w = globalThis.window as Window | undefined
  const system = isWails(w) ? w?.go?.app?.System : undefined
  if (cached === undefined || cached.system !== system) {
    cached = { system, door: system !== undefined ? wailsDoor(system, w?.runtime) : httpDoor() }
  }
  return cached.door
}

export async function getStatus(): Promise<ProxyStatus> {
  return toProxyStatus(await currentDoor().call('Status'))
}

/** setProxyEnabled starts or stops the proxy listener and returns the resulting status. */
export async function setProxyEnabled(on: boolean): Promise<ProxyStatus> {
  return toProxyStatus(await currentDoor().call('SetProxyEnabled', on))
}

/**
 * onStatus calls cb with every status the backend pushes, and with a freshly fetched one when the
 * live stream comes back after a break. Returns the function that stops it.
 */
export function onStatus(cb: (s: ProxyStatus) => void): Unsubscribe {
  const door = currentDoor()
  const offEvent = door.on(PROXY_STATUS, (payload) => cb(toProxyStatus(payload)))
  const offReconnect = door.onReconnect(() => {
    getStatus().then(cb, (err: unknown) => console.warn('status refresh after reconnect failed', err))
  })
  return () => {
    offEvent()
    offReconnect()
  }
}
