// Test helper: a fake Wails window. window.go.app.<Facade>.<Method> are vi.fn mocks typed from the
// generated bindings (frontend/wailsjs/go/app/*.d.ts), so a fake that no longer fits the Go
// signature fails the type check; window.runtime is the part of the Wails runtime the UI uses.

import { vi, type Mock } from 'vitest'
import type * as Accounts from '../../wailsjs/go/app/Accounts'
import type * as Clients from '../../wailsjs/go/app/Clients'
import type * as History from '../../wailsjs/go/app/History'
import type * as ProxyFacade from '../../wailsjs/go/app/Proxy'
import type * as Settings from '../../wailsjs/go/app/Settings'
import type * as Updates from '../../wailsjs/go/app/Updates'

type Mocks<M> = { [K in keyof M]: M[K] extends (...args: infer A) => infer R ? Mock<(...args: A) => R> : never }

export interface FakeFacades {
  Proxy: Mocks<typeof ProxyFacade>
  Accounts: Mocks<typeof Accounts>
  Settings: Mocks<typeof Settings>
  History: Mocks<typeof History>
  Clients: Mocks<typeof Clients>
  Updates: Mocks<typeof Updates>
}

/** A facade whose methods are created on first use; one not given an implementation rejects. */
function facade<T extends object>(name: string): T {
  const fns: Record<string, Mock> = {}
  return new Proxy(fns, {
    get(target, method) {
      if (typeof method !== 'string') return undefined
      target[method] ??= vi.fn(async () => {
        throw new Error(`unexpected call of ${name}.${method}`)
      })
      return target[method]
    },
  }) as T
}

export interface FakeWails {
  go: FakeFacades
  runtime: {
    EventsOnMultiple: Mock<(name: string, cb: (...data: unknown[]) => void, max: number) => () => void>
    EventsOff: Mock<(name: string, ...more: string[]) => void>
    ClipboardSetText: Mock<(text: string) => Promise<boolean>>
  }
  /** Sends an event as the Go side would (runtime.EventsEmit). */
  emit(name: string, ...data: unknown[]): void
  /** How many runtime listeners an event has. */
  listening(name: string): number
}

/** installWails makes window look like the Wails window; `delete window.go, window.runtime` undoes it. */
export function installWails(opts: { runtime?: boolean } = {}): FakeWails {
  const go: FakeFacades = {
    Proxy: facade('Proxy'),
    Accounts: facade('Accounts'),
    Settings: facade('Settings'),
    History: facade('History'),
    Clients: facade('Clients'),
    Updates: facade('Updates'),
  }
  const handlers = new Map<string, Set<(...data: unknown[]) => void>>()
  const runtime: FakeWails['runtime'] = {
    EventsOnMultiple: vi.fn((name: string, cb: (...data: unknown[]) => void) => {
      let set = handlers.get(name)
      if (set === undefined) handlers.set(name, (set = new Set()))
      set.add(cb)
      return () => void set.delete(cb)
    }),
    EventsOff: vi.fn((name: string) => void handlers.delete(name)),
    ClipboardSetText: vi.fn(async () => true),
  }
  window.go = { app: go as unknown as Record<string, Record<string, unknown>> }
  if (opts.runtime !== false) window.runtime = runtime
  return {
    go,
    runtime,
    emit: (name, ...data) => {
      for (const cb of [...(handlers.get(name) ?? [])]) cb(...data)
    },
    listening: (name) => handlers.get(name)?.size ?? 0,
  }
}
