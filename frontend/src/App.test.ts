import { createPinia } from 'pinia'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createApp, nextTick, type App as VueApp } from 'vue'
import App from './App.vue'
import type { ProxyStatus } from './api/types'
import { PROXY_STATUS } from './events'

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
  }
  const runtime = {
    EventsOn: vi.fn((name: string, cb: (...data: unknown[]) => void) => void handlers.set(name, cb)),
    EventsOff: vi.fn((name: string) => void handlers.delete(name)),
  }
  window.go = { app: { System: system } }
  window.runtime = runtime
  const el = document.createElement('div')
  document.body.appendChild(el)
  app = createApp(App).use(createPinia())
  app.mount(el)
  const $ = (id: string) => el.querySelector<HTMLElement>(`[data-testid="${id}"]`)
  const emit = (s: ProxyStatus) => handlers.get(PROXY_STATUS)?.(s)
  return { el, $, system, runtime, emit }
}

describe('App', () => {
  it('shows the status, the address, the accounts hint and the snippets', async () => {
    const { el, $ } = mountInWails(running)
    await vi.waitFor(() => expect($('proxy-state')?.textContent).toBe('Running'))
    expect($('proxy-address')?.textContent).toBe('http://127.0.0.1:8787')
    expect($('proxy-toggle')?.getAttribute('aria-pressed')).toBe('true')
    expect($('proxy-error')).toBeNull()
    expect($('accounts-hint')?.textContent).toContain('longhaul account add --base-url https://api.anthropic.com --key sk-ant-...')
    expect($('app-version')?.textContent).toBe('v0.1.0')
    const code = [...el.querySelectorAll('[data-testid="connect-card"] pre')].map((p) => p.textContent)
    expect(code).toEqual([
      'export ANTHROPIC_BASE_URL=http://127.0.0.1:8787',
      '{\n  "env": {\n    "ANTHROPIC_BASE_URL": "http://127.0.0.1:8787"\n  }\n}',
      'import anthropic\n\nclient = anthropic.Anthropic(base_url="http://127.0.0.1:8787")',
    ])
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

  it('stops listening when unmounted', async () => {
    const { $, runtime } = mountInWails(running)
    await vi.waitFor(() => expect($('proxy-state')).not.toBeNull())
    expect(runtime.EventsOn).toHaveBeenCalledTimes(1)
    app?.unmount()
    app = undefined
    expect(runtime.EventsOff).toHaveBeenCalledWith(PROXY_STATUS)
  })
})
