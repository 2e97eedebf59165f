import { createPinia } from 'pinia'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createApp, nextTick, type App as VueApp } from 'vue'
import App from './App.vue'
import type { ProxyStatus } from './api/models'
import { PROXY_STATUS } from './events'
import { i18n, missingKeys, setLocale } from './i18n'
import { navigate } from './router'
import { claudeCodeUnconfigured, emptySeries, emptyStats, proxyStatus, settingsView, updatesOff } from './testing/fixtures'
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
function mountInWails(initial: ProxyStatus) {
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
  go.History.List.mockImplementation(async () => ({ exchanges: [], next: 0 }))
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
