// The live monitor: the newest exchanges, kept current by the live feed, capped in memory,
// filtered like the history API filters, with pause/resume.

import { defineStore } from 'pinia'
import { computed, ref, shallowRef } from 'vue'
import { backend } from '../api/backend'
import { onExchanges } from '../api/live'
import type { Exchange, HistoryQuery } from '../api/models'
import { errorMessage } from '../api/types'

/** At most this many rows are kept; older ones drop off the end. */
export const MAX_ROWS = 2000
/** Rows asked for per page. */
export const PAGE = 200

export type MonitorFilter = Pick<HistoryQuery, 'status' | 'model' | 'account' | 'session' | 'route' | 'compacted' | 'q' | 'since'>

/** Time ranges of the monitor's "since" filter, in minutes ('' = everything kept). */
export const sinceRanges: Record<string, number> = { '15m': 15, '1h': 60, '24h': 24 * 60, '7d': 7 * 24 * 60 }

/** sinceFor turns a range name into the RFC 3339 time it starts at ('' for none). */
export function sinceFor(range: string, now = Date.now()): string {
  const minutes = sinceRanges[range]
  return minutes === undefined ? '' : new Date(now - minutes * 60_000).toISOString()
}

const failedOutcomes = ['client_cancelled', 'upstream_error']

export function isError(e: Exchange): boolean {
  return e.state === 'finished' && (e.status >= 400 || e.errorType !== '' || failedOutcomes.includes(e.streamOutcome))
}

/** matches applies a filter to a live exchange the way the store's query does. */
export function matches(e: Exchange, f: MonitorFilter): boolean {
  switch (f.status) {
    case '2xx':
    case '3xx':
    case '4xx':
    case '5xx': {
      const lo = Number(f.status[0]) * 100
      if (!(e.status >= lo && e.status < lo + 100)) return false
      break
    }
    case 'error':
      if (!isError(e)) return false
      break
    case 'ok':
      if (e.state !== 'finished' || isError(e)) return false
      break
  }
  if (f.model && e.model !== f.model && e.modelSent !== f.model) return false
  if (f.account && e.accountName !== f.account && String(e.accountID) !== f.account) return false
  if (f.session && e.sessionID !== f.session) return false
  if (f.route && e.route !== f.route) return false
  if (f.since && Date.parse(e.start) < Date.parse(f.since)) return false
  if (f.compacted === 'true' && (e.layers?.length ?? 0) === 0) return false
  if (f.q) {
    const q = f.q.toLowerCase()
    const hay = [e.model, e.modelSent, e.accountName, e.errorType, e.errorMessage, e.path]
    if (!hay.some((s) => (s ?? '').toLowerCase().includes(q))) return false
  }
  return true
}

function startMs(e: Exchange): number {
  const t = Date.parse(e.start)
  return Number.isNaN(t) ? 0 : t
}

/**
 * merge folds a batch into rows (newest first): a known exchange is replaced by its newer
 * state (never a finished one by a started one), a new one is inserted by start time, and the
 * list is cut to max.
 */
export function merge(rows: Exchange[], batch: Exchange[], f: MonitorFilter, max = MAX_ROWS): Exchange[] {
  if (batch.length === 0) return rows
  const byId = new Map(rows.map((e, i) => [e.id, i]))
  const out = rows.slice()
  const added: Exchange[] = []
  for (const e of batch) {
    const i = byId.get(e.id)
    if (i !== undefined) {
      const cur = out[i] as Exchange
      if (cur.state === 'finished' && e.state !== 'finished') continue
      out[i] = { ...e, seq: e.seq || cur.seq }
      continue
    }
    if (!matches(e, f)) continue
    added.push(e)
    byId.set(e.id, -1)
  }
  if (added.length > 0) {
    out.push(...added)
    out.sort((a, b) => startMs(b) - startMs(a))
  }
  return out.length > max ? out.slice(0, max) : out
}

export const useMonitorStore = defineStore('monitor', () => {
  const rows = shallowRef<Exchange[]>([])
  const filter = ref<MonitorFilter>({ status: '', model: '', account: '', route: '', compacted: '', q: '' })
  const paused = ref(false)
  /** Batches that arrived while paused, applied on resume. */
  const pending = shallowRef<Exchange[]>([])
  const loading = ref(false)
  const error = ref('')
  const next = ref(0)
  let loadSeq = 0

  const pendingCount = computed(() => new Set(pending.value.map((e) => e.id)).size)

  async function load(): Promise<void> {
    const mine = ++loadSeq
    loading.value = true
    try {
      const page = await backend.history({ ...filter.value, limit: String(PAGE) })
      if (mine !== loadSeq) return
      rows.value = page.exchanges ?? []
      next.value = page.next
      error.value = ''
    } catch (err) {
      if (mine === loadSeq) error.value = errorMessage(err)
    } finally {
      if (mine === loadSeq) loading.value = false
    }
  }

  async function loadMore(): Promise<void> {
    if (next.value === 0 || loading.value || rows.value.length >= MAX_ROWS) return
    loading.value = true
    try {
      const page = await backend.history({ ...filter.value, limit: String(PAGE), before: String(next.value) })
      const known = new Set(rows.value.map((e) => e.id))
      rows.value = [...rows.value, ...(page.exchanges ?? []).filter((e) => !known.has(e.id))].slice(0, MAX_ROWS)
      next.value = page.next
    } catch (err) {
      error.value = errorMessage(err)
    } finally {
      loading.value = false
    }
  }

  function apply(batch: Exchange[]): void {
    if (paused.value) {
      const all = [...pending.value, ...batch]
      pending.value = all.length > MAX_ROWS ? all.slice(all.length - MAX_ROWS) : all
      return
    }
    rows.value = merge(rows.value, batch, filter.value)
  }

  function pause(): void {
    paused.value = true
  }

  function resume(): void {
    paused.value = false
    const batch = pending.value
    pending.value = []
    apply(batch)
  }

  async function setFilter(f: Partial<MonitorFilter>): Promise<void> {
    filter.value = { ...filter.value, ...f }
    await load()
  }

  /** subscribe starts the live feed and loads the first page; returns the stop function. */
  function subscribe(): () => void {
    const off = onExchanges(apply, () => void load())
    void load()
    return off
  }

  return { rows, filter, paused, pending, pendingCount, loading, error, next, load, loadMore, apply, pause, resume, setFilter, subscribe }
})
