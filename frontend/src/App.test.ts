import { createPinia } from 'pinia'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createApp, nextTick, type App as VueApp } from 'vue'
import App from './App.vue'
import type { ProxyStatus } from './api/types'
import { PROXY_STATUS } from './events'
import { i18n, missingKeys, setLocale } from './i18n'
import { navigate } from './router'
import { settingsView } from './testing/fixtures'

const running: ProxyStatus = {
  running: true,
  address: '127.0.0.1:8787',
  baseURL: 'http://127.0.0.1:8787',
  error: '',
  accounts: 0,
  requests: 1234,
  version: '0.1.0',
  dataDir: '/home/me/.local/share/longhaul',
}

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
function mountInWails(initial: ProxyStatus) {
  let state = { ...initial }
  const handlers = new Map<string, (...data: unknown[]) => void>()
  const system = {
    Status: vi.fn(async () => state),
    SetProxyEnabled: vi.fn(async (on: boolean) => {
      state = { ...state, running: on }
      handlers.get(PROXY_STATUS)?.(state)
      return state
    }),
    Settings: vi.fn(async () => settingsView()),
    History: vi.fn(async () => ({ exchanges: [], next: 0 })),
    HistorySessions: vi.fn(async () => []),
    HistoryStats: vi.fn(async () => ({
      since: '',
      until: '',
      bucket: 'hour',
      total: { key: '', requests: 0, errors: 0, inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, tokensSaved: 0 },
      byAccount: [],
      byModel: [],
      byTime: [],
    })),
    HistoryStatsSeries: vi.fn(async () => ({ since: '', until: '', by: 'account', bucket: 'hour', rows: [] })),
    Accounts: vi.fn(async () => []),
    UpdateStatus: vi.fn(async () => ({ state: 'off', message: 'no release source in this build', current: 'dev', signed: false })),
    ClaudeCodeStatus: vi.fn(async () => ({ path: '/home/me/.claude/settings.json', exists: false, configured: false, baseURL: '', backup: '' })),
  }
  const runtime = {
    EventsOn: vi.fn((name: string, cb: (...data: unknown[]) => void) => void handlers.set(name, cb)),
    EventsOff: vi.fn((name: string) => void handlers.delete(name)),
  }
  window.go = { app: { System: system } }
  window.runtime = runtime
  const el = document.createElement('div')
  document.body.appendChild(el)
  app = createApp(App).use(createPinia()).use(i18n)
  app.mount(el)
  const $ = (id: string) => el.querySelector<HTMLElement>(`[data-testid="${id}"]`)
  const emit = (s: ProxyStatus) => handlers.get(PROXY_STATUS)?.(s)
  return { el, $, system, runtime, emit }
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
    const { $, system } = mountInWails(running)
    await vi.waitFor(() => expect($('proxy-state')?.textContent).toBe('Running'))
    $('proxy-toggle')?.click()
    await nextTick()
    expect(system.SetProxyEnabled).toHaveBeenCalledWith(false)
    await vi.waitFor(() => expect($('proxy-state')?.textContent).toBe('Stopped'))
    await vi.waitFor(() => expect($('proxy-toggle')?.hasAttribute('disabled')).toBe(false))
    expect($('proxy-toggle')?.getAttribute('aria-pressed')).toBe('false')
    $('proxy-toggle')?.click()
    await vi.waitFor(() => expect($('proxy-state')?.textContent).toBe('Running'))
    expect(system.SetProxyEnabled.mock.calls).toEqual([[false], [true]])
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
    const { el, $, system } = mountInWails(running)
    // The language is a setting: the settings page reads it and switches.
    const zh = settingsView()
    zh.settings.app.language = 'zh-CN'
    system.Settings.mockImplementation(async () => zh)
    for (const page of ['settings', 'monitor', 'sessions', 'dashboard', 'accounts', 'connect'] as const) {
      navigate(page)
      await vi.waitFor(() => expect(el.querySelector('main')?.getAttribute('data-page')).toBe(page))
      await new Promise((r) => setTimeout(r, 20))
    }
    expect($('proxy-state')?.textContent).toBe('运行中')
    expect(missingKeys).toEqual([])
  })

  it('stops listening when unmounted', async () => {
    const { $, runtime } = mountInWails(running)
    await vi.waitFor(() => expect($('proxy-state')).not.toBeNull())
    expect(runtime.EventsOn).toHaveBeenCalledWith(PROXY_STATUS, expect.any(Function))
    app?.unmount()
    app = undefined
    expect(runtime.EventsOff).toHaveBeenCalledWith(PROXY_STATUS)
  })
})
