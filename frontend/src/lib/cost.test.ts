import { afterEach, describe, expect, it } from 'vitest'
import { setLocale } from '../i18n'
import { costBreakdown, costText, inputSplit, usd } from './cost'

afterEach(() => setLocale('en'))

describe('cost formatting', () => {
  it('shows dollars to the cent, and two significant digits below a dollar', () => {
    expect([0, 0.0042, 0.036, 0.11925, 0.5, 1, 2.5, 1234.567].map(usd)).toEqual(['$0.00', '$0.0042', '$0.036', '$0.12', '$0.50', '$1.00', '$2.50', '$1,234.57'])
  })

  it('says so when a request has no price rather than showing a cost of zero', () => {
    expect(costText(undefined)).toBe('–')
    expect(costText({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 })).toBe('$0.00')
    expect(costBreakdown(undefined)).toBe('No price for this model (Settings → Prices)')
    expect(costBreakdown({ input: 0.036, output: 0.03, cacheRead: 0.042, cacheWrite: 0.01125, total: 0.11925 })).toBe(
      'input $0.036 · output $0.030 · cache read $0.042 · cache write $0.011',
    )
  })

  it('splits the input into new, cached and written tokens', () => {
    const x = { inputTokens: 12000, cacheReadTokens: 140000, cacheWriteTokens: 3000 }
    expect(inputSplit(x)).toBe('12K new · 140K cached · 3K written')
    expect(inputSplit(x, true)).toBe('12,000 new · 140,000 cached · 3,000 written')
    setLocale('zh-CN')
    expect(inputSplit(x, true)).toBe('新输入 12,000 · 缓存读取 140,000 · 缓存写入 3,000')
  })
})
