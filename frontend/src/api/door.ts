// The two doors into the backend. Everything above src/api/ sees only the Door interface.
//
//  - Wails door: inside the desktop window, Wails v2 injects the bound Go methods on
//    window.go.<package>.<Struct> and its runtime on window.runtime.
//  - HTTP door: in a browser against the headless backend on the same origin: JSON over HTTP
//    plus Server-Sent Events.

import { t } from '../i18n'
import { ApiError, errorFields, errorMessage, parseFieldLines } from './types'

/** The bound app.System facade, as Wails v2 injects it (every exported Go method). */
export interface WailsSystem {
  Status(): Promise<unknown>
  SetProxyEnabled(on: boolean): Promise<unknown>
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  [method: string]: ((...args: any[]) => Promise<unknown>) | undefined
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
  /**
   * Calls a backend method by its Go name (System.<method> in the window, the matching route of
   * httpRoutes in a browser); rejects with ApiError.
   */
  call(method: string, ...args: unknown[]): Promise<unknown>
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

  async function call(method: string, ...args: unknown[]): Promise<unknown> {
    const fn = system[method]
    if (typeof fn !== 'function') throw new ApiError(t('errors.noMethod', { method }))
    try {
      // Bound Go methods returning (T, error) reject with the error text (or, with an error
      // formatter, with {message, fields}).
      return await fn.apply(system, args)
    } catch (err) {
      throw wailsError(err)
    }
  }

  return {
    kind: 'wails',
    call,
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

type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE'
interface HttpCall {
  method: HttpMethod
  path: string
  body?: unknown
  /** The reply is text (JSON Lines), not JSON. */
  text?: boolean
}

const api = '/longhaul/v1'
const enc = encodeURIComponent

/** query turns a filter object into "?a=1&b=2", leaving out empty values. */
export function query(q: unknown): string {
  const params = new URLSearchParams()
  if (q !== null && typeof q === 'object') {
    for (const [k, v] of Object.entries(q as Record<string, unknown>)) {
      if (v !== undefined && v !== null && v !== '') params.set(k, String(v))
    }
  }
  const s = params.toString()
  return s === '' ? '' : `?${s}`
}

/** The HTTP twin of each bound System method (app/door.go, api_door.go, history_door.go). */
export const httpRoutes: Record<string, (...args: unknown[]) => HttpCall> = {
  Status: () => ({ method: 'GET', path: httpPaths.status }),
  SetProxyEnabled: (on) => ({ method: 'POST', path: httpPaths.proxy, body: { enabled: on === true } }),
  Accounts: () => ({ method: 'GET', path: `${api}/accounts` }),
  AddAccount: (input) => ({ method: 'POST', path: `${api}/accounts`, body: input }),
  UpdateAccount: (id, input) => ({ method: 'PUT', path: `${api}/accounts/${enc(String(id))}`, body: input }),
  SetAccountEnabled: (id, on) => ({
    method: 'POST',
    path: `${api}/accounts/${enc(String(id))}/enabled`,
    body: { enabled: on === true },
  }),
  DeleteAccount: (id) => ({ method: 'DELETE', path: `${api}/accounts/${enc(String(id))}` }),
  TestAccount: (id) => ({ method: 'POST', path: `${api}/accounts/${enc(String(id))}/test`, body: {} }),
  TestKey: (id, input) => ({ method: 'POST', path: `${api}/accounts/test`, body: { ...(input as object), id } }),
  Settings: () => ({ method: 'GET', path: `${api}/settings` }),
  SetSettings: (values) => ({ method: 'PUT', path: `${api}/settings`, body: { values } }),
  ResetSettings: (keys) => ({ method: 'POST', path: `${api}/settings/reset`, body: { keys } }),
  History: (q) => ({ method: 'GET', path: `${api}/history${query(q)}` }),
  HistoryDetail: (id) => ({ method: 'GET', path: `${api}/history/${enc(String(id))}` }),
  ExportHistory: (q) => ({ method: 'GET', path: `${api}/history/export${query(q)}`, text: true }),
  HistorySessions: (q) => ({ method: 'GET', path: `${api}/sessions${query(q)}` }),
  SessionPressure: (id) => ({ method: 'GET', path: `${api}/sessions/${enc(String(id))}/pressure` }),
  HistoryStats: (q) => ({ method: 'GET', path: `${api}/stats${query(q)}` }),
  HistoryStatsSeries: (q) => ({ method: 'GET', path: `${api}/stats/series${query(q)}` }),
  ClaudeCodeStatus: () => ({ method: 'GET', path: `${api}/clients/claude-code` }),
  ConfigureClaudeCode: () => ({ method: 'POST', path: `${api}/clients/claude-code`, body: {} }),
  UndoClaudeCode: () => ({ method: 'POST', path: `${api}/clients/claude-code/undo`, body: {} }),
  UpdateStatus: () => ({ method: 'GET', path: `${api}/update` }),
  CheckForUpdates: () => ({ method: 'POST', path: `${api}/update/check`, body: {} }),
}

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

  async function request(method: HttpMethod, path: string, body?: unknown, asText = false): Promise<unknown> {
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
      throw new ApiError(t('errors.unreachable', { detail: errorMessage(err) }))
    }
    const text = await res.text().catch(() => '')
    if (asText && res.ok) return text
    let data: unknown = undefined
    if (text !== '') {
      try {
        data = JSON.parse(text)
      } catch {
        data = undefined
      }
    }
    if (!res.ok) {
      throw new ApiError(httpErrorMessage(res, data, text), res.status, errorFields(data))
    }
    if (data === undefined) {
      throw new ApiError(t('errors.badReply', { status: res.status }), res.status)
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
    call(method, ...args) {
      const route = httpRoutes[method]
      if (route === undefined) return Promise.reject(new ApiError(t('errors.noMethod', { method })))
      const c = route(...args)
      return request(c.method, c.path, c.body, c.text === true)
    },
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
  return res.statusText !== '' ? t('errors.httpStatusText', { status: res.status, text: res.statusText }) : t('errors.httpStatus', { status: res.status })
}

/** wailsError turns a rejected bound call into an ApiError, with per-field messages when the
 * Go side sent validation errors ({message, fields} from app.BoundError, or "field: message"
 * lines, which is what the default error text of app.FieldErrors looks like). */
function wailsError(err: unknown): ApiError {
  if (err !== null && typeof err === 'object' && !(err instanceof Error)) {
    const o = err as { message?: unknown }
    if (typeof o.message === 'string') return new ApiError(o.message, 0, errorFields({ error: err }))
  }
  const message = errorMessage(err)
  return new ApiError(message, 0, parseFieldLines(message))
}
