import { createPinia, setActivePinia } from 'pinia'
import { beforeEach, describe, expect, it, vi } from 'vitest'
import type { ProxyStatus } from '../api/models'
import { useProxyStore } from './proxy'

const api = vi.hoisted(() => ({
  status: vi.fn<() => Promise<ProxyStatus>>(),
  setEnabled: vi.fn<(on: boolean) => Promise<ProxyStatus>>(),
  onStatus: vi.fn<(cb: (s: ProxyStatus) => void) => () => void>(),
}))
vi.mock('../api/proxy', () => ({ proxy: api }))

const running: ProxyStatus = {
  running: true,
  address: '127.0.0.1:8787',
  baseURL: 'http://127.0.0.1:8787',
  error: '',
  accounts: 1,
  requests: 3,
  version: '0.1.0',
  dataDir: '/tmp/longhaul',
}
const stopped: ProxyStatus = { ...running, running: false }

/** A promise the test settles by hand. */
function deferred<T>() {
  let resolve!: (v: T) => void
  let reject!: (e: unknown) => void
  const promise = new Promise<T>((res, rej) => {
    resolve = res
    reject = rej
  })
  return { promise, resolve, reject }
}

let push: (s: ProxyStatus) => void
const unsubscribe = vi.fn()

beforeEach(() => {
  setActivePinia(createPinia())
  api.status.mockReset().mockResolvedValue(running)
  api.setEnabled.mockReset()
  api.onStatus.mockReset().mockImplementation((cb) => {
    push = cb
    return unsubscribe
  })
  unsubscribe.mockReset()
})

async function loaded(s: ProxyStatus = running) {
  api.status.mockResolvedValueOnce(s)
  const store = useProxyStore()
  const off = store.subscribe()
  await vi.waitFor(() => expect(store.status).toEqual(s))
  return { store, off }
}

describe('proxy store', () => {
  it('subscribes, loads the status and applies pushed ones', async () => {
    const { store, off } = await loaded()
    expect(api.onStatus).toHaveBeenCalledTimes(1)
    push(stopped)
    expect(store.status).toEqual(stopped)
    expect(store.running).toBe(false)
    off()
    expect(unsubscribe).toHaveBeenCalledTimes(1)
  })

  it('toggle stops a running proxy, is busy meanwhile, then refreshes', async () => {
    const { store } = await loaded(running)
    const call = deferred<ProxyStatus>()
    api.setEnabled.mockReturnValueOnce(call.promise)
    api.status.mockResolvedValue(stopped)

    const done = store.toggle()
    expect(api.setEnabled).toHaveBeenCalledWith(false)
    expect(store.busy).toBe(true)

    await store.toggle() // ignored while in flight
    expect(api.setEnabled).toHaveBeenCalledTimes(1)

    const fetchesBefore = api.status.mock.calls.length
    call.resolve(stopped)
    await done
    expect(store.busy).toBe(false)
    expect(store.status).toEqual(stopped)
    expect(api.status.mock.calls.length).toBe(fetchesBefore + 1)
    expect(store.errors).toEqual([])
  })

  it('toggle starts a stopped proxy', async () => {
    const { store } = await loaded(stopped)
    api.setEnabled.mockResolvedValueOnce(running)
    await store.toggle()
    expect(api.setEnabled).toHaveBeenCalledWith(true)
    expect(store.running).toBe(true)
  })

  it('toggle does nothing before the first status', async () => {
    api.status.mockReturnValue(new Promise(() => {}))
    const store = useProxyStore()
    store.subscribe()
    await store.toggle()
    expect(api.setEnabled).not.toHaveBeenCalled()
  })

  it('keeps the failure message of a toggle and still refreshes', async () => {
    const { store } = await loaded(stopped)
    api.setEnabled.mockRejectedValueOnce(new Error('port in use'))
    api.status.mockResolvedValue({ ...stopped, error: 'port in use' })
    await store.toggle()
    expect(store.busy).toBe(false)
    expect(store.actionError).toBe('port in use')
    expect(store.errors).toEqual(['port in use']) // backend's and the call's, shown once
    expect(store.running).toBe(false)

    api.setEnabled.mockResolvedValueOnce(running)
    api.status.mockResolvedValue(running)
    await store.toggle()
    expect(store.errors).toEqual([])
  })

  it('shows the backend error and a failed fetch', async () => {
    const { store } = await loaded({ ...stopped, error: 'listen tcp :8787: address already in use' })
    api.status.mockRejectedValueOnce(new Error('Cannot reach the Longhaul backend'))
    await store.refresh()
    expect(store.errors).toEqual(['listen tcp :8787: address already in use', 'Cannot reach the Longhaul backend'])
    push(running)
    expect(store.errors).toEqual([])
  })

  it('drops a refresh that an event overtook', async () => {
    const { store } = await loaded(running)
    const slow = deferred<ProxyStatus>()
    api.status.mockReturnValueOnce(slow.promise)
    const refreshing = store.refresh()
    push(stopped) // newer news arrives while the fetch is in flight
    slow.resolve(running)
    await refreshing
    expect(store.status).toEqual(stopped)
  })
})
