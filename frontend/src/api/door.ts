// The two doors into the backend. Everything above src/api/ sees only the Door interface.
//
//  - Wails door: inside the desktop window, Wails v2 injects the bound Go methods on
//    window.go.<package>.<Struct> and its runtime on window.runtime.
//  - HTTP door: in a browser against the headless backend on the same origin: JSON over HTTP
//    plus Server-Sent Events.

import { strings } from '../strings'
import { ApiError, errorMessage } from './types'

/** The bound app.System facade, as Wails v2 injects it. */
export interface WailsSystem {
  Status(): Promise<unknown>
  SetProxyEnabled(on: boolean): Promise<unknown>
}

/** The part of the Wails v2 runtime (window.runtime) that the UI uses. */
export interface WailsRuntime {
  EventsOn(name: string, cb: (...data: unknown[]) => void): unknown
  EventsOff(name: string, ...additional: string[]): void
  ClipboardSetText?(text: string): Promise<boolean>
}

declare global {
  interface Window {
    go?: { app?: { System?: WailsSystem } }
    runtime?: WailsRuntime
  }
}

export type Unsubscribe = () => void

export interface Door {
  readonly kind: 'wails' | 'http'
  /** Calls a backend method; rejects with ApiError. */
  call(method: 'Status'): Promise<unknown>
  call(method: 'SetProxyEnabled', on: boolean): Promise<unknown>
  /** Listens to a backend event; the callback gets the event payload. */
  on(event: string, cb: (payload: unknown) => void): Unsubscribe
  /**
   * Called when the live event stream comes back after a break (events may have been missed),
   * so the caller can fetch fresh state. The Wails door never breaks.
   */
  onReconnect(cb: () => void): Unsubscribe
  /** Puts text on the system clipboard if this door has a native way to; false otherwise. */
  copyText(text: string): Promise<boolean>
}

/** isWails reports whether the UI runs inside the Wails window (the Go bindings are present). */
export function isWails(w: Window | undefined = globalThis.window): boolean {
  return w?.go?.app?.System !== undefined
}

// Fan-out: one registration per event name with the backend, any number of local listeners.
// The backend registration is removed when the last local listener leaves, so EventsOn/EventsOff
// (and the SSE listeners) stay paired however many components subscribe.
class Listeners {
  private readonly byName = new Map<string, Set<(payload: unknown) => void>>()

  /** add returns true when this is the first listener for name. */
  add(name: string, cb: (payload: unknown) => void): boolean {
    let set = this.byName.get(name)
    const first = set === undefined
    if (set === undefined) {
      set = new Set()
      this.byName.set(name, set)
    }
    set.add(cb)
    return first
  }

  /** remove returns true when the last listener for name left. */
  remove(name: string, cb: (payload: unknown) => void): boolean {
    const set = this.byName.get(name)
    if (set === undefined || !set.delete(cb)) return false
    if (set.size > 0) return false
    this.byName.delete(name)
    return true
  }

  emit(name: string, payload: unknown): void {
    const set = this.byName.get(name)
    if (set === undefined) return
    for (const cb of [...set]) {
      try {
        cb(payload)
      } catch (err) {
        console.error(`listener for ${name} failed`, err)
      }
    }
  }

  get size(): number {
    return this.byName.size
  }
}

function once(fn: () => void): Unsubscribe {
  let done = false
  return () => {
    if (done) return
    done = true
    fn()
  }
}

// ---------------------------------------------------------------------------------------------
// Wails door

export function wailsDoor(system: WailsSystem, runtime: WailsRuntime | undefined): Door {
  const listeners = new Listeners()

  async function call(method: keyof WailsSystem, ...args: [] | [boolean]): Promise<unknown> {
    try {
      // Bound Go methods returning (T, error) reject with the error text.
      return await (system[method] as (...a: unknown[]) => Promise<unknown>)(...args)
    } catch (err) {
      throw new ApiError(errorMessage(err))
    }
  }

  return {
    kind: 'wails',
    call: call as Door['call'],
    on(event, cb) {
      if (runtime === undefined) {
        console.warn(`Wails runtime missing; not listening to ${event}`)
        return () => {}
      }
      if (listeners.add(event, cb)) {
        runtime.EventsOn(event, (...data: unknown[]) => listeners.emit(event, data[0]))
      }
      return once(() => {
        if (listeners.remove(event, cb)) runtime.EventsOff(event)
      })
    },
    onReconnect() {
      return () => {}
    },
    async copyText(text) {
      if (runtime?.ClipboardSetText === undefined) return false
      try {
        return await runtime.ClipboardSetText(text)
      } catch {
        return false
      }
    },
  }
}

// ---------------------------------------------------------------------------------------------
// HTTP door

/** Paths of the headless backend's HTTP API (same origin as the page). */
export const httpPaths = {
  status: '/longhaul/v1/status',
  proxy: '/longhaul/v1/proxy',
  events: '/longhaul/v1/events',
} as const

