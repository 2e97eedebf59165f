// A readable diff between a request as the client sent it and as the proxy forwarded it, each
// change labelled by the step that made it. The exchange's compaction steps say which steps
// ran; the shape of a change says which of them made it:
//
//   whole messages gone                      Layer-1 (old tool rounds), or Layer-3 when it ran
//   messages added                           Layer-3 (summary + acknowledgement)
//   thinking text → "...", signature kept    Layer-2
//   thinking block gone                      purify (model without thinking)
//   thinking block or signature added        signatures (repair from the cache)
//   tool_result content changed              tool-results (compressor)
//   "model" changed                          model-map (not a compaction step)
//
// A change whose likely step did not run is labelled "other". Pure functions, no Vue.

export type ChangeKind = 'added' | 'removed' | 'changed'

export interface Change {
  /** JSON path, e.g. "messages[3].content[0]". */
  path: string
  kind: ChangeKind
  /** The step that made it: a compaction layer name, "model-map" or "other". */
  layer: string
  /** What changed, as a message key of the i18n "diff.what" group. */
  what: string
  /** Short, readable renderings of the two sides ('' when absent). */
  before: string
  after: string
}

export interface DiffResult {
  /** False when a body is not JSON; changes then come from a line diff. */
  structured: boolean
  changes: Change[]
  /** How many changes each label has. */
  byLayer: Record<string, number>
}

type Json = null | boolean | number | string | Json[] | { [k: string]: Json }
type Obj = { [k: string]: Json }
type Block = Obj

const previewChars = 600

/** preview renders a value for a person: text as is, anything else as compact JSON, capped. */
export function preview(v: Json | undefined): string {
  if (v === undefined) return ''
  const s = typeof v === 'string' ? v : JSON.stringify(v)
  return s.length > previewChars ? `${s.slice(0, previewChars)}… (+${s.length - previewChars})` : s
}

function isObj(v: unknown): v is Obj {
  return v !== null && typeof v === 'object' && !Array.isArray(v)
}

function same(a: Json | undefined, b: Json | undefined): boolean {
  return JSON.stringify(a) === JSON.stringify(b)
}

/** Content blocks of a message; a string content is one text block. */
function blocks(m: Json | undefined): Block[] {
  if (!isObj(m)) return []
  const c = m.content
  if (typeof c === 'string') return [{ type: 'text', text: c }]
  if (Array.isArray(c)) return c.filter(isObj)
  return []
}

const isThinking = (b: Block): boolean => b.type === 'thinking' || b.type === 'redacted_thinking'

/**
 * skeleton identifies a message across the rewrite: its role and its non-thinking blocks
 * (text by content, tool_use and tool_result by id, others by type). The steps that edit a
 * message in place (Layer-2, purify, signatures, tool-results) leave it unchanged.
 */
function skeleton(m: Json): string {
  const role = isObj(m) ? String(m.role ?? '') : ''
  const parts = blocks(m)
    .filter((b) => !isThinking(b))
    .map((b) => {
      switch (b.type) {
        case 'text':
          return `t:${String(b.text ?? '')}`
        case 'tool_use':
          return `u:${String(b.id ?? '')}`
        case 'tool_result':
          return `r:${String(b.tool_use_id ?? '')}`
        default:
          return `o:${String(b.type ?? '')}`
      }
    })
  return `${role}|${parts.join('|')}`
}

/** lcs returns index pairs of a longest common subsequence of two key lists. */
export function lcs(a: string[], b: string[]): [number, number][] {
  const n = a.length
  const m = b.length
  // Trim the common head and tail first: a rewrite touches a few places of a long history.
  let head = 0
  while (head < n && head < m && a[head] === b[head]) head++
  let tail = 0
  while (tail < n - head && tail < m - head && a[n - 1 - tail] === b[m - 1 - tail]) tail++
  const ai = a.slice(head, n - tail)
  const bi = b.slice(head, m - tail)
  const rows = ai.length
  const cols = bi.length
  const table: Uint32Array[] = []
  for (let i = 0; i <= rows; i++) table.push(new Uint32Array(cols + 1))
  for (let i = rows - 1; i >= 0; i--) {
    const row = table[i] as Uint32Array
    const below = table[i + 1] as Uint32Array
    for (let j = cols - 1; j >= 0; j--) {
      row[j] = ai[i] === bi[j] ? (below[j + 1] as number) + 1 : Math.max(below[j] as number, row[j + 1] as number)
    }
  }
  const pairs: [number, number][] = []
  for (let k = 0; k < head; k++) pairs.push([k, k])
  let i = 0
  let j = 0
  while (i < rows && j < cols) {
    if (ai[i] === bi[j]) {
      pairs.push([head + i, head + j])
      i++
      j++
    } else if (((table[i + 1] as Uint32Array)[j] as number) >= ((table[i] as Uint32Array)[j + 1] as number)) {
      i++
    } else {
      j++
    }
  }
  for (let k = 0; k < tail; k++) pairs.push([n - tail + k, m - tail + k])
  return pairs
}

