// Estimated costs and input token splits for people. Every cost is computed by the backend
// from its price table (pricing.table, app/pricing); the UI only formats them.

import type { Cost } from '../api/models'
import { currentLocale, t } from '../i18n'
import { compact, num } from './format'

/**
 * usd renders dollars: to the cent from a dollar up, two significant digits below it (a
 * request's cost is often a fraction of a cent: $0.036, $0.0042).
 */
export function usd(v: number | undefined): string {
  const x = v ?? 0
  const small = x !== 0 && Math.abs(x) < 1
  return new Intl.NumberFormat(currentLocale(), {
    style: 'currency',
    currency: 'USD',
    ...(small ? { minimumSignificantDigits: 2, maximumSignificantDigits: 2 } : { minimumFractionDigits: 2, maximumFractionDigits: 2 }),
  }).format(x)
}

/** costText is an estimated cost, or '–' when there is none (the model has no price). */
export function costText(c: Cost | undefined | null): string {
  return c ? usd(c.total) : '–'
}

/** costBreakdown names what each kind of token cost: "input $0.04 · output $0.03 · …". */
export function costBreakdown(c: Cost | undefined | null): string {
  if (!c) return t('cost.none')
  return t('cost.breakdown', { i: usd(c.input), o: usd(c.output), cr: usd(c.cacheRead), cw: usd(c.cacheWrite) })
}

export interface InputTokens {
  inputTokens: number
  cacheReadTokens: number
  cacheWriteTokens: number
}

/**
 * inputSplit says how the prompt's tokens were billed: "12k new · 140k cached · 3k written"
 * (full: exact numbers). New tokens are the uncached input, cached ones were read from the
 * prompt cache, written ones were written to it.
 */
export function inputSplit(x: InputTokens, full = false): string {
  const f = full ? num : compact
  return t('cost.split', { fresh: f(x.inputTokens), cached: f(x.cacheReadTokens), written: f(x.cacheWriteTokens) })
}
