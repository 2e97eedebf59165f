// Every facade method reaches the same Go method through both doors: the generated binding in
// the window, its HTTP route (app/door) in a browser.

import { afterEach, describe, expect, it } from 'vitest'
import { installWails, type FakeFacades } from '../testing/wails'
import { accountView } from '../testing/fixtures'
import { accounts } from './accounts'
import { clients } from './clients'
import { history } from './history'
import { proxy } from './proxy'
import { settings } from './settings'
import { json, startBackend } from './testing/backend'
import { updates } from './updates'

const input = { label: 'w', kind: 'anthropic', baseURL: 'https://api.anthropic.com', key: 'sk-1', models: [], priority: 0, weight: 1 }

interface Case {
  name: string
  call: () => Promise<unknown>
  /** The bound Go method and its arguments. */
  go: [keyof FakeFacades, string, unknown[]]
  /** The HTTP request: method, path with query, JSON body. */
  http: [string, string, unknown?]
}

const cases: Case[] = [
  { name: 'proxy.status', call: () => proxy.status(), go: ['Proxy', 'Status', []], http: ['GET', '/longhaul/v1/status'] },
  { name: 'proxy.setEnabled', call: () => proxy.setEnabled(false), go: ['Proxy', 'SetEnabled', [false]], http: ['POST', '/longhaul/v1/proxy', { enabled: false }] },
  { name: 'accounts.list', call: () => accounts.list(), go: ['Accounts', 'List', []], http: ['GET', '/longhaul/v1/accounts'] },
  { name: 'accounts.add', call: () => accounts.add(input), go: ['Accounts', 'Add', [input]], http: ['POST', '/longhaul/v1/accounts', input] },
  { name: 'accounts.update', call: () => accounts.update(3, input), go: ['Accounts', 'Update', [3, input]], http: ['PUT', '/longhaul/v1/accounts/3', input] },
  { name: 'accounts.setEnabled', call: () => accounts.setEnabled(3, true), go: ['Accounts', 'SetEnabled', [3, true]], http: ['POST', '/longhaul/v1/accounts/3/enabled', { enabled: true }] },
  { name: 'accounts.delete', call: () => accounts.delete(3), go: ['Accounts', 'Delete', [3]], http: ['DELETE', '/longhaul/v1/accounts/3'] },
  { name: 'accounts.test', call: () => accounts.test(3), go: ['Accounts', 'Test', [3]], http: ['POST', '/longhaul/v1/accounts/3/test', {}] },
  { name: 'accounts.testKey', call: () => accounts.testKey(0, input), go: ['Accounts', 'TestKey', [0, input]], http: ['POST', '/longhaul/v1/accounts/test', { ...input, id: 0 }] },
  { name: 'settings.get', call: () => settings.get(), go: ['Settings', 'Get', []], http: ['GET', '/longhaul/v1/settings'] },
  { name: 'settings.set', call: () => settings.set({ 'proxy.port': 8050 }), go: ['Settings', 'Set', [{ 'proxy.port': 8050 }]], http: ['PUT', '/longhaul/v1/settings', { values: { 'proxy.port': 8050 } }] },
  { name: 'settings.reset', call: () => settings.reset(['proxy.port']), go: ['Settings', 'Reset', [['proxy.port']]], http: ['POST', '/longhaul/v1/settings/reset', { keys: ['proxy.port'] }] },
  {
    name: 'history.list',
    call: () => history.list({ status: 'error', model: '', limit: '200' }),
    go: ['History', 'List', [{ status: 'error', limit: '200' }]],
    http: ['GET', '/longhaul/v1/history?status=error&limit=200'],
  },
  { name: 'history.detail', call: () => history.detail('lh_1'), go: ['History', 'Detail', ['lh_1']], http: ['GET', '/longhaul/v1/history/lh_1'] },
  { name: 'history.sessions', call: () => history.sessions({ limit: 5 }), go: ['History', 'Sessions', [{ limit: '5' }]], http: ['GET', '/longhaul/v1/sessions?limit=5'] },
  { name: 'history.pressure', call: () => history.pressure('s 1'), go: ['History', 'Pressure', ['s 1']], http: ['GET', '/longhaul/v1/sessions/s%201/pressure'] },
  { name: 'history.stats', call: () => history.stats({ bucket: 'day' }), go: ['History', 'Stats', [{ bucket: 'day' }]], http: ['GET', '/longhaul/v1/stats?bucket=day'] },
  {
    name: 'history.statsSeries',
    call: () => history.statsSeries({ by: 'model', bucket: 'hour' }),
    go: ['History', 'StatsSeries', [{ by: 'model', bucket: 'hour' }]],
    http: ['GET', '/longhaul/v1/stats/series?by=model&bucket=hour'],
  },
  { name: 'clients.claudeCodeStatus', call: () => clients.claudeCodeStatus(), go: ['Clients', 'ClaudeCodeStatus', []], http: ['GET', '/longhaul/v1/clients/claude-code'] },
  { name: 'clients.configureClaudeCode', call: () => clients.configureClaudeCode(), go: ['Clients', 'ConfigureClaudeCode', []], http: ['POST', '/longhaul/v1/clients/claude-code', {}] },
  { name: 'clients.undoClaudeCode', call: () => clients.undoClaudeCode(), go: ['Clients', 'UndoClaudeCode', []], http: ['POST', '/longhaul/v1/clients/claude-code/undo', {}] },
  { name: 'updates.status', call: () => updates.status(), go: ['Updates', 'Status', []], http: ['GET', '/longhaul/v1/update'] },
  { name: 'updates.check', call: () => updates.check(), go: ['Updates', 'Check', []], http: ['POST', '/longhaul/v1/update/check', {}] },
]

