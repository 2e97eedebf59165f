import { createPinia, setActivePinia } from 'pinia'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { ApiError } from '../api/errors'
import type { AccountInput, AccountView, Exchange, HistoryPage, HistoryQuery, SettingsView } from '../api/models'
import { accountView, exchange, settingsView } from '../testing/fixtures'
import { quotaRows, useAccountsStore } from './accounts'
import { lines, series } from './dashboard'
import { MAX_ROWS, REFILTER_MS, SETTLE_MS, filtering, merge, useMonitorStore } from './monitor'
import { nextLayer } from './sessions'
import { L1, L2, L3, changedKeys, useSettingsStore } from './settings'

const api = vi.hoisted(() => ({
  history: {
    list: vi.fn<(q: HistoryQuery) => Promise<HistoryPage>>(),
    onExchanges: vi.fn<(cb: (batch: Exchange[]) => void, onGap: () => void) => () => void>(),
  },
  settings: {
    get: vi.fn<() => Promise<SettingsView>>(),
    set: vi.fn<(values: Record<string, unknown>) => Promise<SettingsView>>(),
    reset: vi.fn<(keys: string[]) => Promise<SettingsView>>(),
  },
  accounts: {
    list: vi.fn<() => Promise<AccountView[]>>(),
    add: vi.fn<(input: AccountInput) => Promise<AccountView>>(),
    update: vi.fn<(id: number, input: AccountInput) => Promise<AccountView>>(),
  },
}))
vi.mock('../api/history', () => ({ history: api.history }))
vi.mock('../api/settings', () => ({ settings: api.settings }))
vi.mock('../api/accounts', () => ({ accounts: api.accounts }))

beforeEach(() => {
  setActivePinia(createPinia())
  for (const facade of Object.values(api)) for (const fn of Object.values(facade)) fn.mockReset()
  api.history.onExchanges.mockImplementation(() => () => {})
})

afterEach(() => {
  vi.useRealTimers()
})

async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await Promise.resolve()
}

const page = (exchanges: Exchange[], next = 0): HistoryPage => ({ exchanges, next })

describe('monitor store', () => {
  it('adds new exchanges newest first and keeps a finished record over a late started one', () => {
    const a = exchange({ id: 'a', start: '2026-01-01T10:00:00Z', state: 'started', status: 0 })
    const b = exchange({ id: 'b', start: '2026-01-01T10:00:01Z' })
    let rows = merge([], [a])
    rows = merge(rows, [b, { ...a, state: 'finished', status: 200 }])
    expect(rows.map((e) => [e.id, e.state])).toEqual([
      ['b', 'finished'],
      ['a', 'finished'],
    ])
    rows = merge(rows, [{ ...a, state: 'started' }])
    expect(rows[1]?.state).toBe('finished')
  })

  it('caps the list in memory', () => {
    const many = Array.from({ length: MAX_ROWS + 50 }, (_, i) => exchange({ id: `x${i}`, start: new Date(1_700_000_000_000 + i * 1000).toISOString() }))
    const rows = merge([], many)
    expect(rows).toHaveLength(MAX_ROWS)
    expect(rows[0]?.id).toBe(`x${MAX_ROWS + 49}`) // the newest stay
  })

  it('knows when a filter is on', () => {
    expect(filtering({ status: '', model: '', q: '' })).toBe(false)
    expect(filtering({ status: 'error' })).toBe(true)
    expect(filtering({ since: '2026-01-01T09:00:00Z' })).toBe(true)
  })

  it('without a filter, shows every live exchange without asking the backend again', async () => {
    api.history.list.mockResolvedValue(page([exchange({ id: 'old', start: '2026-01-01T10:00:00Z' })]))
    vi.useFakeTimers()
    const m = useMonitorStore()
    await m.load()
    m.apply([exchange({ id: 'new', start: '2026-01-01T10:00:05Z' })])
    expect(m.rows.map((e) => e.id)).toEqual(['new', 'old'])
    await vi.advanceTimersByTimeAsync(SETTLE_MS * 2)
    expect(api.history.list).toHaveBeenCalledTimes(1)
  })

  it('with a filter on, takes the list from the backend: live rows only update the rows it returned', async () => {
    const shown = exchange({ id: 'shown', state: 'started', status: 0, start: '2026-01-01T10:00:00Z' })
    api.history.list.mockResolvedValueOnce(page([shown]))
    vi.useFakeTimers()
    const m = useMonitorStore()
    await m.setFilter({ model: 'claude-opus-4' })
    expect(api.history.list).toHaveBeenLastCalledWith(expect.objectContaining({ model: 'claude-opus-4', limit: '200' }))

    // A batch: the shown row finished, and an exchange the UI cannot judge arrived.
    const other = exchange({ id: 'other', start: '2026-01-01T10:00:01Z' })
    m.apply([{ ...shown, state: 'finished', status: 200 }, other])
    expect(m.rows.map((e) => [e.id, e.state])).toEqual([['shown', 'finished']])
    expect(api.history.list).toHaveBeenCalledTimes(1)

    // The backend says which match.
    api.history.list.mockResolvedValue(page([other, { ...shown, state: 'finished', status: 200 }]))
    await vi.advanceTimersByTimeAsync(REFILTER_MS)
    await settle()
    expect(api.history.list).toHaveBeenCalledTimes(2)
    expect(api.history.list).toHaveBeenLastCalledWith(expect.objectContaining({ model: 'claude-opus-4', limit: '200' }))
    expect(m.rows.map((e) => e.id)).toEqual(['other', 'shown'])

    // …and once more when the batches have stopped, for records committed late.
    await vi.advanceTimersByTimeAsync(SETTLE_MS)
    expect(api.history.list).toHaveBeenCalledTimes(3)
  })

  it('asks at most once per REFILTER_MS however many batches arrive', async () => {
    api.history.list.mockResolvedValue(page([]))
    vi.useFakeTimers()
    const m = useMonitorStore()
    await m.setFilter({ status: 'error' })
    for (let i = 0; i < 8; i++) {
      m.apply([exchange()])
      await vi.advanceTimersByTimeAsync(REFILTER_MS / 4)
    }
    // A batch every REFILTER_MS/4 for 2 × REFILTER_MS: two refilters, after the first load.
    expect(api.history.list).toHaveBeenCalledTimes(3)
    await vi.advanceTimersByTimeAsync(SETTLE_MS)
    expect(api.history.list).toHaveBeenCalledTimes(4) // the settling one
    await vi.advanceTimersByTimeAsync(SETTLE_MS * 2)
    expect(api.history.list).toHaveBeenCalledTimes(4) // quiet without batches
  })

  it('keeps the rows of later pages when it asks again', async () => {
    const rows = Array.from({ length: 4 }, (_, i) => exchange({ id: `r${i}`, seq: 40 - i * 10 }))
    api.history.list.mockResolvedValueOnce(page(rows.slice(0, 2), 30)).mockResolvedValueOnce(page(rows.slice(2), 0))
    vi.useFakeTimers()
    const m = useMonitorStore()
    await m.setFilter({ status: 'ok' })
    await m.loadMore()
    expect(m.rows.map((e) => e.id)).toEqual(['r0', 'r1', 'r2', 'r3'])
    const fresh = exchange({ id: 'fresh', seq: 50 })
    api.history.list.mockResolvedValueOnce(page([fresh, rows[0] as Exchange], 40))
    m.apply([fresh])
    await vi.advanceTimersByTimeAsync(REFILTER_MS)
    await settle()
    expect(m.rows.map((e) => e.id)).toEqual(['fresh', 'r0', 'r1', 'r2', 'r3'])
  })

  it('holds live updates while paused and applies them on resume', async () => {
    api.history.list.mockResolvedValue(page([exchange({ id: 'old' })]))
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
    api.history.list.mockResolvedValue(page([]))
    const m = useMonitorStore()
    await m.setFilter({ status: 'error', compacted: 'true', q: 'opus' })
    expect(api.history.list).toHaveBeenLastCalledWith(expect.objectContaining({ status: 'error', compacted: 'true', q: 'opus', limit: '200' }))
  })
})

