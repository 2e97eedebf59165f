import { createPinia, setActivePinia } from 'pinia'
import { beforeEach, describe, expect, it, vi } from 'vitest'
import { backend } from '../api/backend'
import { ApiError } from '../api/types'
import { exchange, settingsView } from '../testing/fixtures'
import { quotaRows, useAccountsStore } from './accounts'
import { lines, series } from './dashboard'
import { MAX_ROWS, matches, merge, useMonitorStore } from './monitor'
import { nextLayer } from './sessions'
import { L1, L2, L3, changedKeys, useSettingsStore } from './settings'

vi.mock('../api/backend', () => ({
  backend: {
    history: vi.fn(),
    settings: vi.fn(),
    setSettings: vi.fn(),
    resetSettings: vi.fn(),
    addAccount: vi.fn(),
    updateAccount: vi.fn(),
    accounts: vi.fn(),
  },
}))
vi.mock('../api/live', () => ({ onExchanges: vi.fn(() => () => {}) }))

const mocked = backend as unknown as Record<string, ReturnType<typeof vi.fn>>

beforeEach(() => {
  setActivePinia(createPinia())
  for (const fn of Object.values(mocked)) fn.mockReset()
})

describe('monitor store', () => {
  it('adds new exchanges newest first and keeps a finished record over a late started one', () => {
    const a = exchange({ id: 'a', start: '2026-01-01T10:00:00Z', state: 'started', status: 0 })
    const b = exchange({ id: 'b', start: '2026-01-01T10:00:01Z' })
    let rows = merge([], [a], {})
    rows = merge(rows, [b, { ...a, state: 'finished', status: 200 }], {})
    expect(rows.map((e) => [e.id, e.state])).toEqual([
      ['b', 'finished'],
      ['a', 'finished'],
    ])
    rows = merge(rows, [{ ...a, state: 'started' }], {})
    expect(rows[1]?.state).toBe('finished')
  })

  it('caps the list in memory', () => {
    const many = Array.from({ length: MAX_ROWS + 50 }, (_, i) => exchange({ id: `x${i}`, start: new Date(1_700_000_000_000 + i * 1000).toISOString() }))
    const rows = merge([], many, {})
    expect(rows).toHaveLength(MAX_ROWS)
    expect(rows[0]?.id).toBe(`x${MAX_ROWS + 49}`) // the newest stay
  })

  it('filters live exchanges like the history query', () => {
    const ok = exchange({ status: 200, model: 'claude-sonnet-4-5', modelSent: 'claude-sonnet-4-5-x', accountName: 'work', layers: ['Layer-1'] })
    const failed = exchange({ status: 529, errorType: 'overloaded_error' })
    const cancelled = exchange({ status: 200, streamOutcome: 'client_cancelled' })
    expect(matches(ok, { status: 'ok' })).toBe(true)
    expect(matches(failed, { status: 'error' })).toBe(true)
    expect(matches(cancelled, { status: 'error' })).toBe(true)
    expect(matches(failed, { status: '5xx' })).toBe(true)
    expect(matches(ok, { status: '5xx' })).toBe(false)
    expect(matches(ok, { model: 'claude-sonnet-4-5-x' })).toBe(true)
    expect(matches(ok, { account: '1' })).toBe(true)
    expect(matches(ok, { compacted: 'true' })).toBe(true)
    expect(matches(failed, { compacted: 'true' })).toBe(false)
    expect(matches(failed, { q: 'OVERLOADED' })).toBe(true)
    expect(matches(ok, { q: 'nothing-like-it' })).toBe(false)
    expect(matches(exchange({ start: '2026-01-01T10:00:00Z' }), { since: '2026-01-01T09:00:00Z' })).toBe(true)
    expect(matches(exchange({ start: '2026-01-01T08:00:00Z' }), { since: '2026-01-01T09:00:00Z' })).toBe(false)
  })

  it('holds live updates while paused and applies them on resume', async () => {
    mocked.history?.mockResolvedValue({ exchanges: [exchange({ id: 'old' })], next: 0 })
    const m = useMonitorStore()
    await m.load()
    m.pause()
    m.apply([exchange({ id: 'n1', start: '2030-01-01T00:00:00Z' })])
    m.apply([exchange({ id: 'n2', start: '2030-01-01T00:00:01Z' })])
    expect(m.rows.map((e) => e.id)).toEqual(['old'])
    expect(m.pendingCount).toBe(2)
    m.resume()
    expect(m.rows.map((e) => e.id)).toEqual(['n2', 'n1', 'old'])
    expect(m.pendingCount).toBe(0)
  })

  it('reloads with the filter as history query parameters', async () => {
    mocked.history?.mockResolvedValue({ exchanges: [], next: 0 })
    const m = useMonitorStore()
    await m.setFilter({ status: 'error', compacted: 'true', q: 'opus' })
    expect(mocked.history).toHaveBeenLastCalledWith(expect.objectContaining({ status: 'error', compacted: 'true', q: 'opus', limit: '200' }))
  })
})