/** pick returns the first of the candidate layers that ran, else "other". */
function pick(ran: Set<string>, ...candidates: string[]): string {
  for (const c of candidates) if (c === 'model-map' || ran.has(c)) return c
  return 'other'
}

function diffBlocks(path: string, before: Block[], after: Block[], ran: Set<string>, out: Change[]): void {
  // Thinking blocks pair up in order; the other blocks pair up in order too (the skeleton
  // matched, so they are the same blocks).
  const tb = before.map((b, i) => [b, i] as const).filter(([b]) => isThinking(b))
  const ta = after.map((b, i) => [b, i] as const).filter(([b]) => isThinking(b))
  const ob = before.map((b, i) => [b, i] as const).filter(([b]) => !isThinking(b))
  const oa = after.map((b, i) => [b, i] as const).filter(([b]) => !isThinking(b))

  for (let k = 0; k < Math.max(tb.length, ta.length); k++) {
    const b = tb[k]
    const a = ta[k]
    if (b !== undefined && a === undefined) {
      out.push({
        path: `${path}.content[${b[1]}]`,
        kind: 'removed',
        layer: pick(ran, 'purify', 'Layer-2'),
        what: 'thinkingRemoved',
        before: preview(b[0].thinking ?? b[0]),
        after: '',
      })
    } else if (b === undefined && a !== undefined) {
      out.push({
        path: `${path}.content[${a[1]}]`,
        kind: 'added',
        layer: pick(ran, 'signatures'),
        what: 'thinkingRestored',
        before: '',
        after: preview(a[0].signature ?? a[0]),
      })
    } else if (b !== undefined && a !== undefined && !same(b[0], a[0])) {
      const [bb] = b
      const [aa] = a
      if (bb.thinking !== aa.thinking) {
        out.push({
          path: `${path}.content[${a[1]}].thinking`,
          kind: 'changed',
          layer: pick(ran, 'Layer-2'),
          what: 'thinkingElided',
          before: preview(bb.thinking),
          after: preview(aa.thinking),
        })
      }
      if (bb.signature !== aa.signature) {
        out.push({
          path: `${path}.content[${a[1]}].signature`,
          kind: bb.signature === undefined ? 'added' : 'changed',
          layer: pick(ran, 'signatures'),
          what: 'signatureRepaired',
          before: preview(bb.signature),
          after: preview(aa.signature),
        })
      }
    }
  }

  for (let k = 0; k < Math.max(ob.length, oa.length); k++) {
    const b = ob[k]
    const a = oa[k]
    if (b !== undefined && a !== undefined && same(b[0], a[0])) continue
    const blk = (a ?? b)?.[0]
    const toolResult = blk?.type === 'tool_result'
    out.push({
      path: `${path}.content[${(a ?? b)?.[1] ?? k}]`,
      kind: b === undefined ? 'added' : a === undefined ? 'removed' : 'changed',
      layer: toolResult ? pick(ran, 'tool-results') : pick(ran, 'tool-results', 'signatures'),
      what: toolResult ? 'toolResultCompressed' : 'blockChanged',
      before: preview(b?.[0].content ?? b?.[0]),
      after: preview(a?.[0].content ?? a?.[0]),
    })
  }
}

/**
 * diffRequests compares the received and forwarded bodies. layers are the compaction steps
 * the exchange recorded (Exchange.layers or its compaction[].layer). An empty forwarded body
 * means "forwarded as received": no changes.
 */
