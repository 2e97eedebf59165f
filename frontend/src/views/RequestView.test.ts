import { createPinia } from 'pinia'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createApp } from 'vue'
import { i18n, missingKeys, setLocale } from '../i18n'
import type { CompactionStep, Edit, Exchange } from '../api/models'
import { editKinds } from '../lib/ledger'
import { useReplayStore } from '../stores/replay'
import { accountView, exchange, settingsView } from '../testing/fixtures'
import { installWails, type FakeWails } from '../testing/wails'
import RequestView from './RequestView.vue'

const t = (key: string): string => i18n.global.t(key)

afterEach(() => {
  delete window.go
  delete window.runtime
  document.body.innerHTML = ''
})

function edit(over: Partial<Edit>): Edit {
  return { kind: 'block-changed', message: -1, through: -1, block: -1, count: 1, tokensBefore: 0, tokensAfter: 0, before: '', after: '', note: '', ...over }
}

function step(layer: string, tokensBefore: number, tokensAfter: number, edits?: Edit[]): CompactionStep {
  const s: CompactionStep = { layer, tokensBefore, tokensAfter, rawBefore: 0, rawAfter: 0, items: edits?.length ?? 1, durationNs: 1000, cacheHit: false, rewrite: 0 }
  if (edits) s.edits = edits
  return s
}

async function mountRequest(e: Exchange): Promise<{ el: HTMLElement; unmount: () => void }> {
  const { go } = installWails()
  go.History.Detail.mockImplementation(async () => e)
  const el = document.createElement('div')
  document.body.appendChild(el)
  const app = createApp(RequestView, { id: e.id }).use(createPinia()).use(i18n)
  app.mount(el)
  await vi.waitFor(() => expect(el.querySelector('[data-testid=diff]')).not.toBeNull())
  return { el, unmount: () => app.unmount() }
}

/** entries reads the ledger as drawn: step layer, label, path, and the text of the sides. */
function entries(el: HTMLElement): string[][] {
  return [...el.querySelectorAll('[data-testid=ledger-entry]')].map((x) => [
    x.getAttribute('data-layer') ?? '',
    x.querySelector('[data-testid=ledger-entry-label]')?.textContent?.trim() ?? '',
    x.querySelector('[data-testid=ledger-entry-path]')?.textContent?.trim() ?? '',
    [...x.querySelectorAll('[data-testid=ledger-entry-before], [data-testid=ledger-entry-after], [data-testid=ledger-entry-change]')]
      .map((p) => p.textContent?.trim())
      .join(' | '),
  ])
}

