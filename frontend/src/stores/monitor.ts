// The live monitor: the newest exchanges, kept current by the live feed, capped in memory,
// with pause/resume. Filtering is the backend's alone: a filtered list is the backend's answer,
// asked again as live batches arrive (see REFILTER_MS); live rows only update rows it returned.

import { defineStore } from 'pinia'
import { computed, ref, shallowRef } from 'vue'
import { errorMessage } from '../api/errors'
import { history } from '../api/history'
import type { Exchange, HistoryQuery } from '../api/models'

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

/** filtering reports whether f narrows the list at all (then only the backend knows what matches). */
export function filtering(f: MonitorFilter): boolean {
  return Object.values(f).some((v) => v !== undefined && v !== '')
}

function startMs(e: Exchange): number {
  const t = Date.parse(e.start)
  return Number.isNaN(t) ? 0 : t
}

/**
 * merge folds a live batch into rows (newest first): a known exchange is replaced by its newer
 * state (never a finished one by a started one); a new one is inserted by start time unless
 * addNew is false (a filtered list, which the backend refills); the list is cut to max.
 */
export function merge(rows: Exchange[], batch: Exchange[], addNew = true, max = MAX_ROWS): Exchange[] {
  if (batch.length === 0) return rows
  const byId = new Map(rows.map((e, i) => [e.id, i]))
  const out = rows.slice()
  const added: Exchange[] = []
  for (const e of batch) {
    const i = byId.get(e.id)
    if (i !== undefined) {
      if (i < 0) continue // added from this batch already
      const cur = out[i] as Exchange
      if (cur.state === 'finished' && e.state !== 'finished') continue
      out[i] = { ...e, seq: e.seq || cur.seq }
      continue
    }
    if (!addNew) continue
    added.push(e)
    byId.set(e.id, -1)
  }
  if (added.length > 0) {
    out.push(...added)
    out.sort((a, b) => startMs(b) - startMs(a))
  }
  return out.length > max ? out.slice(0, max) : out
}

/**
 * While a filter is on, live batches make the monitor ask the backend for the filtered page
 * again: at most once per REFILTER_MS, and once more SETTLE_MS after the last batch, by which
 * time the recorder has committed every exchange the batches named (it commits within about
 * 200 ms; live batches come every 250 ms).
 */
export const REFILTER_MS = 500
export const SETTLE_MS = 2000

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
    cancelRefilter()
    const mine = ++loadSeq
    loading.value = true
    try {
      const page = await history.list({ ...filter.value, limit: String(PAGE) })
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
      const page = await history.list({ ...filter.value, limit: String(PAGE), before: String(next.value) })
      const known = new Set(rows.value.map((e) => e.id))
      rows.value = [...rows.value, ...(page.exchanges ?? []).filter((e) => !known.has(e.id))].slice(0, MAX_ROWS)
      next.value = page.next
    } catch (err) {
      error.value = errorMessage(err)
    } finally {
      loading.value = false
    }
  }

  /**
   * refilter asks the backend for the first filtered page again, quietly (no loading state), and
   * keeps the rows of later pages the user loaded. An answer overtaken by a load or by a newer
   * refilter is dropped.
   */
  let refilterSeq = 0
  async function refilter(): Promise<void> {
    const load = loadSeq
    const mine = ++refilterSeq
    try {
      const page = await history.list({ ...filter.value, limit: String(PAGE) })
      if (load !== loadSeq || mine !== refilterSeq) return
      const first = page.exchanges ?? []
      const cut = page.next
      const older = cut === 0 ? [] : rows.value.filter((e) => e.seq > 0 && e.seq < cut)
      rows.value = [...first, ...older].slice(0, MAX_ROWS)
      if (older.length === 0) next.value = page.next
      error.value = ''
    } catch (err) {
      if (load === loadSeq && mine === refilterSeq) error.value = errorMessage(err)
    }
  }

  let refilterTimer: ReturnType<typeof setTimeout> | undefined
  let settleTimer: ReturnType<typeof setTimeout> | undefined

  /** scheduleRefilter: one refilter per REFILTER_MS at most while batches come, one SETTLE_MS after. */
  function scheduleRefilter(): void {
    clearTimeout(settleTimer)
    settleTimer = setTimeout(() => {
      settleTimer = undefined
      void refilter()
    }, SETTLE_MS)
    if (refilterTimer !== undefined) return
    refilterTimer = setTimeout(() => {
      refilterTimer = undefined
      void refilter()
    }, REFILTER_MS)
  }

  function cancelRefilter(): void {
    clearTimeout(refilterTimer)
    clearTimeout(settleTimer)
    refilterTimer = undefined
    settleTimer = undefined
  }

  function apply(batch: Exchange[]): void {
    if (batch.length === 0) return
    if (paused.value) {
      const all = [...pending.value, ...batch]
      pending.value = all.length > MAX_ROWS ? all.slice(all.length - MAX_ROWS) : all
      return
    }
    if (!filtering(filter.value)) {
      rows.value = merge(rows.value, batch)
      return
    }
    // Rows already shown follow the live state at once; what matches is the backend's answer.
    rows.value = merge(rows.value, batch, false)
    scheduleRefilter()
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
    const off = history.onExchanges(apply, () => void load())
    void load()
    return () => {
      off()
      cancelRefilter()
    }
  }

  /** exportLines returns every exchange the filter matches as JSON Lines (what "export" saves). */
  function exportLines(): Promise<string> {
    return history.export(filter.value)
  }

  return { rows, filter, paused, pending, pendingCount, loading, error, next, load, loadMore, apply, pause, resume, setFilter, subscribe, exportLines }
})
