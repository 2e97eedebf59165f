// The two doors into the backend, and `bind`, which the facade modules (proxy.ts, accounts.ts,
// settings.ts, history.ts, clients.ts, updates.ts) use to expose each bound Go method once:
//
//  - Wails door: inside the desktop window. Calls go through the generated bindings
//    (frontend/wailsjs/go/app/<Facade>.js, which call window.go.app.<Facade>.<Method>), events and
//    the clipboard through the generated runtime wrapper (frontend/wailsjs/runtime).
//  - HTTP door: in a browser against the headless backend on the same origin: JSON over HTTP
//    plus Server-Sent Events.
//
// Nothing above src/api/ sees which door is open.

import { ref } from 'vue'
import { ClipboardSetText, EventsOnMultiple } from '../../wailsjs/runtime/runtime'
import { t } from '../i18n'
import { ApiError, errorFields, errorMessage, parseFieldLines } from './errors'

declare global {
  interface Window {
    /** The bound Go facades, as Wails v2 injects them: window.go.app.<Facade>.<Method>. */
    go?: { app?: Record<string, Record<string, unknown> | undefined> }
    /** The Wails runtime (wrapped by frontend/wailsjs/runtime); only its presence is checked here. */
    runtime?: object
  }
}

export type Unsubscribe = () => void