describe('RequestView', () => {
  it('follows a request opened in flight until it has finished, and stops when the page closes', async () => {
    const { go } = installWails()
    const started = exchange({ id: 'lh_live', state: 'started', status: 0 })
    const finished = { ...started, state: 'finished', status: 200 }
    let calls = 0
    go.History.Detail.mockImplementation(async () => (++calls >= 3 ? finished : started))
    const el = document.createElement('div')
    document.body.appendChild(el)
    const app = createApp(RequestView, { id: 'lh_live' }).use(createPinia()).use(i18n)
    app.mount(el)
    const status = () => el.querySelector('[data-testid=request-status]')?.textContent?.trim()
    await vi.waitFor(() => expect(status()).toBe(t('monitor.inFlight')))
    await vi.waitFor(() => expect(status()).toBe('200'), { timeout: 5000 })
    const atEnd = calls
    await new Promise((r) => setTimeout(r, 700))
    expect(calls).toBe(atEnd) // finished: no more fetches

    // Opened in flight and closed before it ends: the fetching stops with the page.
    calls = -100
    const el2 = document.createElement('div')
    document.body.appendChild(el2)
    const app2 = createApp(RequestView, { id: 'lh_live' }).use(createPinia()).use(i18n)
    app2.mount(el2)
    await vi.waitFor(() => expect(el2.querySelector('[data-testid=request-status]')?.textContent?.trim()).toBe(t('monitor.inFlight')))
    app2.unmount()
    const atClose = calls
    await new Promise((r) => setTimeout(r, 1000))
    expect(calls).toBe(atClose)
    app.unmount()
  })

  it('draws what each step changed from the ledger the server recorded', async () => {
    const e = exchange({
      id: 'lh_1',
      model: 'claude-3-5-haiku',
      modelSent: 'claude-haiku-4-5',
      layers: ['tool-results', 'Layer-1', 'Layer-2'],
      compaction: [
        step('tool-results', 12000, 3000, [
          edit({ kind: 'result-shortened', message: 8, through: 8, block: 0, tokensBefore: 9100, tokensAfter: 120, before: 'x'.repeat(40), after: 'xxxx…[truncated]', note: 'toolu_6' }),
        ]),
        step('Layer-1', 3000, 1800, [edit({ kind: 'rounds-removed', message: 1, through: 4, count: 4, tokensBefore: 1200, before: 'assistant: [tool_use read t1]' })]),
        step('Layer-2', 1800, 1700, [edit({ kind: 'thinking-elided', message: 5, through: 5, block: 0, tokensBefore: 101, tokensAfter: 1, before: 'thinking about it at length', after: '...', note: 'thinking' })]),
        step('model-map', 0, 0, [edit({ kind: 'model-renamed', before: 'claude-3-5-haiku', after: 'claude-haiku-4-5', note: 'proxy.model_map' })]),
        step('translate', 0, 0, [edit({ kind: 'translated', before: 'openai-chat', after: 'anthropic', note: 'Chat Completions → Messages' })]),
      ],
      attempts: [{ accountID: 1, accountName: 'work', status: 200, error: '', start: '', durationNs: 5e6 }],
      hasBodies: true,
      // The bodies differ in ways no step recorded: the page must not draw them.
      bodies: { request: '{"model":"claude-3-5-haiku","messages":[]}', forwarded: '{"model":"claude-haiku-4-5","messages":[],"extra":1}', reply: '{}' },
    })
    const { el, unmount } = await mountRequest(e)
    await vi.waitFor(() => expect(el.querySelectorAll('[data-testid=ledger-entry]')).toHaveLength(5))
    expect([...el.querySelectorAll('[data-testid=ledger-step]')].map((s) => s.getAttribute('data-layer'))).toEqual([
      'tool-results',
      'Layer-1',
      'Layer-2',
      'model-map',
      'translate',
    ])
    expect(el.querySelector('[data-testid=ledger-step] [data-testid=ledger-step-tokens]')?.textContent?.trim()).toBe('12,000 → 3,000 tokens')
    expect(entries(el)).toEqual([
      ['tool-results', 'tool result shortened', 'messages[8].content[0]', `${'x'.repeat(40)} | xxxx…[truncated]`],
      ['Layer-1', 'old tool rounds removed', 'messages[1–4]', 'assistant: [tool_use read t1]'],
      ['Layer-2', 'thinking elided (signature kept)', 'messages[5].content[0]', 'thinking about it at length | ...'],
      ['model-map', 'model renamed', '', 'claude-3-5-haiku → claude-haiku-4-5 · proxy.model_map'],
      ['translate', 'translated into the account’s protocol', '', 'openai-chat → anthropic · Chat Completions → Messages'],
    ])
    const shortened = el.querySelector('[data-testid=ledger-entry][data-kind=result-shortened]')?.textContent ?? ''
    expect(shortened).toContain('toolu_6')
    expect(shortened).toContain('9,100 → 120 tokens')
    expect(el.querySelector('[data-testid=ledger-entry][data-kind=rounds-removed]')?.textContent).toContain('× 4')
    expect(el.querySelector('[data-testid=ledger-before]')).toBeNull()
    expect(el.querySelector('[data-testid=attempts]')?.textContent).toContain('work')
    // The raw bodies stay, as received and as forwarded.
    ;(el.querySelector('[data-testid=body-tab-forwarded]') as HTMLButtonElement).click()
    await vi.waitFor(() => expect(el.querySelector('[data-testid=bodies]')?.textContent).toContain('"extra": 1'))
    unmount()
  })

  it('labels every kind of edit in both languages', async () => {
    const e = exchange({ id: 'lh_k', compaction: [step('Layer-2', 10, 5, editKinds.map((kind) => edit({ kind, message: 2, through: 2, block: 1 })))] })
    for (const locale of ['en', 'zh-CN'] as const) {
      setLocale(locale)
      try {
        const { el, unmount } = await mountRequest(e)
        await vi.waitFor(() => expect(el.querySelectorAll('[data-testid=ledger-entry]')).toHaveLength(editKinds.length))
        const labels = [...el.querySelectorAll('[data-testid=ledger-entry-label]')].map((l) => l.textContent?.trim() ?? '')
        labels.forEach((label, i) => expect(label, `${locale} ${editKinds[i]}`).not.toBe(editKinds[i]))
        expect(new Set(labels).size).toBe(editKinds.length)
        unmount()
      } finally {
        setLocale('en')
      }
    }
    expect(missingKeys).toEqual([])
  })

  it('says a request recorded before the ledger has no per-message detail, and shows its steps', async () => {
    const e = exchange({ id: 'lh_old', layers: ['Layer-1'], compaction: [step('tool-results', 900, 600), step('Layer-1', 600, 400)] })
    const { el, unmount } = await mountRequest(e)
    await vi.waitFor(() => expect(el.querySelector('[data-testid=ledger-before]')?.textContent).toContain('Recorded before the ledger: no per-message detail'))
    expect([...el.querySelectorAll('[data-testid=ledger-step]')].map((s) => s.getAttribute('data-layer'))).toEqual(['tool-results', 'Layer-1'])
    expect(el.querySelectorAll('[data-testid=ledger-entry]')).toHaveLength(0)
    unmount()
  })

  it('draws a step that waited for the prompt cache apart: its reason, no tokens, no edits, nothing saved', async () => {
    const waited = step('Layer-2', 150000, 150000, [edit({ kind: 'thinking-elided', message: 9, through: 9, block: 0, before: 'hmm', after: '...' })])
    waited.items = 0
    waited.deferred = 'deferred: cache warm, 3:12 left; would save 2k tokens a turn and re-write 17k once'
    const e = exchange({
      id: 'lh_wait',
      layers: ['tool-results'],
      compaction: [step('tool-results', 152000, 150000, [edit({ kind: 'result-shortened', message: 4, through: 4, block: 0, tokensBefore: 2100, tokensAfter: 100 })]), waited],
    })
    const { el, unmount } = await mountRequest(e)
    await vi.waitFor(() => expect(el.querySelectorAll('[data-testid=ledger-step]')).toHaveLength(2))
    const w = el.querySelector('[data-testid=ledger-step][data-layer=Layer-2]') as HTMLElement
    expect(w.getAttribute('data-deferred')).toBe('true')
    expect(w.classList.contains('waited')).toBe(true)
    expect(w.querySelector('[data-testid=ledger-step-waited]')?.textContent).toContain('waited for the cache')
    expect(w.querySelector('[data-testid=ledger-step-reason]')?.textContent?.trim()).toBe('cache warm, 3:12 left; would save 2k tokens a turn and re-write 17k once')
    expect(w.querySelector('[data-testid=layer-badge]')?.getAttribute('data-deferred')).toBe('true')
    for (const part of ['ledger-entry', 'ledger-step-tokens', 'ledger-step-saved', 'ledger-step-rewrite']) {
      expect(w.querySelector(`[data-testid=${part}]`), part).toBeNull()
    }
    expect(w.textContent).not.toContain(t('ledger.noEdits'))
    // The step that ran is drawn as always, and only it counts as saving.
    const ran = el.querySelector('[data-testid=ledger-step][data-layer=tool-results]') as HTMLElement
    expect(ran.getAttribute('data-deferred')).toBeNull()
    expect(ran.querySelector('[data-testid=ledger-step-saved]')?.textContent).toBe('−2,000 tokens')
    expect(el.querySelectorAll('[data-testid=ledger-step-saved]')).toHaveLength(1)
    expect(el.querySelector('[data-testid=ledger-only-waited]')).toBeNull()
    unmount()
  })

  it('says nothing changed when every step that was due waited for the cache', async () => {
    const waited = step('Layer-1', 90000, 90000)
    waited.deferred = 'deferred: cache warm, 0:41 left; would save 38k tokens a turn and re-write 61k once'
    const { el, unmount } = await mountRequest(exchange({ id: 'lh_wait_all', compaction: [waited] }))
    await vi.waitFor(() => expect(el.querySelector('[data-testid=ledger-only-waited]')?.textContent).toBe('Nothing changed: the steps that were due waited for the prompt cache.'))
    expect(el.querySelector('[data-testid=ledger-before]')).toBeNull()
    expect(el.querySelector('[data-testid=ledger-step]')?.getAttribute('data-deferred')).toBe('true')
    unmount()
  })

  it('says how many tokens of the prompt cache a step made the upstream write again', async () => {
    const moved = step('Layer-1', 150000, 90000, [edit({ kind: 'rounds-removed', message: 1, through: 30, count: 30, tokensBefore: 60000 })])
    moved.rewrite = 61000
    const { el, unmount } = await mountRequest(exchange({ id: 'lh_rw', layers: ['Layer-1', 'Layer-2'], compaction: [moved, step('Layer-2', 90000, 88000, [edit({ kind: 'thinking-elided', message: 31, through: 31, block: 0 })])] }))
    await vi.waitFor(() => expect(el.querySelectorAll('[data-testid=ledger-step]')).toHaveLength(2))
    const rewrites = [...el.querySelectorAll('[data-testid=ledger-step]')].map((s) => s.querySelector('[data-testid=ledger-step-rewrite]')?.textContent ?? '')
    expect(rewrites).toEqual(['re-wrote 61,000 tokens of the prompt cache', ''])
    unmount()
  })

  it.each([
    ['setting', 'your setting', '你的设置'],
    ['default', 'default', '默认值'],
    ['beta', 'raised by the 1M beta', '由 1M beta 提高'],
    ['learned', 'learned from the upstream', '从上游得知'],
  ])('shows the context window and why it applies: %s', async (source, wantEn, wantZh) => {
    const e = exchange({ id: `lh_w_${source}`, contextLimit: 180000, contextLimitSource: source })
    const { el, unmount } = await mountRequest(e)
    const w = await vi.waitFor(() => el.querySelector('[data-testid=request-window]') as HTMLElement)
    expect(w.querySelector('[data-testid=context-window]')?.getAttribute('data-source')).toBe(source)
    expect(w.textContent?.replace(/\s+/g, ' ').trim()).toBe(`180,000 tokens · ${wantEn}`)
    expect(w.querySelector('[data-testid=context-window]')?.getAttribute('title')).toBe(t(`window.sourceHelp.${source}`))
    unmount()
    setLocale('zh-CN')
    try {
      const zh = await mountRequest(e)
      await vi.waitFor(() => expect(zh.el.querySelector('[data-testid=context-window-source]')?.textContent).toBe(wantZh))
      zh.unmount()
    } finally {
      setLocale('en')
    }
    expect(missingKeys).toEqual([])
  })

  it('shows only the window for a request recorded before its source was', async () => {
    const { el, unmount } = await mountRequest(exchange({ id: 'lh_w_old', contextLimit: 200000, contextLimitSource: '' }))
    const w = await vi.waitFor(() => el.querySelector('[data-testid=request-window]') as HTMLElement)
    expect(w.textContent?.trim()).toBe('200,000 tokens')
    expect(w.querySelector('[data-testid=context-window-source]')).toBeNull()
    unmount()
  })

  it('says a request no step changed was forwarded as received', async () => {
    const { el, unmount } = await mountRequest(exchange({ id: 'lh_plain' }))
    await vi.waitFor(() => expect(el.querySelector('[data-testid=ledger-none]')).not.toBeNull())
    expect(el.querySelector('[data-testid=ledger]')).toBeNull()
    unmount()
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

  describe('replays', () => {
    const compacted = (over: Partial<Exchange> = {}) =>
      exchange({
        id: 'lh_o',
        status: 200,
        layers: ['Layer-1'],
        tokensSaved: 30000,
        inputTokens: 70000,
        outputTokens: 900,
        stopReason: 'end_turn',
        hasBodies: true,
        bodies: { request: '{"model":"m","messages":[]}', forwarded: '{"model":"m"}', reply: '{"content":[{"type":"text","text":"short answer"}]}' },
        ...over,
      })
    const replayed = (over: Partial<Exchange> = {}) =>
      exchange({
        id: 'lh_r',
        replayOf: 'lh_o',
        status: 400,
        failed: true,
        layers: [],
        inputTokens: 100000,
        outputTokens: 0,
        stopReason: '',
        accountName: 'home',
        hasBodies: true,
        bodies: { request: '{"model":"m","messages":[]}', forwarded: '', reply: '{"type":"error","error":{"message":"prompt is too long"}}' },
        ...over,
      })

    // mount opens id with the replay's record awaited every millisecond (deadlineMs long enough
    // for any test, short where the test is about the deadline).
    function mount(go: FakeWails['go'], id: string, deadlineMs = 10_000) {
      const pinia = createPinia()
      useReplayStore(pinia).setPoll({ intervalMs: 1, deadlineMs })
      go.Settings.Get.mockImplementation(async () => settingsView())
      const el = document.createElement('div')
      document.body.appendChild(el)
      const app = createApp(RequestView, { id }).use(pinia).use(i18n)
      app.mount(el)
      const $ = (testid: string) => el.querySelector<HTMLElement>(`[data-testid=${testid}]`)
      return { el, app, $ }
    }

    it('re-sends a compacted request uncompacted and compares the two once the replay is recorded', async () => {
      const { go } = installWails()
      let sent = false
      let reads = 0
      go.History.Detail.mockImplementation(async (id: string) => {
        if (id === 'lh_o') return compacted(sent ? { replays: [replayed({ bodies: undefined })] } : {})
        // The recorder writes a moment later: the first reads find nothing yet.
        if (++reads < 3) throw new Error('exchange lh_r: not found')
        return replayed()
      })
      go.History.Replay.mockImplementation(async () => {
        sent = true
        return { id: 'lh_r', status: 400 }
      })
      const { app, $ } = mount(go, 'lh_o')
      const resend = await vi.waitFor(() => {
        const b = $('request-resend') as HTMLButtonElement
        expect(b?.disabled).toBe(false)
        return b
      })
      expect(resend.textContent?.trim()).toBe('Re-send uncompacted')
      resend.click()
      await vi.waitFor(() => expect($('replay-comparison')).not.toBeNull())
      expect(go.History.Replay.mock.calls).toEqual([['lh_o', { accountID: 0, model: '', noCompaction: true }]])
      expect(reads).toBe(3)
      expect($('compare-status-original')?.textContent).toBe('200')
      expect($('compare-status-replay')?.textContent).toBe('400')
      expect($('compare-status-replay')?.className).toBe('status-err')
      expect($('compare-input-original')?.textContent).toBe('70,000')
      expect($('compare-input-replay')?.textContent).toBe('100,000')
      expect($('compare-stop-original')?.textContent).toBe('end_turn')
      expect($('compare-account-replay')?.textContent).toBe('home')
      expect($('compare-compaction-original')?.querySelector('[data-testid=layer-badge]')?.getAttribute('data-layer')).toBe('Layer-1')
      expect($('compare-compaction-replay')?.textContent?.trim()).toBe('none')
      expect($('compare-reply-original')?.textContent).toContain('short answer')
      expect($('compare-reply-replay')?.textContent).toContain('prompt is too long')
      // The original, read again, lists its replay.
      await vi.waitFor(() => expect($('replay-row')?.getAttribute('data-id')).toBe('lh_r'))
      app.unmount()
    })

    it('replays on the account and model chosen in the form', async () => {
      const { go } = installWails()
      go.Accounts.List.mockImplementation(async () => [accountView({ id: 1, label: 'work' }), accountView({ id: 2, label: 'home' })])
      go.History.Detail.mockImplementation(async (id: string) => (id === 'lh_o' ? compacted() : replayed({ status: 200, failed: false, modelSent: 'claude-opus-4-1' })))
      go.History.Replay.mockImplementation(async () => ({ id: 'lh_r', status: 200 }))
      const { app, $ } = mount(go, 'lh_o')
      await vi.waitFor(() => expect(($('request-replay-toggle') as HTMLButtonElement)?.disabled).toBe(false))
      $('request-replay-toggle')?.click()
      const select = await vi.waitFor(() => {
        const s = $('replay-account') as HTMLSelectElement
        expect([...s.options].map((o) => o.textContent)).toEqual(['Any (the pool chooses)', 'work', 'home'])
        return s
      })
      select.value = '2'
      select.dispatchEvent(new Event('change'))
      const model = $('replay-model') as HTMLInputElement
      expect(model.placeholder).toBe('claude-sonnet-4-5')
      model.value = ' claude-opus-4-1 '
      model.dispatchEvent(new Event('input'))
      $('replay-nocompaction')?.click()
      $('replay-send')?.click()
      await vi.waitFor(() => expect($('compare-model-replay')?.textContent).toBe('claude-opus-4-1'))
      expect(go.History.Replay.mock.calls).toEqual([['lh_o', { accountID: 2, model: 'claude-opus-4-1', noCompaction: true }]])
      app.unmount()
    })

    it('says so when the replay is refused', async () => {
      const { go } = installWails()
      go.History.Detail.mockImplementation(async () => compacted())
      go.History.Replay.mockRejectedValue(new Error('this request cannot be replayed: its body was cut at history.max_body_bytes'))
      const { app, $ } = mount(go, 'lh_o')
      await vi.waitFor(() => expect(($('request-resend') as HTMLButtonElement)?.disabled).toBe(false))
      $('request-resend')?.click()
      await vi.waitFor(() => expect($('replay-error')?.textContent).toContain('cannot be replayed'))
      expect($('replay-comparison')).toBeNull()
      app.unmount()
    })

    it('stops waiting for the replay’s record at the deadline', async () => {
      const { go } = installWails()
      go.History.Detail.mockImplementation(async (id: string) => {
        if (id === 'lh_o') return compacted()
        throw new Error('exchange lh_r: not found')
      })
      go.History.Replay.mockImplementation(async () => ({ id: 'lh_r', status: 200 }))
      const { app, $ } = mount(go, 'lh_o', 20)
      await vi.waitFor(() => expect(($('request-resend') as HTMLButtonElement)?.disabled).toBe(false))
      $('request-resend')?.click()
      await vi.waitFor(() => expect($('replay-timeout')).not.toBeNull())
      expect($('replay-waiting')).toBeNull()
      expect($('replay-comparison')).toBeNull()
      app.unmount()
    })

    it('offers no replay of a request whose body was not kept in full', async () => {
      const { go } = installWails()
      go.History.Detail.mockImplementation(async () => compacted({ bodiesTruncated: true }))
      const { app, $ } = mount(go, 'lh_o')
      await vi.waitFor(() => expect($('request-summary')).not.toBeNull())
      expect(($('request-resend') as HTMLButtonElement).disabled).toBe(true)
      expect(($('request-replay-toggle') as HTMLButtonElement).disabled).toBe(true)
      app.unmount()
    })

    it('marks a replay’s page with its original and compares the two', async () => {
      const { go } = installWails()
      go.History.Detail.mockImplementation(async (id: string) => (id === 'lh_o' ? compacted() : replayed()))
      const { app, $ } = mount(go, 'lh_r')
      await vi.waitFor(() => expect($('request-replay-of')?.getAttribute('href')).toContain('lh_o'))
      await vi.waitFor(() => expect($('compare-status-original')?.textContent).toBe('200'))
      expect($('compare-status-replay')?.textContent).toBe('400')
      expect(go.History.Replay).not.toHaveBeenCalled()
      app.unmount()
    })

    it('compares the original with a replay chosen from its list', async () => {
      const { go } = installWails()
      go.History.Detail.mockImplementation(async (id: string) => (id === 'lh_o' ? compacted({ replays: [replayed({ bodies: undefined })] }) : replayed()))
      const { app, $ } = mount(go, 'lh_o')
      const compare = await vi.waitFor(() => {
        const b = $('replay-compare')
        expect(b).not.toBeNull()
        return b as HTMLButtonElement
      })
      expect($('replay-comparison')).toBeNull()
      compare.click()
      await vi.waitFor(() => expect($('compare-reply-replay')?.textContent).toContain('prompt is too long'))
      app.unmount()
    })
  })
})
