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

/** series turns the time buckets into aligned columns for a chart (seconds, values…). */
export function series(s: Stats): { x: number[]; requests: number[]; errors: number[]; tokensIn: number[]; tokensOut: number[]; saved: number[] } {
  const rows = s.byTime ?? []
  return {
    x: rows.map((r) => Math.floor(Date.parse(r.bucket ?? '') / 1000)),
    requests: rows.map((r) => r.requests),
    errors: rows.map((r) => r.errors),
    tokensIn: rows.map((r) => r.inputTokens + r.cacheReadTokens + r.cacheWriteTokens),
    tokensOut: rows.map((r) => r.outputTokens),
    saved: rows.map((r) => r.tokensSaved),
  }
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
