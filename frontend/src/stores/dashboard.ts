// Traffic over time, per account and per model, its estimated cost, and tokens saved by
// compaction.

import { defineStore } from 'pinia'
import { ref, shallowRef } from 'vue'
import { errorMessage } from '../api/errors'
import { history } from '../api/history'
import type { Stats, StatsRow, StatsSeries } from '../api/models'

export type Range = '24h' | '7d' | '30d'

export const ranges: Record<Range, { hours: number; bucket: 'hour' | 'day' }> = {
  '24h': { hours: 24, bucket: 'hour' },
  '7d': { hours: 24 * 7, bucket: 'day' },
  '30d': { hours: 24 * 30, bucket: 'day' },
}

/**
 * series turns the time buckets into aligned chart columns (Unix seconds, values…), one point
 * per bucket from since to until, zero where there was no traffic.
 */
export function series(s: Stats): { x: number[]; requests: number[]; errors: number[]; tokensIn: number[]; tokensOut: number[]; saved: number[]; cost: number[] } {
  const width = s.bucket === 'day' ? 86400 : 3600
  const byStart = new Map((s.byTime ?? []).map((r) => [Math.floor(Date.parse(r.bucket ?? '') / 1000), r]))
  const known = [...byStart.keys()].filter((k) => Number.isFinite(k))
  const since = Date.parse(s.since)
  const until = Date.parse(s.until)
  let lo = Number.isFinite(since) ? Math.floor(since / 1000 / width) * width : Math.min(...known)
  let hi = Number.isFinite(until) ? Math.floor(until / 1000 / width) * width : Math.max(...known)
  if (known.length > 0) {
    lo = Math.min(lo, ...known)
    hi = Math.max(hi, ...known)
  }
  const out = { x: [] as number[], requests: [] as number[], errors: [] as number[], tokensIn: [] as number[], tokensOut: [] as number[], saved: [] as number[], cost: [] as number[] }
  if (!Number.isFinite(lo) || !Number.isFinite(hi) || hi < lo || (hi - lo) / width > 2000) return out
  for (let t = lo; t <= hi; t += width) {
    const r = byStart.get(t)
    out.x.push(t)
    out.requests.push(r?.requests ?? 0)
    out.errors.push(r?.errors ?? 0)
    out.tokensIn.push(r ? r.inputTokens + r.cacheReadTokens + r.cacheWriteTokens : 0)
    out.tokensOut.push(r?.outputTokens ?? 0)
    out.saved.push(r?.tokensSaved ?? 0)
    out.cost.push(r?.cost?.total ?? 0)
  }
  return out
}

/** At most this many lines per chart; the rest are summed into one "other" line. */
export const MAX_LINES = 6

export type Measure = 'requests' | 'tokens' | 'errors'

function measure(r: StatsRow, m: Measure): number {
  if (m === 'requests') return r.requests
  if (m === 'errors') return r.errors
  return r.inputTokens + r.cacheReadTokens + r.cacheWriteTokens + r.outputTokens
}

/**
 * lines spreads a per-key series over the columns x (bucket starts, Unix seconds): one line per
 * key, the biggest first, at most max of them with the rest summed under otherKey.
 */
export function lines(s: StatsSeries, x: number[], m: Measure, otherKey: string, max = MAX_LINES): { key: string; values: number[] }[] {
  const index = new Map(x.map((t, i) => [t, i]))
  const byKey = new Map<string, number[]>()
  const totals = new Map<string, number>()
  for (const r of s.rows ?? []) {
    const i = index.get(Math.floor(Date.parse(r.bucket ?? '') / 1000))
    if (i === undefined) continue
    let vals = byKey.get(r.key)
    if (vals === undefined) {
      vals = x.map(() => 0)
      byKey.set(r.key, vals)
    }
    vals[i] = (vals[i] ?? 0) + measure(r, m)
    totals.set(r.key, (totals.get(r.key) ?? 0) + measure(r, m))
  }
  const keys = [...byKey.keys()].sort((a, b) => (totals.get(b) ?? 0) - (totals.get(a) ?? 0) || a.localeCompare(b))
  const out = keys.slice(0, max).map((key) => ({ key, values: byKey.get(key) as number[] }))
  const rest = keys.slice(max)
  if (rest.length > 0) {
    const values = x.map((_, i) => rest.reduce((sum, k) => sum + ((byKey.get(k) as number[])[i] ?? 0), 0))
    out.push({ key: otherKey, values })
  }
  return out
}

export const useDashboardStore = defineStore('dashboard', () => {
  const range = ref<Range>('24h')
  const stats = shallowRef<Stats | null>(null)
  const byAccount = shallowRef<StatsSeries | null>(null)
  const byModel = shallowRef<StatsSeries | null>(null)
  const loading = ref(false)
  const error = ref('')

  async function load(r: Range = range.value): Promise<void> {
    range.value = r
    loading.value = true
    try {
      const { hours, bucket } = ranges[r]
      const since = new Date(Date.now() - hours * 3600_000).toISOString()
      const [s, a, m] = await Promise.all([
        history.stats({ since, bucket }),
        history.statsSeries({ since, bucket, by: 'account' }),
        history.statsSeries({ since, bucket, by: 'model' }),
      ])
      stats.value = s
      byAccount.value = a
      byModel.value = m
      error.value = ''
    } catch (err) {
      error.value = errorMessage(err)
    } finally {
      loading.value = false
    }
  }

  return { range, stats, byAccount, byModel, loading, error, load }
})
