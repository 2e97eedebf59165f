import { describe, expect, it } from 'vitest'
import { diffRequests, lcs } from './diff'

// A tool loop: user asks, then rounds of assistant (thinking + tool_use) / user (tool_result).
function round(i: number, thinking = `Let me look at file ${i} carefully before deciding.`, result = `contents of file ${i}`) {
  return [
    {
      role: 'assistant',
      content: [
        { type: 'thinking', thinking, signature: `sig-${i}` },
        { type: 'tool_use', id: `toolu_${i}`, name: 'read', input: { path: `f${i}` } },
      ],
    },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: `toolu_${i}`, content: result }] },
  ]
}

function request(rounds: unknown[][], model = 'claude-sonnet-4-5', extra: object = {}) {
  return JSON.stringify({
    model,
    max_tokens: 1024,
    system: 'You are a coding agent.',
    messages: [{ role: 'user', content: 'Fix the bug.' }, ...rounds.flat(), { role: 'user', content: 'Go on.' }],
    ...extra,
  })
}

describe('diffRequests', () => {
  it('finds nothing when the request was forwarded as received', () => {
    const body = request([round(1)])
    expect(diffRequests(body, '', []).changes).toEqual([])
    expect(diffRequests(body, body, []).changes).toEqual([])
  })

  it('labels removed tool rounds Layer-1, elided thinking Layer-2, shrunk results tool-results', () => {
    const received = request([1, 2, 3, 4, 5, 6].map((i) => round(i, undefined, i === 6 ? 'x'.repeat(5000) : undefined)))
    const forwarded = request([
      ...[3, 4].map((i) => round(i, '...')), // older rounds 1-2 gone, thinking of 3-4 elided
      round(5),
      round(6, undefined, 'xxxxx...[truncated 4995 chars]'),
    ])
    const d = diffRequests(received, forwarded, ['tool-results', 'Layer-1', 'Layer-2'])
    expect(d.structured).toBe(true)
    const removed = d.changes.filter((c) => c.kind === 'removed')
    expect(removed.map((c) => c.path)).toEqual(['messages[1]', 'messages[2]', 'messages[3]', 'messages[4]'])
    expect(new Set(removed.map((c) => c.layer))).toEqual(new Set(['Layer-1']))
    expect(removed.every((c) => c.what === 'messageRemoved')).toBe(true)

    const elided = d.changes.filter((c) => c.what === 'thinkingElided')
    expect(elided.map((c) => [c.path, c.layer, c.after])).toEqual([
      ['messages[1].content[0].thinking', 'Layer-2', '...'],
      ['messages[3].content[0].thinking', 'Layer-2', '...'],
    ])
    const results = d.changes.filter((c) => c.what === 'toolResultCompressed')
    expect(results).toHaveLength(1)
    expect(results[0]).toMatchObject({ layer: 'tool-results', kind: 'changed', path: 'messages[8].content[0]' })
    expect(d.byLayer).toEqual({ 'Layer-1': 4, 'Layer-2': 2, 'tool-results': 1 })
  })

  it('labels a summary fork Layer-3', () => {
    const received = request([1, 2, 3].map((i) => round(i)))
    const forwarded = JSON.stringify({
      model: 'claude-sonnet-4-5',
      max_tokens: 1024,
      system: 'You are a coding agent.',
      messages: [
        { role: 'user', content: 'Context has been compressed.\n<summary>…</summary>' },
        { role: 'assistant', content: 'Understood.' },
        { role: 'user', content: 'Go on.' },
      ],
    })
    const d = diffRequests(received, forwarded, ['Layer-1', 'Layer-3'])
    const labels = new Set(d.changes.map((c) => c.layer))
    expect(labels).toEqual(new Set(['Layer-3']))
    expect(d.changes.filter((c) => c.kind === 'added')).toHaveLength(2)
    expect(d.changes.filter((c) => c.what === 'messageSummarised')).toHaveLength(7)
  })

  it('labels purified thinking, repaired signatures and a mapped model', () => {
    const received = request([round(1), round(2)], 'claude-3-5-haiku-latest')
    const purified = JSON.parse(received)
    purified.model = 'claude-haiku-4-5'
    purified.messages[1].content.shift() // thinking gone
    purified.messages[3].content[0].signature = 'sig-restored'
    const d = diffRequests(received, JSON.stringify(purified), ['purify', 'signatures'])
    expect(d.changes.find((c) => c.path === 'model')).toMatchObject({ layer: 'model-map', what: 'modelMapped' })
    expect(d.changes.find((c) => c.what === 'thinkingRemoved')).toMatchObject({ layer: 'purify', path: 'messages[1].content[0]' })
    expect(d.changes.find((c) => c.what === 'signatureRepaired')).toMatchObject({ layer: 'signatures', before: 'sig-2', after: 'sig-restored' })
  })

  it('says "other" when the step that would explain a change did not run', () => {
    const received = request([round(1)])
    const changed = JSON.parse(received)
    changed.messages[2].content[0].content = 'different'
    const d = diffRequests(received, JSON.stringify(changed), [])
    expect(d.changes.map((c) => c.layer)).toEqual(['other'])
  })

  it('falls back to a line diff for bodies that are not JSON', () => {
    const d = diffRequests('a\nb\nc', 'a\nc\nd', ['tool-results'])
    expect(d.structured).toBe(false)
    expect(d.changes.map((c) => [c.kind, c.before || c.after, c.layer])).toEqual([
      ['removed', 'b', 'tool-results'],
      ['added', 'd', 'tool-results'],
    ])
  })
})

describe('lcs', () => {
  it('pairs the common subsequence, head and tail included', () => {
    expect(lcs(['a', 'b', 'c', 'd'], ['a', 'c', 'd'])).toEqual([
      [0, 0],
      [2, 1],
      [3, 2],
    ])
    expect(lcs([], ['x'])).toEqual([])
  })
})
