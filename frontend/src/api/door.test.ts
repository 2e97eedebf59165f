import { afterEach, describe, expect, it, vi } from 'vitest'
import { PROXY_STATUS } from '../events'
import { installWails } from '../testing/wails'
import { currentDoor, inWindow } from './door'
import { ApiError } from './errors'
import type { ProxyStatus } from './models'
import { proxy } from './proxy'
import { updates } from './updates'

const running: ProxyStatus = {
  running: true,
  address: '127.0.0.1:8787',
  baseURL: 'http://127.0.0.1:8787',
  error: '',
  accounts: 1,
  requests: 42,
  version: '0.1.0',
  dataDir: '/tmp/longhaul',
}
const stopped: ProxyStatus = { ...running, running: false }

function window_() {
  const w = installWails()
  w.go.Proxy.Status.mockImplementation(async () => running)
  w.go.Proxy.SetEnabled.mockImplementation(async (on: boolean) => (on ? running : stopped))
  return w
}

afterEach(() => {
  delete window.go
  delete window.runtime
})

describe('door detection', () => {
  it('uses HTTP when the Wails bindings are absent', () => {
    expect(inWindow(window)).toBe(false)
    expect(currentDoor().kind).toBe('http')
  })

  it('uses Wails when window.go.app.Proxy is present', () => {
    window_()
    expect(inWindow(window)).toBe(true)
    expect(currentDoor().kind).toBe('wails')
  })

  it('is not fooled by a partial window.go', () => {
    window.go = { app: {} }
    expect(inWindow(window)).toBe(false)
    expect(currentDoor().kind).toBe('http')
  })

  it('keeps one door while the bindings stay the same', () => {
    window_()
    expect(currentDoor()).toBe(currentDoor())
  })
})

describe('Wails door', () => {
  it('proxy.status calls the generated binding of Proxy.Status', async () => {
    const { go } = window_()
    await expect(proxy.status()).resolves.toEqual(running)
    expect(go.Proxy.Status).toHaveBeenCalledTimes(1)
  })

  it('proxy.setEnabled calls Proxy.SetEnabled with the flag', async () => {
    const { go } = window_()
    await expect(proxy.setEnabled(false)).resolves.toEqual(stopped)
    await expect(proxy.setEnabled(true)).resolves.toEqual(running)
    expect(go.Proxy.SetEnabled.mock.calls).toEqual([[false], [true]])
  })

  it('turns a rejected Go error into an ApiError with its text', async () => {
    const { go } = window_()
    go.Proxy.SetEnabled.mockRejectedValueOnce('listen tcp 127.0.0.1:8787: bind: address already in use')
    const err = await proxy.setEnabled(true).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(ApiError)
    expect((err as ApiError).message).toBe('listen tcp 127.0.0.1:8787: bind: address already in use')
  })

  it('onStatus registers one runtime listener and removes it', () => {
    const { runtime, emit, listening } = window_()
    const got: ProxyStatus[] = []
    const off = proxy.onStatus((s) => got.push(s))
    expect(runtime.EventsOnMultiple).toHaveBeenCalledTimes(1)
    expect(runtime.EventsOnMultiple.mock.calls[0]?.[0]).toBe(PROXY_STATUS)
    expect(listening(PROXY_STATUS)).toBe(1)

    emit(PROXY_STATUS, stopped)
    expect(got).toEqual([stopped])

    off()
    expect(listening(PROXY_STATUS)).toBe(0)
    emit(PROXY_STATUS, running)
    expect(got).toEqual([stopped])

    off() // a second call is harmless
    expect(listening(PROXY_STATUS)).toBe(0)
  })

  it('shares one runtime registration among subscribers', () => {
    const { runtime, emit, listening } = window_()
    const a = vi.fn()
    const b = vi.fn()
    const offA = proxy.onStatus(a)
    const offB = proxy.onStatus(b)
    expect(runtime.EventsOnMultiple).toHaveBeenCalledTimes(1)

    emit(PROXY_STATUS, running)
    expect(a).toHaveBeenCalledWith(running)
    expect(b).toHaveBeenCalledWith(running)

    offA()
    expect(listening(PROXY_STATUS)).toBe(1)
    emit(PROXY_STATUS, stopped)
    expect(a).toHaveBeenCalledTimes(1)
    expect(b).toHaveBeenLastCalledWith(stopped)

    offB()
    expect(listening(PROXY_STATUS)).toBe(0)

    proxy.onStatus(a)()
    expect(runtime.EventsOnMultiple).toHaveBeenCalledTimes(2)
    expect(listening(PROXY_STATUS)).toBe(0)
  })

  it('copies through the runtime clipboard', async () => {
    const { runtime } = window_()
    await expect(currentDoor().copyText('hello')).resolves.toBe(true)
    expect(runtime.ClipboardSetText).toHaveBeenCalledWith('hello')
  })

  it('works without a runtime (no events, no crash)', () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {})
    installWails({ runtime: false })
    const off = currentDoor().on(PROXY_STATUS, () => {})
    off()
    expect(warn).toHaveBeenCalled()
  })

  it('restarts only in the window', async () => {
    const { go } = window_()
    go.Updates.Restart.mockResolvedValueOnce()
    expect(updates.canRestart()).toBe(true)
    await updates.restart()
    expect(go.Updates.Restart).toHaveBeenCalledTimes(1)
    delete window.go
    expect(updates.canRestart()).toBe(false)
    await expect(updates.restart()).rejects.toBeInstanceOf(ApiError)
  })
})
