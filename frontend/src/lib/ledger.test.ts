import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import type { CompactionStep, Edit } from '../api/models'
import { en } from '../i18n/en'
import { exchange } from '../testing/fixtures'
import { editKinds, editPath, ledgerOf, proxySteps, waitReason } from './ledger'

// The Go sources the UI mirrors, read from the repository (happy-dom's URL cannot name a file).
const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..')
const goSource = (path: string): string => readFileSync(join(repo, path), 'utf8')

function edit(over: Partial<Edit>): Edit {
  return { kind: 'block-changed', message: -1, through: -1, block: -1, count: 1, tokensBefore: 0, tokensAfter: 0, before: '', after: '', note: '', ...over }
}

function step(layer: string, edits?: Edit[]): CompactionStep {
  const s: CompactionStep = { layer, tokensBefore: 900, tokensAfter: 600, rawBefore: 800, rawAfter: 500, items: 1, durationNs: 2e6, cacheHit: false, rewrite: 0 }
  if (edits) s.edits = edits
  return s
}

describe('editPath', () => {
  it.each([
    ['a span of removed messages', edit({ message: 3, through: 40 }), 'messages[3–40]'],
    ['a block', edit({ message: 12, through: 12, block: 1 }), 'messages[12].content[1]'],
    ['a whole message', edit({ message: 5, through: 5 }), 'messages[5]'],
    ['the first block of the first message', edit({ message: 0, through: 0, block: 0 }), 'messages[0].content[0]'],
    ['a message the step built', edit({ kind: 'summary-added' }), ''],
    ['the model', edit({ kind: 'model-renamed' }), ''],
  ])('names %s', (_, e, want) => {
    expect(editPath(e)).toBe(want)
  })
})

describe('ledgerOf', () => {
  it('lists each step in order with its edits, paths in the request as received', () => {
    const e = exchange({
      compaction: [
        step('Layer-1', [edit({ kind: 'rounds-removed', message: 1, through: 6, count: 6, tokensBefore: 3000, before: 'assistant: [tool_use read t1]' })]),
        step('Layer-2', [
          edit({ kind: 'thinking-elided', message: 7, through: 7, block: 0, tokensBefore: 40, tokensAfter: 1, before: 'let me think', after: '...', note: 'thinking' }),
          edit({ kind: 'more', count: 12, tokensBefore: 400, tokensAfter: 12 }),
        ]),
        step('model-map', [edit({ kind: 'model-renamed', before: 'claude-3-5-haiku', after: 'claude-haiku-4-5', note: 'proxy.model_map' })]),
      ],
    })
    const l = ledgerOf(e)
    expect(l.recorded).toBe(true)
    expect(l.sections.map((s) => [s.layer, s.tokensBefore, s.tokensAfter, s.items])).toEqual([
      ['Layer-1', 900, 600, 1],
      ['Layer-2', 900, 600, 1],
      ['model-map', 900, 600, 1],
    ])
    expect(l.sections.flatMap((s) => s.entries.map((x) => [x.kind, x.path, x.count, x.inline]))).toEqual([
      ['rounds-removed', 'messages[1–6]', 6, false],
      ['thinking-elided', 'messages[7].content[0]', 1, false],
      ['more', '', 12, false],
      ['model-renamed', '', 1, true],
    ])
    expect(l.sections[1]?.entries[0]).toMatchObject({ before: 'let me think', after: '...', note: 'thinking', tokensBefore: 40, tokensAfter: 1 })
  })

  it('says a request whose steps carry no edits was recorded before the ledger', () => {
    const l = ledgerOf(exchange({ compaction: [step('tool-results'), step('Layer-1')] }))
    expect(l.recorded).toBe(false)
    expect(l.sections.map((s) => [s.layer, s.entries.length])).toEqual([
      ['tool-results', 0],
      ['Layer-1', 0],
    ])
  })

  it('has no step for a request forwarded as received', () => {
    expect(ledgerOf(exchange({}))).toEqual({ sections: [], recorded: false, waited: 0 })
  })

  it('keeps a step that waited for the cache apart: its reason, no edits, nothing saved', () => {
    const waited: CompactionStep = { ...step('Layer-2', [edit({ kind: 'thinking-elided', message: 3, through: 3, block: 0 })]), tokensAfter: 900 }
    waited.deferred = 'deferred: cache warm, 3:12 left; would save 2k tokens a turn and re-write 17k once'
    const l = ledgerOf(exchange({ compaction: [waited] }))
    expect(l.waited).toBe(1)
    expect(l.recorded).toBe(true)
    expect(l.sections[0]).toMatchObject({
      layer: 'Layer-2',
      deferred: 'cache warm, 3:12 left; would save 2k tokens a turn and re-write 17k once',
      entries: [],
      tokensBefore: 900,
      tokensAfter: 900,
    })
  })

  it('carries the tokens a step made the upstream write to its prompt cache again', () => {
    const moved = { ...step('Layer-1', [edit({ kind: 'rounds-removed', message: 1, through: 6, count: 6 })]), rewrite: 61000 }
    const l = ledgerOf(exchange({ compaction: [moved, step('Layer-2', [edit({ kind: 'thinking-elided', message: 7, through: 7, block: 0 })])] }))
    expect(l.sections.map((s) => [s.layer, s.rewrite, s.deferred])).toEqual([
      ['Layer-1', 61000, ''],
      ['Layer-2', 0, ''],
    ])
    expect(l.waited).toBe(0)
  })
})

describe('waitReason', () => {
  it.each([
    ['drops the word the page says itself', 'deferred: cache warm, 0:41 left; would save 38k tokens a turn and re-write 61k once', 'cache warm, 0:41 left; would save 38k tokens a turn and re-write 61k once'],
    ['keeps a reason in other words', 'cache warm', 'cache warm'],
    ['keeps a reason that is only the word, so the step still waited', 'deferred:', 'deferred:'],
    ['is empty for a step that ran', '', ''],
    ['is empty when the field is absent', undefined, ''],
  ])('%s', (_, in_, want) => {
    expect(waitReason(in_)).toBe(want)
  })
})

describe('editKinds', () => {
  it('are the kinds the server records (proxy/compact/ledger.go)', () => {
    const src = goSource('proxy/compact/ledger.go')
    const kinds = [...src.matchAll(/^\s*Edit\w+\s+EditKind = "([^"]+)"/gm)].map((m) => m[1])
    expect(kinds.length).toBeGreaterThan(10)
    expect([...editKinds].sort()).toEqual(kinds.sort())
  })

  it('each has a label', () => {
    const labels = en.ledger.kind as Record<string, string>
    expect(Object.keys(labels).sort()).toEqual([...editKinds].sort())
  })

  it('every step the pipeline runs has a name and a short name (proxy/compact/pipeline.go)', () => {
    const src = goSource('proxy/compact/pipeline.go')
    const layers = [...src.matchAll(/^\s*Layer\w*\s+Layer = "([^"]+)"/gm)].map((m) => m[1] ?? '')
    expect(layers).toContain('dedupe')
    for (const l of [...layers, ...proxySteps]) {
      expect(Object.keys(en.layers), l).toContain(l)
      expect(Object.keys(en.layersShort), l).toContain(l)
    }
  })

  it('names the proxy steps of proxy/exchange.go', () => {
    const src = goSource('proxy/exchange.go')
    const steps = [...src.matchAll(/^\s*Step\w+\s*= "([^"]+)"/gm)].map((m) => m[1])
    expect(steps.sort()).toEqual([...proxySteps].sort())
  })
})
