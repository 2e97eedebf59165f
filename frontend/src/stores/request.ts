// One exchange in detail: attempts, bodies, and the ledger of what each step changed.

import { defineStore } from 'pinia'
import { computed, ref, shallowRef } from 'vue'
import { errorMessage } from '../api/errors'
import { history } from '../api/history'
import type { Exchange } from '../api/models'
import { ledgerOf, type Ledger } from '../lib/ledger'

const retries = 3
const retryMs = 300
// A request still in flight when its page opened is fetched again until it has finished: the
// recorder writes its row when it starts and replaces it when it ends, and the page shows the
// end without a reload. The waits grow to a few seconds (a stream may run for minutes).
const followMs = [300, 500, 1000, 2000, 5000]

export const useRequestStore = defineStore('request', () => {
  const exchange = shallowRef<Exchange | null>(null)
  const loading = ref(false)
  const error = ref('')
  let seq = 0

  // Drawn from the edits the server recorded, never from comparing the bodies.
  const ledger = computed<Ledger | null>(() => (exchange.value ? ledgerOf(exchange.value) : null))

  async function open(id: string): Promise<void> {
    const mine = ++seq
    if (exchange.value?.id !== id) exchange.value = null
    loading.value = true
    error.value = ''
    try {
      // A row clicked the moment it finished may not be written yet (the recorder batches
      // for up to 200 ms): try again briefly before saying so.
      let e: Exchange | undefined
      for (let attempt = 0; ; attempt++) {
        try {
          e = await history.detail(id)
          break
        } catch (err) {
          if (attempt >= retries || mine !== seq) throw err
          await new Promise((r) => setTimeout(r, retryMs))
        }
      }
      if (mine === seq) exchange.value = e
    } catch (err) {
      if (mine === seq) error.value = errorMessage(err)
    } finally {
      if (mine === seq) loading.value = false
    }
    if (mine === seq) void follow(id, mine)
  }

  /** follow fetches an in-flight exchange again until it finished, or another page opened. */
  async function follow(id: string, mine: number): Promise<void> {
    for (let i = 0; mine === seq && exchange.value?.id === id && exchange.value.state !== 'finished'; i++) {
      await new Promise((r) => setTimeout(r, followMs[Math.min(i, followMs.length - 1)]))
      if (mine !== seq) return
      try {
        const e = await history.detail(id)
        if (mine === seq) exchange.value = e
      } catch {
        // Shown as it was; the next try may answer.
      }
    }
  }

  /** close stops following the open exchange (its page closed). */
  function close(): void {
    seq++
  }

  /** exportJSON returns the exchange as one JSON document (what "export" saves). */
  function exportJSON(): string {
    return exchange.value ? JSON.stringify(exchange.value, null, 2) : ''
  }

  /** bundle fetches the open exchange's repro bundle, a zip (app/bundle). */
  async function bundle(): Promise<Blob> {
    const id = exchange.value?.id
    if (id === undefined) throw new Error('no request is open')
    return history.bundle(id)
  }

  return { exchange, loading, error, ledger, open, close, exportJSON, bundle }
})