afterEach(() => {
  delete window.go
  delete window.runtime
})

describe('in the window, each facade method calls its generated binding', () => {
  it.each(cases)('$name', async ({ call, go: [facade, method, args] }) => {
    const { go } = installWails()
    const fn = (go[facade] as unknown as Record<string, { mockResolvedValue(v: unknown): void; mock: { calls: unknown[][] } }>)[method]
    fn?.mockResolvedValue(accountView())
    await expect(call()).resolves.toEqual(accountView())
    expect(fn?.mock.calls).toEqual([args])
  })
})

describe('in a browser, each facade method makes its HTTP request', () => {
  it.each(cases)('$name', async ({ call, http: [method, url, body] }) => {
    const srv = await startBackend((_req, res) => json(res, 200, { ok: true }))
    try {
      ;(window as unknown as { happyDOM: { setURL(url: string): void } }).happyDOM.setURL(srv.origin + '/')
      await call()
      expect(srv.seen).toHaveLength(1)
      const seen = srv.seen[0]
      expect([seen?.method, seen?.url]).toEqual([method, url])
      expect(seen?.body === '' ? undefined : JSON.parse(seen?.body ?? '')).toEqual(body)
    } finally {
      await srv.close()
    }
  })

  it('history.bundle reads the zip as bytes, and a JSON error as the error', async () => {
    const zip = Buffer.from([0x50, 0x4b, 0x03, 0x04, 0x00, 0xff, 0x80, 0x0a])
    const srv = await startBackend((req, res) => {
      if (req.url === '/longhaul/v1/history/lh_1/bundle') {
        res.writeHead(200, { 'Content-Type': 'application/zip', 'Content-Disposition': 'attachment; filename="x.zip"' })
        return res.end(zip)
      }
      json(res, 404, { error: { message: 'exchange lh_none: not found' } })
    })
    try {
      ;(window as unknown as { happyDOM: { setURL(url: string): void } }).happyDOM.setURL(srv.origin + '/')
      const blob = await history.bundle('lh_1')
      expect([...new Uint8Array(await blob.arrayBuffer())]).toEqual([...zip])
      await expect(history.bundle('lh_none')).rejects.toThrow('exchange lh_none: not found')
      expect(srv.seen.map((r) => r.url)).toEqual(['/longhaul/v1/history/lh_1/bundle', '/longhaul/v1/history/lh_none/bundle'])
    } finally {
      await srv.close()
    }
  })

  it('history.export reads JSON Lines as text', async () => {
    const srv = await startBackend((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/jsonl' })
      res.end('{"id":"a"}\n{"id":"b"}\n')
    })
    try {
      ;(window as unknown as { happyDOM: { setURL(url: string): void } }).happyDOM.setURL(srv.origin + '/')
      await expect(history.export({ session: 'x' })).resolves.toBe('{"id":"a"}\n{"id":"b"}\n')
      expect(srv.seen[0]?.url).toBe('/longhaul/v1/history/export?session=x')
    } finally {
      await srv.close()
    }
  })
})

describe('in the window, history.bundle decodes the binding\'s base64', () => {
  it('returns the zip bytes', async () => {
    const { go } = installWails()
    const zip = [0x50, 0x4b, 0x05, 0x06, 0x00, 0xff, 0x80]
    go.History.Bundle.mockResolvedValue(Buffer.from(zip).toString('base64'))
    const blob = await history.bundle('lh_1')
    expect([...new Uint8Array(await blob.arrayBuffer())]).toEqual(zip)
    expect(blob.type).toBe('application/zip')
    expect(go.History.Bundle.mock.calls).toEqual([['lh_1']])
  })
})