interface Events {
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

export interface WailsDoor extends Events {
  readonly kind: 'wails'
}

export interface HttpDoor extends Events {
  readonly kind: 'http'
  /** Makes one API request; resolves with the parsed JSON (or text), rejects with ApiError. */
  request(route: Route): Promise<unknown>
}

export type Door = WailsDoor | HttpDoor

/** inWindow reports whether the UI runs inside the Wails window (the Go bindings are present). */
export function inWindow(w: Window | undefined = globalThis.window): boolean {
  return w?.go?.app?.Proxy !== undefined
}

// Fan-out: one registration per event name with the backend, any number of local listeners.
// The backend registration is removed when the last local listener leaves, so runtime listeners
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

export function wailsDoor(): WailsDoor {
  const listeners = new Listeners()
  const offs = new Map<string, () => void>()
  const hasRuntime = () => globalThis.window?.runtime !== undefined

  return {
    kind: 'wails',
    on(event, cb) {
      if (!hasRuntime()) {
        console.warn(`Wails runtime missing; not listening to ${event}`)
        return () => {}
      }
      if (listeners.add(event, cb)) {
        offs.set(event, EventsOnMultiple(event, (...data: unknown[]) => listeners.emit(event, data[0]), -1))
      }
      return once(() => {
        if (!listeners.remove(event, cb)) return
        offs.get(event)?.()
        offs.delete(event)
      })
    },
    onReconnect() {
      return () => {}
    },
    async copyText(text) {
      if (!hasRuntime()) return false
      try {
        return await ClipboardSetText(text)
      } catch {
        return false
      }
    },
  }
}

// ---------------------------------------------------------------------------------------------
// HTTP door

/** Paths of the headless backend's HTTP API (same origin as the page). */
export const api = '/longhaul/v1'
export const httpPaths = {
  status: `${api}/status`,
  proxy: `${api}/proxy`,
  events: `${api}/events`,
  login: `${api}/login`,
  logout: `${api}/logout`,
} as const

/**
 * True once the HTTP door was answered 401: the backend has a client key and this browser has
 * no session, so the app shows the login page (App.vue) instead of pages that cannot load.
 */
export const loginNeeded = ref(false)

/**
 * login sends the key typed in the login page; the backend answers with an HttpOnly session
 * cookie that every later request carries. Rejects with ApiError (status 401 for a wrong key).
 */
export async function login(key: string, opts: HttpDoorOptions = {}): Promise<void> {
  await httpDoor(opts).request({ method: 'POST', path: httpPaths.login, body: { key } })
  loginNeeded.value = false
}

/** logout ends this browser's session; the next request asks for the key again. */
export async function logout(opts: HttpDoorOptions = {}): Promise<void> {
  await httpDoor(opts).request({ method: 'POST', path: httpPaths.logout, body: {} })
  loginNeeded.value = true
}

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE'

/** One request of the HTTP door: the twin of one bound Go method call (app/door). */
export interface Route {
  method: HttpMethod
  path: string
  body?: unknown
  /** The reply is text (JSON Lines), not JSON. */
  text?: boolean
  /** The reply is a file (a zip), resolved as a Blob. */
  blob?: boolean
}

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

/** Path segment, escaped. */
export const seg = (v: string | number): string => encodeURIComponent(String(v))

export interface HttpDoorOptions {
  /** Prefix for the API paths, e.g. "http://127.0.0.1:8080". Empty means the page's origin. */
  base?: string
  /** If nil, globalThis.fetch is used. */
  fetch?: typeof fetch
  /** If nil, globalThis.EventSource is used. */
  EventSource?: typeof EventSource
}

export function httpDoor(opts: HttpDoorOptions = {}): HttpDoor {
  const base = opts.base ?? ''
  const doFetch = opts.fetch ?? ((input, init) => globalThis.fetch(input, init))
  const listeners = new Listeners()
  const reconnectListeners = new Set<() => void>()
  let source: EventSource | undefined

  async function request(method: HttpMethod, path: string, body?: unknown, as: 'json' | 'text' | 'blob' = 'json'): Promise<unknown> {
    const headers: Record<string, string> = { Accept: 'application/json' }
    const init: RequestInit = { method, headers, cache: 'no-store' }
    if (method !== 'GET') {
      // Every write is JSON, even one without a body (DELETE): the backend refuses any other
      // content type on writes, which keeps plain HTML forms and text/plain fetches of other
      // pages from posting to it without a CORS preflight.
      headers['Content-Type'] = 'application/json'
    }
    if (body !== undefined) init.body = JSON.stringify(body)
    let res: Response
    try {
      res = await doFetch(base + path, init)
    } catch (err) {
      throw new ApiError(t('errors.unreachable', { detail: errorMessage(err) }))
    }
    if (as === 'blob' && res.ok) return await res.blob()
    const text = await res.text().catch(() => '')
    if (as === 'text' && res.ok) return text
    let data: unknown = undefined
    if (text !== '') {
      try {
        data = JSON.parse(text)
      } catch {
        data = undefined
      }
    }
    if (!res.ok) {
      // 401 means the client key is required and this browser has no session: show the login
      // page. A wrong key typed there is also a 401; the login page stays up either way.
      if (res.status === 401) loginNeeded.value = true
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
    request(r) {
      return request(r.method, r.path, r.body, r.blob === true ? 'blob' : r.text === true ? 'text' : 'json')
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

// ---------------------------------------------------------------------------------------------
// Choosing the door, and binding Go methods to it

let cached: { app: object | undefined; door: Door } | undefined

/**
 * currentDoor picks the Wails door when the Go bindings are present and the HTTP door otherwise.
 * The choice is remembered for as long as window.go.app stays the same object, so event
 * subscriptions share one backend registration.
 */
export function currentDoor(): Door {
  const w = globalThis.window as Window | undefined
  const app = inWindow(w) ? w?.go?.app : undefined
  if (cached === undefined || cached.app !== app) {
    cached = { app, door: app !== undefined ? wailsDoor() : httpDoor() }
  }
  return cached.door
}

/**
 * bind exposes one bound Go method to the UI: inside the window it calls the generated binding
 * (frontend/wailsjs/go/app/<Facade>.js), in a browser the HTTP route that route() builds from
 * the same arguments. The parameter and result types are the generated ones, so a Go signature
 * change breaks the type check of every caller. Without a route the method exists only in the
 * window. Either way a failure is an ApiError.
 */
export function bind<A extends unknown[], R>(method: (...args: A) => Promise<R>, route?: (...args: A) => Route): (...args: A) => Promise<R> {
  return async (...args) => {
    const door = currentDoor()
    if (door.kind === 'wails') {
      try {
        return await method(...args)
      } catch (err) {
        throw wailsError(err)
      }
    }
    if (route === undefined) throw new ApiError(t('errors.windowOnly'))
    // Trusted: the route answers with what the bound method returns (app/door calls the facade).
    return (await door.request(route(...args))) as R
  }
}
