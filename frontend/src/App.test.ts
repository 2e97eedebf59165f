import { createPinia } from 'pinia'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createApp, nextTick, type App as VueApp } from 'vue'
import App from './App.vue'
import type { Exchange, ProxyStatus } from './api/models'
import { PROXY_STATUS } from './events'
import { i18n, missingKeys, setLocale } from './i18n'
import { navigate } from './router'
import { claudeCodeUnconfigured, emptySeries, emptyStats, exchange, proxyStatus, settingsView, updatesOff } from './testing/fixtures'
import { installWails } from './testing/wails'

const running: ProxyStatus = proxyStatus({ requests: 1234, dataDir: '/home/me/.local/share/longhaul' })

let app: VueApp | undefined

afterEach(() => {
  app?.unmount()
  app = undefined
  document.body.innerHTML = ''
  delete window.go
  delete window.runtime
  navigate('monitor')
  setLocale('en')
})

/** Mounts the page inside a fake Wails window. */
function mountInWails(initial: ProxyStatus, exchanges: Exchange[] = []) {
  let state = { ...initial }
  const wails = installWails()
  const { go } = wails
  go.Proxy.Status.mockImplementation(async () => state)
  go.Proxy.SetEnabled.mockImplementation(async (on: boolean) => {
    state = { ...state, running: on }
    wails.emit(PROXY_STATUS, state)
    return state
  })
  go.Settings.Get.mockImplementation(async () => settingsView())
  go.History.List.mockImplementation(async () => ({ exchanges, next: 0 }))
  go.History.Sessions.mockImplementation(async () => [])
  go.History.Stats.mockImplementation(async () => emptyStats())
  go.History.StatsSeries.mockImplementation(async () => emptySeries())
  go.Accounts.List.mockImplementation(async () => [])
  go.Updates.Status.mockImplementation(async () => updatesOff())
  go.Clients.ClaudeCodeStatus.mockImplementation(async () => claudeCodeUnconfigured())
  const el = document.createElement('div')
  document.body.appendChild(el)
  app = createApp(App).use(createPinia()).use(i18n)
  app.mount(el)
  const $ = (id: string) => el.querySelector<HTMLElement>(`[data-testid="${id}"]`)
  const emit = (s: ProxyStatus) => wails.emit(PROXY_STATUS, s)
  return { el, $, go, wails, emit }
}