export interface HttpDoorOptions {
  /** Prefix for the API paths, e.g. "http://127.0.0.1:8080". Empty means the page's origin. */
  base?: string
  /** If nil, globalThis.fetch is used. */
  fetch?: typeof fetch
  /** If nil, globalThis.EventSource is used. */
  EventSource?: typeof EventSource
}

export function httpDoor(opts: HttpDoorOptions = {}): Door {
  const base = opts.base ?? ''
  const doFetch = opts.fetch ?? ((input, init) => globalThis.fetch(input, init))
  const listeners = new Listeners()
  const reconnectListeners = new Set<() => void>()
  let source: EventSource | undefined

  async function request(method: 'GET' | 'POST', path: string, body?: unknown): Promise<unknown> {
    const headers: Record<string, string> = { Accept: 'application/json' }
    const init: RequestInit = { method, headers, cache: 'no-store' }
    if (body !== undefined) {
      // Always JSON: the backend can refuse other content types, which keeps plain HTML forms
      // on other sites from posting to it.
      headers['Content-Type'] = 'application/json'
      init.body = JSON.stringify(body)
    }
    let res: Response
    try {
      res = await doFetch(base + path, init)
    } catch (err) {
      throw new ApiError(strings.errors.unreachable(errorMessage(err)))
    }
    const text = await res.text().catch(() => '')
    let data: unknown = undefined
    if (text !== '') {
      try {
        data = JSON.parse(text)
      } catch {
        data = undefined
      }
    }
    if (!res.ok) {
      throw new ApiError(httpErrorMessage(res, data, text), res.status)
    }
    if (data === undefined) {
      throw new ApiError(strings.errors.badReply(res.status), res.status)
    }
    return data
  }

  // One EventSource for all events, opened with the first listener and closed with the last.
  // It reconnects by itself after a network break; if the server answers with an error instead
  // (the browser then gives up for good), a new one is opened after retryMs.
  const domHandlers = new Map<string, (e: Event) => void>()
  const retryMs = 5000
  const closed = 2 // EventSource.CLOSED
  let retryTimer: ReturnType<typeof setTimeout> | undefined
  let reopening = false

  function open(): void {
    const ES = opts.EventSource ?? globalThis.EventSource
    if (ES === undefined) {
      console.warn('EventSource unavailable; live updates off')
      return
    }
    const es = new ES(base + httpPaths.events)
    let openedBefore = false
    es.addEventListener('open', () => {
      // Every open after the first (or after a retry) means events may have been missed.
      if (openedBefore || reopening) for (const cb of [...reconnectListeners]) cb()
      openedBefore = true
      reopening = false
    })
    es.addEventListener('error', () => {
      if (es.readyState !== closed || source !== es) return
      source = undefined
      reopening = true
      retryTimer = setTimeout(() => {
        retryTimer = undefined
        if (source === undefined && domHandlers.size > 0) open()
      }, retryMs)
    })
    for (const [event, handler] of domHandlers) es.addEventListener(event, handler)
    source = es
  }

  function listen(event: string): void {
    const handler = (e: Event): void => {
      const data = (e as MessageEvent).data
      let payload: unknown
      try {
        payload = JSON.parse(String(data))
      } catch {
        console.warn(`ignoring ${event} event with malformed data`, data)
        return
      }
      listeners.emit(event, payload)
    }
    domHandlers.set(event, handler)
    if (source !== undefined) source.addEventListener(event, handler)
    else if (retryTimer === undefined) open()
  }

  function unlisten(event: string): void {
    const handler = domHandlers.get(event)
    domHandlers.delete(event)
    if (handler !== undefined) source?.removeEventListener(event, handler)
    if (domHandlers.size > 0) return
    source?.close()
    source = undefined
    if (retryTimer !== undefined) clearTimeout(retryTimer)
    retryTimer = undefined
    reopening = false
  }

  return {
    kind: 'http',
    call: ((method: 'Status' | 'SetProxyEnabled', on?: boolean) =>
      method === 'Status'
        ? request('GET', httpPaths.status)
        : request('POST', httpPaths.proxy, { enabled: on === true })) as Door['call'],
    on(event, cb) {
      if (listeners.add(event, cb)) listen(event)
      return once(() => {
        if (listeners.remove(event, cb)) unlisten(event)
      })
    },
    onReconnect(cb) {
      // Only meaningful while some event is listened to; it does not open the stream itself.
      reconnectListeners.add(cb)
      return once(() => {
        reconnectListeners.delete(cb)
      })
    },
    async copyText() {
      return false
    },
  }
}

function httpErrorMessage(res: Response, data: unknown, text: string): string {
  if (data !== null && typeof data === 'object') {
    const e = (data as { error?: unknown }).error
    if (e !== null && typeof e === 'object') {
      const m = (e as { message?: unknown }).message
      if (typeof m === 'string' && m !== '') return m
    }
    if (typeof e === 'string' && e !== '') return e
  }
  const body = text.trim()
  if (body !== '' && body.length <= 200 && data === undefined) return body
  return strings.errors.httpStatus(res.status, res.statusText)
}
