import { afterEach, describe, expect, it } from 'vitest'
import { installWails } from '../testing/wails'
import { query } from './door'
import { ApiError, parseFieldLines } from './errors'
import { history } from './history'
import { settings } from './settings'
import { backendLogic, json, startBackend } from './testing/backend'

afterEach(() => {
  delete window.go
  delete window.runtime
})

// The page is served by the backend, so the API is on the page's own origin.
function servePageFrom(origin: string): void {
  ;(window as unknown as { happyDOM: { setURL(url: string): void } }).happyDOM.setURL(origin + '/')
}

describe('validation errors reach the field', () => {
  it('reads "field: message" lines from the window, and nothing from other text', () => {
    expect(parseFieldLines('proxy.experimental.context_compression_threshold_l2: must be ≥ context_compression_threshold_l1 (0.4)\nproxy.port: must be between 1 and 65535')).toEqual({
      'proxy.experimental.context_compression_threshold_l2': 'must be ≥ context_compression_threshold_l1 (0.4)',
      'proxy.port': 'must be between 1 and 65535',
    })
    expect(parseFieldLines('proxy.context_limits.claude-3.5-*: must be greater than 0')).toEqual({
      'proxy.context_limits.claude-3.5-*': 'must be greater than 0',
    })
    expect(parseFieldLines('load settings: disk I/O error')).toEqual({})
    expect(parseFieldLines('dial tcp 127.0.0.1:1: connect: connection refused')).toEqual({})
  })

  it('Wails door: a rejected Settings.Set becomes an ApiError with fields', async () => {
    const { go } = installWails()
    go.Settings.Set.mockRejectedValueOnce('proxy.port: must be between 1 and 65535')
    const err = await settings.set({ 'proxy.port': 70000 }).catch((e: unknown) => e)
    expect(go.Settings.Set).toHaveBeenCalledWith({ 'proxy.port': 70000 })
    expect(err).toBeInstanceOf(ApiError)
    expect((err as ApiError).fields).toEqual({ 'proxy.port': 'must be between 1 and 65535' })
  })

  it('HTTP door: PUT /longhaul/v1/settings sends {values} and reads error.fields', async () => {
    const logic = backendLogic()
    const srv = await startBackend((req, res, body) => {
      if (req.method === 'PUT' && req.url === '/longhaul/v1/settings') {
        return json(res, 400, { error: { message: 'proxy.port: bad', fields: [{ field: 'proxy.port', message: 'bad' }] } })
      }
      if (req.method === 'GET' && req.url?.startsWith('/longhaul/v1/history?')) return json(res, 200, { exchanges: [], next: 0 })
      return logic(req, res, body)
    })
    try {
      servePageFrom(srv.origin)
      const err = await settings.set({ 'proxy.port': 70000 }).catch((e: unknown) => e)
      expect((err as ApiError).status).toBe(400)
      expect((err as ApiError).fields).toEqual({ 'proxy.port': 'bad' })
      expect(srv.seen.at(-1)).toMatchObject({ method: 'PUT', contentType: 'application/json', body: '{"values":{"proxy.port":70000}}' })
      await history.list({ status: 'error', q: 'a b', model: '' })
      expect(srv.seen.at(-1)?.url).toBe('/longhaul/v1/history?status=error&q=a+b')
    } finally {
      await srv.close()
    }
  })

  it('query leaves out empty values', () => {
    expect(query({ a: '1', b: '', c: undefined })).toBe('?a=1')
    expect(query({})).toBe('')
  })
})
