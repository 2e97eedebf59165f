// @vitest-environment node
// Plain Node fetch: no DOM needed here, and happy-dom would log every failed request.

import { afterEach, describe, expect, it } from 'vitest'
import { httpDoor, httpPaths, type Route } from './door'
import { json, startBackend } from './testing/backend'
import { ApiError } from './errors'

const status: Route = { method: 'GET', path: httpPaths.status }

let backend: Awaited<ReturnType<typeof startBackend>> | undefined

afterEach(async () => {
  await backend?.close()
  backend = undefined
})

describe('HTTP door errors', () => {
  it('surfaces error.message from a non-2xx JSON reply', async () => {
    backend = await startBackend((_req, res) =>
      json(res, 409, { error: { message: 'listen tcp 127.0.0.1:8787: bind: address already in use' } }),
    )
    const err = await httpDoor({ base: backend.origin })
      .request({ method: 'POST', path: httpPaths.proxy, body: { enabled: true } })
      .catch((e: unknown) => e)
    expect(err).toBeInstanceOf(ApiError)
    expect(err).toMatchObject({ message: 'listen tcp 127.0.0.1:8787: bind: address already in use', status: 409 })
  })

  it('surfaces a short plain-text error body', async () => {
    backend = await startBackend((_req, res) => {
      res.writeHead(503, { 'Content-Type': 'text/plain' })
      res.end('shutting down\n')
    })
    await expect(httpDoor({ base: backend.origin }).request(status)).rejects.toMatchObject({
      message: 'shutting down',
      status: 503,
    })
  })

  it('names the HTTP status when the reply says nothing', async () => {
    backend = await startBackend((_req, res) => {
      res.writeHead(500)
      res.end()
    })
    await expect(httpDoor({ base: backend.origin }).request(status)).rejects.toMatchObject({
      message: expect.stringContaining('HTTP 500'),
      status: 500,
    })
  })

  it('rejects a 2xx reply that is not JSON', async () => {
    backend = await startBackend((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/html' })
      res.end('<!doctype html>')
    })
    await expect(httpDoor({ base: backend.origin }).request(status)).rejects.toBeInstanceOf(ApiError)
  })

  it('says the backend is unreachable when nothing listens', async () => {
    const b = await startBackend(() => {})
    await b.close()
    const err = await httpDoor({ base: b.origin })
      .request(status)
      .catch((e: unknown) => e)
    expect(err).toBeInstanceOf(ApiError)
    expect((err as ApiError).message).toMatch(/Cannot reach the Longhaul backend/)
  })
})

