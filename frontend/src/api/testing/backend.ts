// Test helper: a real HTTP server on 127.0.0.1:0 playing the headless backend.

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { httpPaths } from '../door'
import type { ProxyStatus } from '../models'

export const running: ProxyStatus = {
  running: true,
  address: '127.0.0.1:8787',
  baseURL: 'http://127.0.0.1:8787',
  error: '',
  accounts: 0,
  requests: 7,
  version: '0.1.0',
  dataDir: '/tmp/longhaul',
}
export const stopped: ProxyStatus = { ...running, running: false }

interface Seen {
  method: string
  url: string
  contentType: string | undefined
  body: string
}

export type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void

/** A real HTTP server on 127.0.0.1:0 playing the headless backend. */
export async function startBackend(handler: Handler) {
  const seen: Seen[] = []
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8')
      seen.push({ method: req.method ?? '', url: req.url ?? '', contentType: req.headers['content-type'], body })
      handler(req, res, body)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  const origin = `http://127.0.0.1:${port}`
  const close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    })
  return { origin, seen, close }
}

export function json(res: ServerResponse, status: number, v: unknown): void {
  res.writeHead(status, { 'Content-Type': 'application/json' })
  res.end(JSON.stringify(v))
}

/** The backend's behaviour as the UI expects it. */
export function backendLogic(): Handler {
  let state = { ...running }
  return (req, res, body) => {
    if (req.method === 'GET' && req.url === httpPaths.status) return json(res, 200, state)
    if (req.method === 'POST' && req.url === httpPaths.proxy) {
      const { enabled } = JSON.parse(body) as { enabled: boolean }
      state = { ...state, running: enabled }
      return json(res, 200, state)
    }
    json(res, 404, { error: { message: 'not found' } })
  }
}

