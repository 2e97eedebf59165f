// The History facade (app.History): recorded exchanges (filtered by the backend only), one
// exchange in detail, export, sessions, context pressure, traffic stats, and the live feed.

import * as Go from '../../wailsjs/go/app/History'
import { HISTORY_EXCHANGES } from '../events'
import { api, bind, currentDoor, query, seg, type Unsubscribe } from './door'
import type { Exchange, HistoryQuery } from './models'

/** Strips empty values and stringifies the rest, so both doors get the same parameters. */
export function params(q: object): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(q)) if (v !== undefined && v !== null && v !== '') out[k] = String(v)
  return out
}

const list = bind(Go.List, (q) => ({ method: 'GET', path: `${api}/history${query(q)}` }))
const exportJSONL = bind(Go.Export, (q) => ({ method: 'GET', path: `${api}/history/export${query(q)}`, text: true }))
// The window's binding returns the zip base64-encoded (bindings carry JSON); the HTTP route
// returns the zip itself (app/door: GET /longhaul/v1/history/{id}/bundle).
const bundleZip = bind(Go.Bundle, (id) => ({ method: 'GET', path: `${api}/history/${seg(id)}/bundle`, blob: true }))
const sessions = bind(Go.Sessions, (q) => ({ method: 'GET', path: `${api}/sessions${query(q)}` }))
const stats = bind(Go.Stats, (q) => ({ method: 'GET', path: `${api}/stats${query(q)}` }))
const statsSeries = bind(Go.StatsSeries, (q) => ({ method: 'GET', path: `${api}/stats/series${query(q)}` }))

export const history = {
  /** A page of exchanges, newest first, filtered by the backend (store: HistoryFilter). */
  list: (q: HistoryQuery) => list(params(q)),
  detail: bind(Go.Detail, (id) => ({ method: 'GET', path: `${api}/history/${seg(id)}` })),
  /** The filtered exchanges as JSON Lines. */
  export: (q: HistoryQuery) => exportJSONL(params(q)),
  /**
   * The repro bundle of one exchange, a zip to attach to a bug report (app/bundle): bodies,
   * reply, attempts, compaction steps, settings and version, with every key masked.
   */
  async bundle(id: string): Promise<Blob> {
    const zip: unknown = await bundleZip(id)
    if (zip instanceof Blob) return zip
    const bytes = Uint8Array.from(atob(String(zip)), (c) => c.charCodeAt(0))
    return new Blob([bytes], { type: 'application/zip' })
  },
  /**
   * Re-sends an exchange's request as it was received, through the proxy, as a new exchange
   * marked as its replay (app.History.Replay; POST /longhaul/v1/history/{id}/replay). Resolves
   * when the replay finished, with its id and status; its record is written a moment later.
   */
  replay: bind(Go.Replay, (id, o) => ({ method: 'POST', path: `${api}/history/${seg(id)}/replay`, body: o })),
  sessions: (q: { since?: string; limit?: number }) => sessions(params(q)),
  /** A session's context pressure ("latest": the latest session). */
  pressure: bind(Go.Pressure, (id) => ({ method: 'GET', path: `${api}/sessions/${seg(id)}/pressure` })),
  stats: (q: { since?: string; until?: string; bucket?: 'hour' | 'day' }) => stats(params(q)),
  statsSeries: (q: { since?: string; until?: string; bucket?: 'hour' | 'day'; by: 'account' | 'model' }) => statsSeries(params(q)),

  /**
   * onExchanges calls cb with every live batch (the latest state of each exchange that started
   * or finished since the previous one, unfiltered), and onGap when the stream came back after a
   * break (batches may have been missed: reload the list). Returns the function that stops it.
   */
  onExchanges(cb: (batch: Exchange[]) => void, onGap: () => void): Unsubscribe {
    const door = currentDoor()
    const off = door.on(HISTORY_EXCHANGES, (payload) => {
      if (Array.isArray(payload)) cb(payload as Exchange[])
    })
    const offGap = door.onReconnect(onGap)
    return () => {
      off()
      offGap()
    }
  },
}
