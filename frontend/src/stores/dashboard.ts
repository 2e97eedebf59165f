// Traffic over time, per account and per model, and tokens saved by compaction.

import { defineStore } from 'pinia'
import { ref, shallowRef } from 'vue'
import { backend } from '../api/backend'
import type { Stats } from '../api/models'
import { errorMessage } from '../api/types'

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
export function series(s: Stats): { x: number[]; requests: number[]; errors: number[]; tokensIn: number[]; tokensOut: number[]; saved: number[] } {
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
  const out = { x: [] as number[], requests: [] as number[], errors: [] as number[], tokensIn: [] as number[], tokensOut: [] as number[], saved: [] as number[] }
  if (!Number.isFinite(lo) || !Number.isFinite(hi) || hi < lo || (hi - lo) / width > 2000) return out
  for (let t = lo; t <= hi; t += width) {
    const r = byStart.get(t)
    out.x.push(t)
    out.requests.push(r?.requests ?? 0)
    out.errors.push(r?.errors ?? 0)
    out.tokensIn.push(r ? r.inputTokens + r.cacheReadTokens + r.cacheWriteTokens : 0)
    out.tokensOut.push(r?.outputTokens ?? 0)
    out.saved.push(r?.tokensSaved ?? 0)
  }
  return out
}

export const useDashboardStore = defineStore('dashboard', () => {
  const range = ref<Range>('24h')
  const stats = shallowRef<Stats | null>(null)
  const loading = ref(false)
  const error = ref('')

  async function load(r: Range = range.value): Promise<void> {
    range.value = r
    loading.value = true
    try {
      const { hours, bucket } = ranges[r]
      stats.value = await backend.stats({ since: new Date(Date.now() - hours * 3600_000).toISOString(), bucket })
      error.value = ''
    } catch (err) {
      error.value = errorMessage(err)
    } finally {
      loading.value = false
    }
  }

  return { range, stats, loading, error, load }
})