describe('App', () => {
  it('shows the status, the address and the accounts hint', async () => {
    const { $ } = mountInWails(running)
    await vi.waitFor(() => expect($('proxy-state')?.textContent).toBe('Running'))
    expect($('proxy-address')?.textContent).toBe('http://127.0.0.1:8787')
    expect($('proxy-toggle')?.getAttribute('aria-pressed')).toBe('true')
    expect($('proxy-error')).toBeNull()
    expect($('accounts-hint')?.textContent).toContain('No upstream account yet')
    expect($('app-version')?.textContent).toBe('v0.1.0')
  })

  it('shows the client snippets on the connect page', async () => {
    const { el, $ } = mountInWails(running)
    navigate('connect')
    await vi.waitFor(() => expect($('connect-card')?.querySelectorAll('pre').length).toBeGreaterThan(3))
    const code = [...el.querySelectorAll('[data-testid="connect-card"] pre')].map((p) => p.textContent ?? '')
    expect(code[0]).toBe('export ANTHROPIC_BASE_URL=http://127.0.0.1:8787\nexport ANTHROPIC_AUTH_TOKEN=longhaul\nclaude')
    expect(JSON.parse(code[1] ?? '')).toEqual({ env: { ANTHROPIC_BASE_URL: 'http://127.0.0.1:8787', ANTHROPIC_AUTH_TOKEN: 'longhaul' } })
    expect(code.some((c) => c.includes('/longhaul/v1/sessions/$sid/pressure'))).toBe(true)
  })

  it('toggles the proxy off and on', async () => {
    const { $, go } = mountInWails(running)
    await vi.waitFor(() => expect($('proxy-state')?.textContent).toBe('Running'))
    $('proxy-toggle')?.click()
    await nextTick()
    expect(go.Proxy.SetEnabled).toHaveBeenCalledWith(false)
    await vi.waitFor(() => expect($('proxy-state')?.textContent).toBe('Stopped'))
    await vi.waitFor(() => expect($('proxy-toggle')?.hasAttribute('disabled')).toBe(false))
    expect($('proxy-toggle')?.getAttribute('aria-pressed')).toBe('false')
    $('proxy-toggle')?.click()
    await vi.waitFor(() => expect($('proxy-state')?.textContent).toBe('Running'))
    expect(go.Proxy.SetEnabled.mock.calls).toEqual([[false], [true]])
  })

  it('follows pushed status and shows its error', async () => {
    const { $, emit } = mountInWails(running)
    await vi.waitFor(() => expect($('proxy-state')?.textContent).toBe('Running'))
    emit({ ...running, running: false, error: 'port in use', accounts: 2 })
    await nextTick()
    expect($('proxy-state')?.textContent).toBe('Stopped')
    expect($('proxy-error')?.textContent).toContain('port in use')
    expect($('accounts-hint')).toBeNull()
  })

  it('renders every page in Chinese without a missing key', async () => {
    const { el, $, go } = mountInWails(running)
    // The language is a setting: the settings page reads it and switches.
    const zh = settingsView()
    zh.settings.app.language = 'zh-CN'
    go.Settings.Get.mockImplementation(async () => zh)
    for (const page of ['settings', 'monitor', 'sessions', 'dashboard', 'accounts', 'connect'] as const) {
      navigate(page)
      await vi.waitFor(() => expect(el.querySelector('main')?.getAttribute('data-page')).toBe(page))
      await new Promise((r) => setTimeout(r, 20))
    }
    expect($('proxy-state')?.textContent).toBe('运行中')
    expect(missingKeys).toEqual([])
  })

  it('badges a monitor row offering too many tools and marks a summary call as its parent’s', async () => {
    const parent = exchange({ id: 'lh_p', tools: 31, toolTokens: 9000, layers: ['Layer-3'] })
    const child = exchange({ id: 'lh_c', parentID: 'lh_p', route: 'summary', accountName: 'home' })
    const few = exchange({ id: 'lh_f', tools: 30 })
    const { el, go } = mountInWails(running, [child, parent, few])
    await vi.waitFor(() => expect(el.querySelectorAll('[data-testid=monitor-row]')).toHaveLength(3))
    const row = (id: string) => el.querySelector(`[data-testid=monitor-row][data-id=${id}]`)
    expect(row('lh_p')?.querySelector('[data-testid=tools-badge]')?.getAttribute('data-warning')).toBe('true')
    expect(row('lh_f')?.querySelector('[data-testid=tools-badge]')?.getAttribute('data-warning')).toBe('false')
    expect(row('lh_c')?.getAttribute('data-parent')).toBe('lh_p')
    expect(row('lh_p')?.querySelector('[data-testid=row-parent]')).toBeNull()
    row('lh_c')?.querySelector<HTMLElement>('[data-testid=row-parent]')?.click()
    await vi.waitFor(() => expect(el.querySelector('main')?.getAttribute('data-page')).toBe('request'))
    expect(go.History.Detail).toHaveBeenCalledWith('lh_p')
  })

  it('badges a live row’s compaction steps but not the model map or the translation', async () => {
    const step = (layer: string, tokensBefore: number, tokensAfter: number) =>
      ({ layer, tokensBefore, tokensAfter, rawBefore: 0, rawAfter: 0, items: 1, durationNs: 0, cacheHit: false, rewrite: 0 })
    const compacted = exchange({ id: 'lh_l', layers: ['Layer-1'], tokensSaved: 2000, compaction: [step('Layer-1', 5000, 3000), step('model-map', 0, 0), step('translate', 0, 0)] })
    const mapped = exchange({ id: 'lh_m', compaction: [step('model-map', 0, 0)] })
    const { el } = mountInWails(running, [compacted, mapped])
    await vi.waitFor(() => expect(el.querySelectorAll('[data-testid=monitor-row]')).toHaveLength(2))
    const badges = (id: string) =>
      [...el.querySelectorAll(`[data-testid=monitor-row][data-id=${id}] [data-testid=layer-badge]`)].map((b) => b.getAttribute('data-layer'))
    expect(badges('lh_l')).toEqual(['Layer-1'])
    expect(badges('lh_m')).toEqual([])
  })

  it('badges a live row’s step that waited for the cache as waiting, with no saving, and a dedupe step by name', async () => {
    const step = (layer: string, tokensBefore: number, tokensAfter: number, deferred = '') =>
      ({ layer, tokensBefore, tokensAfter, rawBefore: 0, rawAfter: 0, items: 1, durationNs: 0, cacheHit: false, rewrite: 0, deferred })
    const row = exchange({
      id: 'lh_d',
      layers: ['dedupe'],
      compaction: [step('dedupe', 9000, 5000), step('Layer-2', 5000, 5000, 'deferred: cache warm, 3:12 left; would save 2k tokens a turn and re-write 17k once')],
    })
    const { el } = mountInWails(running, [row])
    await vi.waitFor(() => expect(el.querySelectorAll('[data-testid=monitor-row] [data-testid=layer-badge]')).toHaveLength(2))
    const badges = [...el.querySelectorAll('[data-testid=monitor-row] [data-testid=layer-badge]')].map((b) => [
      b.getAttribute('data-layer'),
      b.getAttribute('data-deferred'),
      b.textContent?.replace(/\s+/g, ' ').trim(),
      b.getAttribute('title'),
    ])
    expect(badges).toEqual([
      ['dedupe', null, 'Dedupe −4K', 'Dedupe · duplicate results'],
      ['Layer-2', 'true', 'L2 ⏸', 'Layer 2 · thinking · waited for the cache'],
    ])
  })

  it('marks a replay in the monitor with a link to the request it re-sent', async () => {
    const original = exchange({ id: 'lh_o', layers: ['Layer-1'] })
    const replay = exchange({ id: 'lh_r', replayOf: 'lh_o' })
    const { el, go } = mountInWails(running, [replay, original])
    await vi.waitFor(() => expect(el.querySelectorAll('[data-testid=monitor-row]')).toHaveLength(2))
    const row = (id: string) => el.querySelector(`[data-testid=monitor-row][data-id=${id}]`)
    expect(row('lh_r')?.getAttribute('data-replay-of')).toBe('lh_o')
    expect(row('lh_r')?.querySelector('[data-testid=row-replay-of]')?.getAttribute('title')).toBe('Replay of request lh_o')
    expect(row('lh_o')?.querySelector('[data-testid=row-replay-of]')).toBeNull()
    row('lh_r')?.querySelector<HTMLElement>('[data-testid=row-replay-of]')?.click()
    await vi.waitFor(() => expect(el.querySelector('main')?.getAttribute('data-page')).toBe('request'))
    expect(go.History.Detail).toHaveBeenCalledWith('lh_o')
  })

  it('shows the tools a session offered and the ones it called', async () => {
    const { el, go } = mountInWails(running)
    const session = {
      id: 'sess-1', client: 'claude-cli/2.1', firstSeen: '2026-01-01T12:00:00Z', lastSeen: '2026-01-01T12:05:00Z',
      requests: 4, errors: 0, lastModel: 'claude-sonnet-4-5', lastAccount: 'work', boundAccount: '',
      contextLimit: 200000, tokens: 1000, pressure: 0.005, layersFired: [], compactions: 0, tokensSaved: 0,
      inputTokens: 10, outputTokens: 5, cacheReadTokens: 0, cacheWriteTokens: 0,
      tools: 40, toolTokens: 12000, toolsCalled: ['read_file', 'bash'], summaryCalls: 1,
      unpricedRequests: 0, models: [], replays: 0,
    }
    go.History.Sessions.mockImplementation(async () => [session])
    navigate('sessions')
    await vi.waitFor(() => expect(el.querySelector('[data-testid=session-tools] [data-testid=tools-badge]')?.getAttribute('data-warning')).toBe('true'))
    const called = [...el.querySelectorAll('[data-testid=session-tools-called] code')].map((c) => c.textContent)
    expect(called).toEqual(['read_file', 'bash'])
  })

  it('shows each request’s estimated cost and input split in the monitor, in full on its page', async () => {
    const cost = { input: 0.036, output: 0.03, cacheRead: 0.042, cacheWrite: 0.01125, total: 0.11925 }
    const priced = exchange({ id: 'lh_$', inputTokens: 12000, outputTokens: 2000, cacheReadTokens: 140000, cacheWriteTokens: 3000, cost })
    const unpriced = exchange({ id: 'lh_u', modelSent: 'my-local-model' })
    const started = exchange({ id: 'lh_s', state: 'started' })
    const { el, go } = mountInWails(running, [priced, unpriced, started])
    await vi.waitFor(() => expect(el.querySelectorAll('[data-testid=monitor-row]')).toHaveLength(3))
    const cell = (id: string, what: string) => el.querySelector<HTMLElement>(`[data-testid=monitor-row][data-id="${id}"] [data-testid=${what}]`)
    expect(cell('lh_$', 'row-cost')?.textContent).toBe('$0.12')
    expect(cell('lh_$', 'row-cost')?.title).toContain('input $0.036 · output $0.030 · cache read $0.042 · cache write $0.011')
    expect(cell('lh_$', 'row-tokens')?.title).toBe('input: 12K new · 140K cached · 3K written · output 2K')
    expect(cell('lh_u', 'row-cost')?.textContent).toBe('–')
    expect(cell('lh_s', 'row-cost')?.textContent).toBe('')

    go.History.Detail.mockImplementation(async () => ({ ...priced, attempts: [], compaction: [] }))
    navigate('request', 'lh_$')
    await vi.waitFor(() => expect(el.querySelector('[data-testid=request-cost]')?.textContent).toContain('$0.12'))
    expect(el.querySelector('[data-testid=request-input-split]')?.textContent).toBe('12,000 new · 140,000 cached · 3,000 written')
    expect(el.querySelector('[data-testid=request-cost]')?.textContent).toContain('cache read $0.042')
  })

  it('shows a session’s cost, input split, models and replays apart, and the dashboard’s total cost and replays apart', async () => {
    const { el, $, go } = mountInWails(running)
    const cost = (total: number) => ({ input: total / 2, output: total / 2, cacheRead: 0, cacheWrite: 0, total })
    go.History.Sessions.mockImplementation(async () => [{
      id: 'sess-1', client: 'claude-cli/2.1', firstSeen: '2026-01-01T12:00:00Z', lastSeen: '2026-01-01T12:05:00Z',
      requests: 3, errors: 0, lastModel: 'claude-sonnet-4-5', lastAccount: 'work', boundAccount: '',
      contextLimit: 200000, tokens: 1000, pressure: 0.005, layersFired: [], compactions: 0, tokensSaved: 0,
      inputTokens: 12000, outputTokens: 500, cacheReadTokens: 140000, cacheWriteTokens: 3000,
      tools: 0, toolTokens: 0, toolsCalled: [], summaryCalls: 0, replays: 2,
      cost: cost(2.5), unpricedRequests: 1,
      models: [
        { model: 'claude-sonnet-4-5-20250929', requests: 2, inputTokens: 12000, outputTokens: 500, cacheReadTokens: 140000, cacheWriteTokens: 3000, cost: cost(2.5) },
        { model: 'my-local-model', requests: 1, inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
      ],
    }])
    navigate('sessions')
    await vi.waitFor(() => expect($('session-cost')?.textContent).toContain('$2.50'))
    expect($('session-replays')?.textContent).toBe('↻ replays: 2')
    expect($('session-unpriced')).not.toBeNull()
    expect($('session-input-split')?.textContent).toBe('12K new · 140K cached · 3K written')
    const models = [...el.querySelectorAll('[data-testid=session-model]')].map((m) => m.textContent)
    expect(models).toEqual(['claude-sonnet-4-5-20250929 · 2 req. · $2.50', 'my-local-model · 1 req. · –'])

    const stats = emptyStats()
    stats.total = { ...stats.total, requests: 4, inputTokens: 1000, cacheReadTokens: 90000, cacheWriteTokens: 500, cost: cost(0.0042), unpricedRequests: 2 }
    stats.replays = { ...stats.replays, requests: 3, cost: cost(0.75) }
    go.History.Stats.mockImplementation(async () => stats)
    navigate('dashboard')
    await vi.waitFor(() => expect($('total-cost')?.textContent).toBe('$0.0042'))
    expect($('total-unpriced')?.textContent).toBe('2 requests of models without a price not included')
    expect($('total-input-split')?.textContent).toBe('1K new · 90K cached · 500 written')
    expect($('total-replays')?.textContent).toBe('↻ replays not counted: 3 ($0.75)')
    expect($('total-requests')?.textContent).toBe('4')
  })

  it('stops listening when unmounted', async () => {
    const { $, wails } = mountInWails(running)
    await vi.waitFor(() => expect($('proxy-state')).not.toBeNull())
    expect(wails.runtime.EventsOnMultiple).toHaveBeenCalledWith(PROXY_STATUS, expect.any(Function), -1)
    expect(wails.listening(PROXY_STATUS)).toBe(1)
    app?.unmount()
    app = undefined
    expect(wails.listening(PROXY_STATUS)).toBe(0)
  })
})
