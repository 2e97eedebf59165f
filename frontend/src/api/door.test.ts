import { afterEach, describe, expect, it, vi } from 'vitest'
import { PROXY_STATUS } from '../events'
import { isWails, wailsDoor, type WailsRuntime, type WailsSystem } from './door'
import { currentDoor, getStatus, onStatus, setProxyEnabled } from './system'
import { ApiError, type ProxyStatus } from './types'

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

/** A stand-in for what Wails v2 injects: window.go.app.System and window.runtime. */
function installWails() {
  const handlers = new Map<string, (...data: unknown[]) => void>()
  const system = {
    Status: vi.fn<WailsSystem['Status']>(async () => running),
    SetProxyEnabled: vi.fn<WailsSystem['SetProxyEnabled']>(async (on: boolean) => (on ? running : stopped)),
  }
  const runtime = {
    EventsOn: vi.fn((name: string, cb: (...data: unknown[]) => void) => {
      handlers.set(name, cb)
      return () => handlers.delete(name)
    }),
    EventsOff: vi.fn((name: string) => {
      handlers.delete(name)
    }),
    ClipboardSetText: vi.fn(async () => true),
  } satisfies WailsRuntime
  window.go = { app: { System: system } }
  window.runtime = runtime
  const emit = (name: string, ...data: unknown[]) => handlers.get(name)?.(...data)
  return { system, runtime, handlers, emit }
}

afterEach(() => {
  delete window.go
  delete window.runtime
})

describe('door detection', () => {
  it('uses HTTP when the Wails bindings are absent', () => {
    expect(isWails(window)).toBe(false)
    expect(currentDoor().kind).toBe('http')
  })

  it('uses Wails when window.go.app.System is present', () => {
    installWails()
    expect(isWails(window)).toBe(true)
    expect(currentDoor().kind).toBe('wails')
  })

  it('is not fooled by a partial window.go', () => {
    window.go = { app: {} }
    expect(isWails(window)).toBe(false)
    expect(currentDoor().kind).toBe('http')
  })

  it('keeps one door while the bindings stay the same', () => {
    installWails()
    expect(currentDoor()).toBe(currentDoor())
  })
})

describe('Wails door', () => {
  it('getStatus calls System.Status', async () => {
    const { system } = installWails()
    await expect(getStatus()).resolves.toEqual(running)
    expect(system.Status).toHaveBeenCalledTimes(1)
  })

  it('setProxyEnabled calls System.SetProxyEnabled with the flag', async () => {
    const { system } = installWails()
    await expect(setProxyEnabled(false)).resolves.toEqual(stopped)
    await expect(setProxyEnabled(true)).resolves.toEqual(running)
    expect(system.SetProxyEnabled.mock.calls).toEqual([[false], [true]])
  })

  it('turns a rejected Go error into an ApiError with its text', async () => {
    const { system } = installWails()
    system.SetProxyEnabled.mockRejectedValueOnce('listen tcp 127.0.0.1:8787: bind: address already in use')
    const err = await setProxyEnabled(true).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(ApiError)
    expect((err as ApiError).message).toBe('listen tcp 127.0.0.1:8787: bind: address already in use')
  })

  it('fills fields the backend left out', async () => {
    const { system } = installWails()
    system.Status.mockResolvedValueOnce({ running: true, baseURL: 'http://127.0.0.1:1' })
    await expect(getStatus()).resolves.toEqual({
      running: true,
      address: '',
      baseURL: 'http://127.0.0.1:1',
      error: '',
      accounts: 0,
      requests: 0,
      version: '',
      dataDir: '',
    })
  })

  it('onStatus pairs runtime.EventsOn and EventsOff', () => {
    const { runtime, emit } = installWails()
    const got: ProxyStatus[] = []
    const off = onStatus((s) => got.push(s))
    expect(runtime.EventsOn).toHaveBeenCalledTimes(1)
    expect(runtime.EventsOn.mock.calls[0]?.[0]).toBe(PROXY_STATUS)

    emit(PROXY_STATUS, stopped)
    expect(got).toEqual([stopped])

    off()
    expect(runtime.EventsOff).toHaveBeenCalledWith(PROXY_STATUS)
    emit(PROXY_STATUS, running)
    expect(got).toEqual([stopped])

    off() // a second call is harmless
    expect(runtime.EventsOff).toHaveBeenCalledTimes(1)
  })

  it('shares one runtime registration among subscribers', () => {
    const { runtime, emit } = installWails()
    const a = vi.fn()
    const b = vi.fn()
    const offA = onStatus(a)
    const offB = onStatus(b)
    expect(runtime.EventsOn).toHaveBeenCalledTimes(1)

    emit(PROXY_STATUS, running)
    expect(a).toHaveBeenCalledWith(running)
    expect(b).toHaveBeenCalledWith(running)

    offA()
    expect(runtime.EventsOff).not.toHaveBeenCalled()
    emit(PROXY_STATUS, stopped)
    expect(a).toHaveBeenCalledTimes(1)
    expect(b).toHaveBeenLastCalledWith(stopped)

    offB()
    expect(runtime.EventsOff).toHaveBeenCalledTimes(1)

    onStatus(a)()
    expect(runtime.EventsOn).toHaveBeenCalledTimes(2)
    expect(runtime.EventsOff).toHaveBeenCalledTimes(2)
  })

  it('copies through the runtime clipboard', async () => {
    const { runtime } = installWails()
    await expect(currentDoor().copyText('hello')).resolves.toBe(true)
    expect(runtime.ClipboardSetText).toHaveBeenCalledWith('hello')
  })

  it('works without a runtime (no events, no crash)', () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {})
    const door = wailsDoor({ Status: async () => running, SetProxyEnabled: async () => running }, undefined)
    const off = door.on(PROXY_STATUS, () => {})
    off()
    expect(warn).toHaveBeenCalled()
  })
})
