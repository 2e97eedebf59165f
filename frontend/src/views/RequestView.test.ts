import { createPinia } from 'pinia'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createApp } from 'vue'
import { i18n } from '../i18n'
import { exchange, settingsView } from '../testing/fixtures'
import { installWails } from '../testing/wails'
import RequestView from './RequestView.vue'

afterEach(() => {
  delete window.go
  delete window.runtime
  document.body.innerHTML = ''
})

function body(rounds: number[], thinking = 'thinking about it at length') {
  const messages: unknown[] = [{ role: 'user', content: 'Fix it.' }]
  for (const i of rounds) {
    messages.push({
      role: 'assistant',
      content: [
        { type: 'thinking', thinking, signature: `s${i}` },
        { type: 'tool_use', id: `t${i}`, name: 'read', input: {} },
      ],
    })
    messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: `t${i}`, content: `r${i}` }] })
  }
  return JSON.stringify({ model: 'm', messages })
}

describe('RequestView', () => {
  it('shows steps, attempts and the diff labelled by layer', async () => {
    const e = exchange({
      id: 'lh_1',
      layers: ['Layer-1', 'Layer-2'],
      compaction: [
        { layer: 'Layer-1', tokensBefore: 900, tokensAfter: 600, rawBefore: 0, rawAfter: 0, items: 1, durationNs: 1000, cacheHit: false },
        { layer: 'Layer-2', tokensBefore: 600, tokensAfter: 550, rawBefore: 0, rawAfter: 0, items: 1, durationNs: 1000, cacheHit: false },
      ],
      attempts: [{ accountID: 1, accountName: 'work', status: 200, error: '', start: '', durationNs: 5e6 }],
      hasBodies: true,
      bodies: {
        request: body([1, 2, 3]),
        forwarded: JSON.stringify({
          model: 'm',
          messages: [
            { role: 'user', content: 'Fix it.' },
            ...JSON.parse(body([2], '...')).messages.slice(1),
            ...JSON.parse(body([3])).messages.slice(1),
          ],
        }),
        reply: '{"type":"message"}',
      },
    })
    const { go } = installWails()
    const detail = go.History.Detail.mockImplementation(async () => e)
    const el = document.createElement('div')
    document.body.appendChild(el)
    const app = createApp(RequestView, { id: 'lh_1' }).use(createPinia()).use(i18n)
    app.mount(el)
    await vi.waitFor(() => expect(el.querySelectorAll('[data-testid=diff-change]').length).toBeGreaterThan(0))
    expect(detail).toHaveBeenCalledWith('lh_1')
    const labels = [...el.querySelectorAll('[data-testid=diff-change]')].map((c) => `${c.getAttribute('data-layer')}:${c.getAttribute('data-kind')}`)
    expect(labels).toEqual(['Layer-1:removed', 'Layer-1:removed', 'Layer-2:changed'])
    expect(el.querySelectorAll('[data-testid=compaction-steps] tbody tr')).toHaveLength(2)
    expect(el.querySelector('[data-testid=attempts]')?.textContent).toContain('work')
    app.unmount()
  })

  it('names the client protocol and the one sent upstream', async () => {
    const { go } = installWails()
    go.History.Detail.mockImplementation(async () => exchange({ id: 'lh_2', clientProtocol: 'openai-chat', upstreamProtocol: 'anthropic' }))
    const el = document.createElement('div')
    document.body.appendChild(el)
    const app = createApp(RequestView, { id: 'lh_2' }).use(createPinia()).use(i18n)
    app.mount(el)
    await vi.waitFor(() => expect(el.querySelector('[data-testid=request-protocol]')?.textContent).toBe('openai-chat → anthropic'))
    app.unmount()
  })

  it('downloads the repro bundle as a zip, and shows why when it cannot', async () => {
    const { go } = installWails()
    go.History.Detail.mockImplementation(async () => exchange({ id: 'lh_3' }))
    go.History.Bundle.mockRejectedValueOnce(new Error('exchange lh_3: not found')).mockResolvedValueOnce(btoa('PK\x03\x04'))
    const saved: Blob[] = []
    const createURL = vi.spyOn(URL, 'createObjectURL').mockImplementation((b) => {
      saved.push(b as Blob)
      return 'blob:bundle'
    })
    const names: string[] = []
    const click = vi.spyOn(HTMLAnchorElement.prototype, 'click').mockImplementation(function (this: HTMLAnchorElement) {
      names.push(this.download)
    })
    try {
      const el = document.createElement('div')
      document.body.appendChild(el)
      const app = createApp(RequestView, { id: 'lh_3' }).use(createPinia()).use(i18n)
      app.mount(el)
      const button = await vi.waitFor(() => {
        const b = el.querySelector<HTMLButtonElement>('[data-testid=request-bundle]')
        expect(b?.textContent?.trim()).toBe('Download repro bundle')
        return b as HTMLButtonElement
      })
      button.click()
      await vi.waitFor(() => expect(el.querySelector('[data-testid=request-bundle-error]')?.textContent).toBe('exchange lh_3: not found'))
      expect(saved).toHaveLength(0)
      button.click()
      await vi.waitFor(() => expect(names).toEqual(['longhaul-bundle-lh_3.zip']))
      expect(el.querySelector('[data-testid=request-bundle-error]')).toBeNull()
      expect(saved[0]?.type).toBe('application/zip')
      expect(await saved[0]?.text()).toBe('PK\x03\x04')
      expect(go.History.Bundle.mock.calls).toEqual([['lh_3'], ['lh_3']])
      app.unmount()
    } finally {
      createURL.mockRestore()
      click.mockRestore()
    }
  })

  it('shows the tool inventory, with the warning badge above monitor.tool_warning_count', async () => {
    const { go } = installWails()
    const view = settingsView()
    view.settings.monitor.tool_warning_count = 5
    go.Settings.Get.mockImplementation(async () => view)
    go.History.Detail.mockImplementation(async () => exchange({ id: 'lh_3', tools: 6, toolTokens: 1200, toolsCalled: ['read', 'bash'] }))
    const el = document.createElement('div')
    document.body.appendChild(el)
    const app = createApp(RequestView, { id: 'lh_3' }).use(createPinia()).use(i18n)
    app.mount(el)
    await vi.waitFor(() => expect(el.querySelector('[data-testid=request-tools] [data-testid=tools-badge]')?.getAttribute('data-warning')).toBe('true'))
    expect(el.querySelector('[data-testid=request-tools]')?.textContent).toContain('1,200 tokens')
    expect(el.querySelector('[data-testid=request-tools-called]')?.textContent).toBe('read, bash')
    app.unmount()
  })

  it('shows no warning at the threshold itself', async () => {
    const { go } = installWails()
    go.Settings.Get.mockImplementation(async () => settingsView())
    go.History.Detail.mockImplementation(async () => exchange({ id: 'lh_4', tools: 30, toolTokens: 900 }))
    const el = document.createElement('div')
    document.body.appendChild(el)
    const app = createApp(RequestView, { id: 'lh_4' }).use(createPinia()).use(i18n)
    app.mount(el)
    await vi.waitFor(() => expect(el.querySelector('[data-testid=request-tools] [data-testid=tools-badge]')?.getAttribute('data-warning')).toBe('false'))
    expect(el.querySelector('[data-testid=request-tools-called]')?.textContent).toBe('none')
    app.unmount()
  })

  it('lists a Layer-3 request’s summary calls with their account and tokens', async () => {
    const { go } = installWails()
    const child = exchange({ id: 'lh_sum', parentID: 'lh_5', route: 'summary', accountName: 'home', model: 'claude-haiku-4-5', modelSent: 'claude-haiku-4-5', inputTokens: 40000, outputTokens: 800 })
    go.History.Detail.mockImplementation(async () => exchange({ id: 'lh_5', layers: ['Layer-3'], children: [child] }))
    const el = document.createElement('div')
    document.body.appendChild(el)
    const app = createApp(RequestView, { id: 'lh_5' }).use(createPinia()).use(i18n)
    app.mount(el)
    await vi.waitFor(() => expect(el.querySelectorAll('[data-testid=summary-call]')).toHaveLength(1))
    const row = el.querySelector('[data-testid=summary-call]')
    expect(row?.getAttribute('data-id')).toBe('lh_sum')
    expect(row?.querySelector('[data-testid=summary-call-account]')?.textContent).toBe('home')
    expect(row?.querySelector('[data-testid=summary-call-tokens]')?.textContent).toContain('in 40,000 · out 800')
    expect(row?.querySelector('a')?.getAttribute('href')).toContain('lh_sum')
    app.unmount()
  })

  it('links a summary call to the request it summarised', async () => {
    const { go } = installWails()
    go.History.Detail.mockImplementation(async () => exchange({ id: 'lh_sum', parentID: 'lh_5', route: 'summary' }))
    const el = document.createElement('div')
    document.body.appendChild(el)
    const app = createApp(RequestView, { id: 'lh_sum' }).use(createPinia()).use(i18n)
    app.mount(el)
    await vi.waitFor(() => expect(el.querySelector('[data-testid=request-parent]')?.getAttribute('href')).toContain('lh_5'))
    expect(el.querySelector('[data-testid=summary-calls]')).toBeNull()
    app.unmount()
  })
})
