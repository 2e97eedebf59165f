import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { en } from '../i18n/en'
import { zhCN } from '../i18n/zh-CN'
import { clock, coldIn, sourceKey, windowSources } from './window'

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..')

describe('windowSources', () => {
  it('are the sources the server records (proxy/compact/limits.go)', () => {
    const src = readFileSync(join(repo, 'proxy/compact/limits.go'), 'utf8')
    const sources = [...src.matchAll(/^\s*Window\w+\s*= "([^"]+)"/gm)].map((m) => m[1])
    expect(sources.length).toBeGreaterThan(3)
    expect([...windowSources].sort()).toEqual(sources.sort())
  })

  it('each has a label and an explanation in both languages', () => {
    for (const m of [en, zhCN]) {
      expect(Object.keys(m.window.source).sort()).toEqual([...windowSources].sort())
      expect(Object.keys(m.window.sourceHelp).sort()).toEqual([...windowSources].sort())
    }
  })
})

describe('sourceKey', () => {
  it.each([
    ['a limit the user set', 'setting', 'window.source.setting'],
    ['the 1M beta', 'beta', 'window.source.beta'],
    ['a window learned from the upstream', 'learned', 'window.source.learned'],
    ['an exchange recorded before sources were', '', ''],
    ['a source this UI does not know', 'guessed', ''],
    ['no field', undefined, ''],
  ])('names %s', (_, source, want) => {
    expect(sourceKey(source)).toBe(want)
  })
})

describe('coldIn', () => {
  it.each([
    ['as the server said at the time it said it', 192, 1000, 1000, 192],
    ['a second less a second later', 192, 1000, 2000, 191],
    ['a part-second as the whole second it is still in', 192, 1000, 1500, 192],
    ['nothing once the time has passed', 5, 1000, 9000, 0],
    ['nothing for a cold cache', 0, 1000, 1000, 0],
  ])('counts %s', (_, left, fetchedAt, now, want) => {
    expect(coldIn(left, fetchedAt, now)).toBe(want)
  })
})

describe('clock', () => {
  it.each([
    [192, '3:12'],
    [59, '0:59'],
    [0, '0:00'],
    [3600, '60:00'],
    [-4, '0:00'],
  ])('renders %d s as %s', (s, want) => {
    expect(clock(s)).toBe(want)
  })
})
