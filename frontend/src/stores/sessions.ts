// Sessions with their context pressure, the account they are bound to, the window that applies
// and why, the prompt cache, and the layers fired.

import { defineStore } from 'pinia'
import { ref, shallowRef } from 'vue'
import { errorMessage } from '../api/errors'
import { history } from '../api/history'
import type { Pressure, Session } from '../api/models'

/** Sessions whose live pressure (bound account, next layer) is fetched. */
export const PRESSURE_FOR = 20

export interface Thresholds {
  l1: number
  l2: number
  l3: number
}

/** nextLayer is the first layer whose threshold the ratio has not reached ('' when none). */
export function nextLayer(ratio: number, t: Thresholds): { layer: string; threshold: number } {
  const all: [string, number][] = [
    ['Layer-1', t.l1],
    ['Layer-2', t.l2],
    ['Layer-3', t.l3],
  ]
  for (const [layer, threshold] of all) if (ratio < threshold) return { layer, threshold }
  return { layer: '', threshold: 0 }
}

export const useSessionsStore = defineStore('sessions', () => {
  const sessions = shallowRef<Session[]>([])
  const pressure = ref<Record<string, Pressure>>({})
  /** When each session's pressure arrived (ms since the epoch): its cache's countdown runs from
   * then. */
  const pressureAt = ref<Record<string, number>>({})
  const loading = ref(false)
  const error = ref('')

  async function load(sinceHours = 24 * 7): Promise<void> {
    loading.value = true
    try {
      const since = new Date(Date.now() - sinceHours * 3600_000).toISOString()
      const list = await history.sessions({ since, limit: 200 })
      sessions.value = list ?? []
      error.value = ''
      const top = sessions.value.slice(0, PRESSURE_FOR)
      const results = await Promise.allSettled(top.map(async (s) => ({ p: await history.pressure(s.id), at: Date.now() })))
      const map: Record<string, Pressure> = {}
      const at: Record<string, number> = {}
      results.forEach((r, i) => {
        const s = top[i]
        if (r.status === 'fulfilled' && s) {
          map[s.id] = r.value.p
          at[s.id] = r.value.at
        }
      })
      pressure.value = map
      pressureAt.value = at
    } catch (err) {
      error.value = errorMessage(err)
    } finally {
      loading.value = false
    }
  }

  return { sessions, pressure, pressureAt, loading, error, load }
})
