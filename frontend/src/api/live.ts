// Live monitor feed: batches of exchanges through whichever door is open.

import { HISTORY_EXCHANGES } from '../events'
import type { Unsubscribe } from './door'
import type { Exchange } from './models'
import { currentDoor } from './system'

/**
 * onExchanges calls cb with every live batch, and onGap when the stream came back after a
 * break (batches may have been missed: reload the list). Returns the function that stops it.
 */
export function onExchanges(cb: (batch: Exchange[]) => void, onGap: () => void): Unsubscribe {
  const door = currentDoor()
  const off = door.on(HISTORY_EXCHANGES, (payload) => {
    if (Array.isArray(payload)) cb(payload as Exchange[])
  })
  const offGap = door.onReconnect(onGap)
  return () => {
    off()
    offGap()
  }
}
