import { describe, expect, it } from 'vitest'
import { en } from './en'
import { i18n, missingKeys, setLocale } from './index'
import { zhCN } from './zh-CN'

function keys(o: unknown, prefix = ''): string[] {
  if (o === null || typeof o !== 'object') return [prefix]
  return Object.entries(o as Record<string, unknown>).flatMap(([k, v]) => keys(v, prefix ? `${prefix}.${k}` : k))
}

describe('messages', () => {
  it('zh-CN has exactly the keys of en', () => {
    expect(keys(zhCN).sort()).toEqual(keys(en).sort())
  })

  it('has no empty message and keeps the parameters of each English one', () => {
    const flat = (o: unknown) => Object.fromEntries(keys(o).map((k) => [k, k.split('.').reduce<unknown>((v, p) => (v as Record<string, unknown>)[p], o)]))
    const e = flat(en)
    const z = flat(zhCN)
    for (const [k, v] of Object.entries(e)) {
      expect(String(z[k]).trim(), k).not.toBe('')
      const params = (s: unknown) => [...String(s).matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort()
      expect(params(z[k]), k).toEqual(params(v))
    }
  })

  it('records a missing key', () => {
    setLocale('zh-CN')
    i18n.global.t('no.such.key')
    setLocale('en')
    expect(missingKeys.some((k) => k.endsWith(':no.such.key'))).toBe(true)
    missingKeys.splice(0)
  })
})