describe('settings store', () => {
  it('refuses thresholds out of order and keeps the draft', async () => {
    api.settings.get.mockResolvedValue(settingsView())
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
    api.settings.get.mockResolvedValue(settingsView())
    const s = useSettingsStore()
    await s.load()
    s.set('proxy.port', 70000)
    s.set('proxy.context_limits', { '*': 3000 })
    api.settings.set.mockRejectedValue(new ApiError('proxy.port: must be between 1 and 65535', 400, { 'proxy.port': 'must be between 1 and 65535' }))
    expect(await s.save()).toBe(false)
    expect(api.settings.set).toHaveBeenCalledWith({ 'proxy.port': 70000, 'proxy.context_limits': { '*': 3000 } })
    expect(s.fieldErrors['proxy.port']).toBe('must be between 1 and 65535')
    expect(s.error).toBe('')

    const saved = settingsView()
    saved.settings.proxy.port = 8050
    api.settings.set.mockResolvedValue(saved)
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
    api.accounts.add.mockRejectedValueOnce(new ApiError('baseURL: must be an http or https URL with a host', 400, { baseURL: 'must be an http or https URL with a host' }))
    const input = { label: 'w', kind: 'anthropic', baseURL: 'ftp://x', key: 'sk-1', models: [], priority: 0, weight: 1 }
    expect(await a.save(0, input)).toBe(false)
    expect(a.fieldErrors.baseURL).toContain('http')
    api.accounts.add.mockResolvedValueOnce(accountView({ id: 7, label: 'w' }))
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
      summaryCalls: 0,
      unpricedRequests: 0,
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
    const row = { key: '', requests: 3, errors: 1, inputTokens: 10, outputTokens: 5, cacheReadTokens: 2, cacheWriteTokens: 1, tokensSaved: 7, summaryCalls: 0, unpricedRequests: 0, cost: { input: 0.5, output: 0.25, cacheRead: 0, cacheWrite: 0, total: 0.75 } }
    const s = series({
      since: '2026-01-01T08:30:00Z',
      until: '2026-01-01T10:15:00Z',
      bucket: 'hour',
      total: row,
      byAccount: [],
      byModel: [],
      byTime: [{ ...row, bucket: '2026-01-01T10:00:00Z' }],
      replays: row,
    })
    expect(s).toEqual({
      x: [1767254400, 1767258000, 1767261600],
      requests: [0, 0, 3],
      errors: [0, 0, 1],
      tokensIn: [0, 0, 13],
      tokensOut: [0, 0, 5],
      saved: [0, 0, 7],
      cost: [0, 0, 0.75],
    })
  })
})
