import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { PROXY_STATUS } from '../events'
import { httpDoor } from './door'
import type { ProxyStatus } from './models'
import { accounts } from './accounts'
import { proxy } from './proxy'
import { backendLogic, running, startBackend, stopped } from './testing/backend'

let backend: Awaited<ReturnType<typeof startBackend>> | undefined

afterEach(async () => {
  await backend?.close()
  backend = undefined
})

// The page is served by the backend, so the API is on the page's own origin.
function servePageFrom(origin: string): void {
  ;(window as unknown as { happyDOM: { setURL(url: string): void } }).happyDOM.setURL(origin + '/')
}

describe('HTTP door, same origin', () => {
  beforeEach(async () => {
    backend = await startBackend(backendLogic())
    servePageFrom(backend.origin)
  })

  it('proxy.status GETs /longhaul/v1/status', async () => {
    await expect(proxy.status()).resolves.toEqual(running)
    expect(backend?.seen).toEqual([{ method: 'GET', url: '/longhaul/v1/status', contentType: undefined, body: '' }])
  })

  it('proxy.setEnabled POSTs {"enabled": false} as JSON and returns the new status', async () => {
    await expect(proxy.setEnabled(false)).resolves.toEqual(stopped)
    await expect(proxy.setEnabled(true)).resolves.toEqual(running)
    expect(backend?.seen.map((s) => [s.method, s.url, s.contentType, JSON.parse(s.body)])).toEqual([
      ['POST', '/longhaul/v1/proxy', 'application/json', { enabled: false }],
      ['POST', '/longhaul/v1/proxy', 'application/json', { enabled: true }],
    ])
  })

  it('a write without a body (DELETE) is still sent as JSON: the backend refuses any other write', async () => {
    await accounts.delete(3).catch(() => undefined)
    expect(backend?.seen.at(-1)).toMatchObject({ method: 'DELETE', url: '/longhaul/v1/accounts/3', contentType: 'application/json' })
  })
})

/** Records what the door does with EventSource; tests play the server side. */
class FakeEventSource extends EventTarget {
  static readonly CONNECTING = 0
  static readonly OPEN = 1
  static readonly CLOSED = 2
  static all: FakeEventSource[] = []
  readyState = 0
  closed = false
  constructor(readonly url: string) {
    super()
    FakeEventSource.all.push(this)
  }
  close(): void {
    this.closed = true
    this.readyState = 2
  }
  open(): void {
    this.readyState = 1
    this.dispatchEvent(new Event('open'))
  }
  send(name: string, data: string): void {
    this.dispatchEvent(new MessageEvent(name, { data }))
  }
  fail(permanently: boolean): void {
    this.readyState = permanently ? 2 : 0
    this.dispatchEvent(new Event('error'))
  }
}

describe('HTTP door events (SSE)', () => {
  beforeEach(() => {
    FakeEventSource.all = []
    vi.stubGlobal('EventSource', FakeEventSource)
  })
  afterEach(() => {
    vi.unstubAllGlobals()
    vi.useRealTimers()
  })

  it('listens to proxy:status on /longhaul/v1/events and closes when the last listener leaves', () => {
    const got: ProxyStatus[] = []
    const offA = proxy.onStatus((s) => got.push(s))
    const offB = proxy.onStatus(() => {})
    expect(FakeEventSource.all).toHaveLength(1)
    const es = FakeEventSource.all[0]!
    expect(new URL(es.url, location.href).pathname).toBe('/longhaul/v1/events')

    es.open()
    es.send(PROXY_STATUS, JSON.stringify(stopped))
    es.send('something:else', JSON.stringify(running))
    expect(got).toEqual([stopped])

    offA()
    expect(es.closed).toBe(false)
    offB()
    expect(es.closed).toBe(true)
  })

  it('ignores malformed event data', () => {
    vi.spyOn(console, 'warn').mockImplementation(() => {})
    const cb = vi.fn()
    const off = httpDoor().on(PROXY_STATUS, cb)
    FakeEventSource.all[0]!.send(PROXY_STATUS, '{not json')
    expect(cb).not.toHaveBeenCalled()
    off()
  })

  it('refetches the status after the stream reconnects', async () => {
    backend = await startBackend(backendLogic())
    servePageFrom(backend.origin)
    const got: ProxyStatus[] = []
    const off = proxy.onStatus((s) => got.push(s))
    const es = FakeEventSource.all[0]!
    es.open()
    expect(backend.seen).toHaveLength(0) // the first open is not a reconnect

    es.fail(false) // the browser reconnects by itself
    es.open()
    await vi.waitFor(() => expect(got).toEqual([running]))
    off()
  })

  it('opens a new stream when the browser gave up on the old one', () => {
    vi.useFakeTimers()
    const cb = vi.fn()
    const door = httpDoor()
    const off = door.on(PROXY_STATUS, cb)
    FakeEventSource.all[0]!.fail(true)
    expect(FakeEventSource.all).toHaveLength(1)
    vi.advanceTimersByTime(5000)
    expect(FakeEventSource.all).toHaveLength(2)
    FakeEventSource.all[1]!.send(PROXY_STATUS, JSON.stringify(running))
    expect(cb).toHaveBeenCalledWith(running)
    off()
    expect(FakeEventSource.all[1]!.closed).toBe(true)
  })
})
