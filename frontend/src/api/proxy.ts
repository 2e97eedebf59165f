// The Proxy facade (app.Proxy): the proxy's status, live status events and the on/off switch.

import * as Go from '../../wailsjs/go/app/Proxy'
import { PROXY_STATUS } from '../events'
import { bind, currentDoor, httpPaths, type Unsubscribe } from './door'
import type { ProxyStatus } from './models'

export const proxy = {
  status: bind(Go.Status, () => ({ method: 'GET', path: httpPaths.status })),
  /** Starts or stops the proxy listener; resolves with the resulting status. */
  setEnabled: bind(Go.SetEnabled, (on) => ({ method: 'POST', path: httpPaths.proxy, body: { enabled: on } })),

  /**
   * onStatus calls cb with every status the backend pushes, and with a freshly fetched one when
   * the live stream comes back after a break. Returns the function that stops it.
   */
  onStatus(cb: (s: ProxyStatus) => void): Unsubscribe {
    const door = currentDoor()
    const offEvent = door.on(PROXY_STATUS, (payload) => cb(payload as ProxyStatus))
    const offReconnect = door.onReconnect(() => {
      proxy.status().then(cb, (err: unknown) => console.warn('status refresh after reconnect failed', err))
    })
    return () => {
      offEvent()
      offReconnect()
    }
  },
}
