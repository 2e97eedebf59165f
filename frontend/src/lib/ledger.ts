// The ledger of a request as the detail page draws it: each step that changed the request,
// with the edits the server recorded for it (proxy/compact/ledger.go: which message or block of
// the request as received, what kind of change, the tokens and short previews of each side).
// Nothing here looks at the bodies: what a step did is what the server wrote down, never a
// guess from the shape of the difference. Pure functions, no Vue.

import type { CompactionStep, Edit, Exchange } from '../api/models'

/**
 * Every kind of edit the server records (compact.EditKind in proxy/compact/ledger.go), each
 * labelled by the i18n message ledger.kind.<kind>. ledger.test.ts reads the Go constants and
 * fails when one is missing here.
 */
export const editKinds = [
  'rounds-removed',
  'results-removed',
  'thinking-elided',
  'messages-summarised',
  'summary-added',
  'result-shortened',
  'image-replaced',
  'result-folded',
  'signature-restored',
  'thinking-restored',
  'thinking-dropped',
  'thinking-removed',
  'turns-joined',
  'message-restored',
  'block-changed',
  'block-removed',
  'block-added',
  'message-removed',
  'message-added',
  'more',
  'model-renamed',
  'translated',
] as const

/** Steps the proxy records around compaction (proxy.StepModelMap, proxy.StepTranslate): in the
 * ledger, but no compaction — the monitor's compaction column leaves them out. */
export const proxySteps: ReadonlySet<string> = new Set(['model-map', 'translate'])

/** Kinds whose two sides are names (models, protocols), shown on one line as before → after. */
const inlineKinds: ReadonlySet<string> = new Set(['model-renamed', 'translated'])

export interface LedgerEntry {
  kind: string
  /** Where in the request as received: "messages[12].content[1]", "messages[3–40]"; '' for
   * none (a message the step built, the model, the whole request). */
  path: string
  count: number
  tokensBefore: number
  tokensAfter: number
  before: string
  after: string
  note: string
  /** The sides are short names, drawn as "before → after". */
  inline: boolean
}

export interface LedgerSection {
  layer: string
  tokensBefore: number
  tokensAfter: number
  items: number
  durationNs: number
  cacheHit: boolean
  /** Tokens of the upstream's prompt cache the step made it write again (0: none, or cold). */
  rewrite: number
  /** Why the step waited for the prompt cache to go cold instead of running ('' when it ran):
   * such a step changed nothing, saved nothing and carries no edits. */
  deferred: string
  entries: LedgerEntry[]
}

export interface Ledger {
  sections: LedgerSection[]
  /** False when no step carries edits or waited: the exchange was recorded before the ledger,
   * and its steps are totals only. */
  recorded: boolean
  /** How many of the steps waited for the prompt cache (deferred) rather than ran. */
  waited: number
}

/** editPath names the edited part of the request as received, as a JSON path. */
export function editPath(e: Edit): string {
  if (e.message < 0) return ''
  if (e.through > e.message) return `messages[${e.message}–${e.through}]`
  if (e.block >= 0) return `messages[${e.message}].content[${e.block}]`
  return `messages[${e.message}]`
}

function entry(e: Edit): LedgerEntry {
  return {
    kind: e.kind,
    path: editPath(e),
    count: e.count,
    tokensBefore: e.tokensBefore,
    tokensAfter: e.tokensAfter,
    before: e.before,
    after: e.after,
    note: e.note,
    inline: inlineKinds.has(e.kind),
  }
}

function section(s: CompactionStep): LedgerSection {
  return {
    layer: s.layer,
    tokensBefore: s.tokensBefore,
    tokensAfter: s.tokensAfter,
    items: s.items,
    durationNs: s.durationNs,
    cacheHit: s.cacheHit,
    rewrite: s.rewrite ?? 0,
    deferred: waitReason(s.deferred),
    // A step that waited changed nothing: whatever it carries is not an edit of the request.
    entries: s.deferred ? [] : (s.edits ?? []).map(entry),
  }
}

/** waitReason is a deferred step's reason without the "deferred:" the server starts it with
 * (proxy/compact/cache.go, deferral), which the page says in its own words. */
export function waitReason(deferred: string | undefined): string {
  const r = (deferred ?? '').trim()
  // A reason that is only the word stays as it is: the step still waited.
  return r.replace(/^deferred:\s*/i, '') || r
}

/** ledgerOf lists the exchange's steps in the order they ran, each with its edits. */
export function ledgerOf(e: Exchange): Ledger {
  const sections = (e.compaction ?? []).map(section)
  const waited = sections.filter((s) => s.deferred !== '').length
  // Deferred steps were recorded with the ledger: a request whose steps all waited is recorded.
  return { sections, recorded: waited > 0 || sections.some((s) => s.entries.length > 0), waited }
}