describe('settings store', () => {
  it('refuses thresholds out of order and keeps the draft', async () => {
    mocked.settings?.mockResolvedValue(settingsView())
    const s = useSettingsStore()
    await s.load()
    expect(s.setThreshold(L2, 0.3)).toBe(false)
    expect(s.fieldErrors[L2]).toContain('L1')
    expect(s.draft?.proxy.experimental.context_compression_threshold_l2).toBe(0.55)
    expect(s.setThreshold(L1, 0.6)).toBe(false)
    expect(s.setThreshold(L3, 1.2)).toBe(false)
    expect(s.setThreshold(L2, 0.45)).toBe(true)
    expect(s.fieldErrors[L2]).toBeUndefined()
    expect(s.dirty).toEqual([L2])
  })

  it('saves only the changed keys and shows backend errors on their field', async () => {
    mocked.settings?.mockResolvedValue(settingsView())
    const s = useSettingsStore()
    await s.load()
    s.set('proxy.port', 70000)
    s.set('proxy.context_limits', { '*': 3000 })
    mocked.setSettings?.mockRejectedValue(new ApiError('proxy.port: must be between 1 and 65535', 400, { 'proxy.port': 'must be between 1 and 65535' }))
    expect(await s.save()).toBe(false)
    expect(mocked.setSettings).toHaveBeenCalledWith({ 'proxy.port': 70000, 'proxy.context_limits': { '*': 3000 } })
    expect(s.fieldErrors['proxy.port']).toBe('must be between 1 and 65535')
    expect(s.error).toBe('')

    const saved = settingsView()
    saved.settings.proxy.port = 8050
    mocked.setSettings?.mockResolvedValue(saved)
    s.set('proxy.port', 8050)
    s.set('proxy.context_limits', saved.settings.proxy.context_limits)
    expect(await s.save()).toBe(true)
    expect(s.dirty).toEqual([])
    expect(s.fieldErrors).toEqual({})
  })

  it('compares whole maps and lists as one key', () => {
    const a = settingsView().settings
    const b = settingsView().settings
    b.proxy.model_map = [{ pattern: 'x*', model: 'y' }]
    expect(changedKeys(settingsView().keys, a, b)).toEqual(['proxy.model_map'])
  })
})

describe('accounts store', () => {
  it('keeps field errors from a refused save and adds a saved account', async () => {
    const a = useAccountsStore()
    mocked.addAccount?.mockRejectedValueOnce(new ApiError('baseURL: must be an http or https URL with a host', 400, { baseURL: 'must be an http or https URL with a host' }))
    const input = { label: 'w', kind: 'anthropic', baseURL: 'ftp://x', key: 'sk-1', models: [], priority: 0, weight: 1 }
    expect(await a.save(0, input)).toBe(false)
    expect(a.fieldErrors.baseURL).toContain('http')
    mocked.addAccount?.mockResolvedValueOnce({ id: 7, label: 'w', key: 'sk-…abcd', enabled: true })
    expect(await a.save(0, { ...input, baseURL: 'https://api.anthropic.com' })).toBe(true)
    expect(a.accounts.map((x) => x.id)).toEqual([7])
    expect(a.fieldErrors).toEqual({})
  })
})

describe('dashboard lines', () => {
  it('gives each account a line over the buckets, the biggest first, the rest as other', () => {
    const row = (key: string, bucket: string, requests: number) => ({
      key,
      bucket,
      requests,
      errors: 0,
      inputTokens: 0,
      outputTokens: 0,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      tokensSaved: 0,
    })
    const s = {
      since: '',
      until: '',
      by: 'account',
      bucket: 'hour',
      rows: [row('a', '2026-01-01T10:00:00Z', 1), row('b', '2026-01-01T10:00:00Z', 5), row('c', '2026-01-01T11:00:00Z', 2), row('a', '2026-01-01T11:00:00Z', 1)],
    }
    const x = [1767261600, 1767265200]
    expect(lines(s, x, 'requests', 'other', 2)).toEqual([
      { key: 'b', values: [5, 0] },
      { key: 'a', values: [1, 1] },
      { key: 'other', values: [0, 2] },
    ])
  })
})

describe('quota rows', () => {
  it('groups the rate-limit headers by what they count', () => {
    expect(
      quotaRows({
        'Anthropic-Ratelimit-Tokens-Remaining': '10',
        'Anthropic-Ratelimit-Requests-Limit': '50',
        'Anthropic-Ratelimit-Requests-Remaining': '49',
        'requests-reset': '2026-01-01T00:00:00Z',
        'Anthropic-Ratelimit-Unified-Status': 'allowed',
      }),
    ).toEqual([
      { kind: 'requests', limit: '50', remaining: '49', reset: '2026-01-01T00:00:00Z' },
      { kind: 'tokens', limit: '', remaining: '10', reset: '' },
    ])
  })
})

describe('sessions and dashboard helpers', () => {
  it('names the next layer from the thresholds', () => {
    const t = { l1: 0.4, l2: 0.55, l3: 0.7 }
    expect(nextLayer(0.1, t)).toEqual({ layer: 'Layer-1', threshold: 0.4 })
    expect(nextLayer(0.6, t)).toEqual({ layer: 'Layer-3', threshold: 0.7 })
    expect(nextLayer(0.9, t).layer).toBe('')
  })

  it('turns time buckets into chart columns, zero where there was no traffic', () => {
    const row = { key: '', requests: 3, errors: 1, inputTokens: 10, outputTokens: 5, cacheReadTokens: 2, cacheWriteTokens: 1, tokensSaved: 7 }
    const s = series({
      since: '2026-01-01T08:30:00Z',
      until: '2026-01-01T10:15:00Z',
      bucket: 'hour',
      total: row,
      byAccount: [],
      byModel: [],
      byTime: [{ ...row, bucket: '2026-01-01T10:00:00Z' }],
    })
    expect(s).toEqual({
      x: [1767254400, 1767258000, 1767261600],
      requests: [0, 0, 3],
      errors: [0, 0, 1],
      tokensIn: [0, 0, 13],
      tokensOut: [0, 0, 5],
      saved: [0, 0, 7],
    })
  })
})