export function diffRequests(received: string, forwarded: string, layers: string[]): DiffResult {
  const ran = new Set(layers)
  const out: Change[] = []
  if (forwarded === '' || forwarded === received) return { structured: true, changes: [], byLayer: {} }
  let rb: Json
  let fb: Json
  try {
    rb = JSON.parse(received) as Json
    fb = JSON.parse(forwarded) as Json
  } catch {
    return lineDiff(received, forwarded, layers)
  }
  if (!isObj(rb) || !isObj(fb)) return lineDiff(received, forwarded, layers)

  // Top-level fields.
  const keys = new Set([...Object.keys(rb), ...Object.keys(fb)])
  for (const k of keys) {
    if (k === 'messages' || same(rb[k], fb[k])) continue
    const kind: ChangeKind = !(k in rb) ? 'added' : !(k in fb) ? 'removed' : 'changed'
    let layer = 'other'
    let what = 'fieldChanged'
    if (k === 'model') {
      layer = 'model-map'
      what = 'modelMapped'
    } else if (k === 'system') {
      layer = pick(ran, 'Layer-3', 'tool-results')
    } else if (k === 'thinking') {
      layer = pick(ran, 'purify')
    }
    out.push({ path: k, kind, layer, what, before: preview(rb[k]), after: preview(fb[k]) })
  }

  // Messages: align by skeleton, then compare the pairs block by block.
  const rm = Array.isArray(rb.messages) ? rb.messages : []
  const fm = Array.isArray(fb.messages) ? fb.messages : []
  const pairs = lcs(rm.map(skeleton), fm.map(skeleton))
  const matchedR = new Set(pairs.map(([i]) => i))
  const matchedF = new Set(pairs.map(([, j]) => j))
  const removedLayer = ran.has('Layer-3') ? 'Layer-3' : pick(ran, 'Layer-1', 'purify')
  for (let i = 0; i < rm.length; i++) {
    if (matchedR.has(i)) continue
    out.push({
      path: `messages[${i}]`,
      kind: 'removed',
      layer: removedLayer,
      what: removedLayer === 'Layer-3' ? 'messageSummarised' : 'messageRemoved',
      before: messagePreview(rm[i]),
      after: '',
    })
  }
  for (let j = 0; j < fm.length; j++) {
    if (matchedF.has(j)) continue
    out.push({
      path: `messages[${j}]`,
      kind: 'added',
      layer: pick(ran, 'Layer-3'),
      what: 'messageAdded',
      before: '',
      after: messagePreview(fm[j]),
    })
  }
  for (const [i, j] of pairs) {
    if (same(rm[i], fm[j])) continue
    diffBlocks(`messages[${j}]`, blocks(rm[i]), blocks(fm[j]), ran, out)
  }
  return { structured: true, changes: out, byLayer: count(out) }
}

function messagePreview(m: Json | undefined): string {
  if (!isObj(m)) return preview(m)
  const text = blocks(m)
    .map((b) => {
      switch (b.type) {
        case 'text':
          return String(b.text ?? '')
        case 'tool_use':
          return `[tool_use ${String(b.name ?? '')} ${String(b.id ?? '')}]`
        case 'tool_result':
          return `[tool_result ${String(b.tool_use_id ?? '')}]`
        case 'thinking':
          return '[thinking]'
        default:
          return `[${String(b.type ?? '')}]`
      }
    })
    .join(' ')
  return preview(`${String(m.role ?? '')}: ${text}`)
}

function count(changes: Change[]): Record<string, number> {
  const by: Record<string, number> = {}
  for (const c of changes) by[c.layer] = (by[c.layer] ?? 0) + 1
  return by
}

/** lineDiff is the fallback for bodies that are not JSON objects. */
function lineDiff(received: string, forwarded: string, layers: string[]): DiffResult {
  const a = received.split('\n')
  const b = forwarded.split('\n')
  const pairs = lcs(a, b)
  const ma = new Set(pairs.map(([i]) => i))
  const mb = new Set(pairs.map(([, j]) => j))
  const layer = layers.length === 1 ? (layers[0] as string) : 'other'
  const out: Change[] = []
  a.forEach((line, i) => {
    if (!ma.has(i)) out.push({ path: `line ${i + 1}`, kind: 'removed', layer, what: 'lineChanged', before: preview(line), after: '' })
  })
  b.forEach((line, j) => {
    if (!mb.has(j)) out.push({ path: `line ${j + 1}`, kind: 'added', layer, what: 'lineChanged', before: '', after: preview(line) })
  })
  return { structured: false, changes: out, byLayer: count(out) }
}
