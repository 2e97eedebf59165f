import { createPinia } from 'pinia'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createApp, nextTick } from 'vue'
import type { Pressure } from '../api/models'
import { i18n, missingKeys, setLocale } from '../i18n'
import { pressure, promptCache, session, settingsView } from '../testing/fixtures'
import { installWails } from '../testing/wails'
import SessionsView from './SessionsView.vue'

afterEach(() => {
  vi.useRealTimers()
  delete window.go
  delete window.runtime
  document.body.innerHTML = ''
})

/** settle lets the fake backend answer and the page draw: a real macrotask, so every pending
 * promise and render has run (the tests fake intervals and the clock, never setTimeout). */
async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) {
    await new Promise((resolve) => setTimeout(resolve, 0))
    await nextTick()
  }
}

async function mountSessions(p: Pressure, language = 'en'): Promise<{ el: HTMLElement; unmount: () => void }> {
  const { go } = installWails()
  const view = settingsView()
  // The page loads the settings, and with them the language they name.
  view.settings.app.language = language
  go.Settings.Get.mockImplementation(async () => view)
  go.History.Sessions.mockImplementation(async () => [session({ id: p.session })])
  go.History.Pressure.mockImplementation(async () => p)
  const el = document.createElement('div')
  document.body.appendChild(el)
  const app = createApp(SessionsView).use(createPinia()).use(i18n)
  app.mount(el)
  await settle()
  expect(el.querySelector('[data-testid=session]')).not.toBeNull()
  return { el, unmount: () => app.unmount() }
}

const text = (el: Element | null | undefined): string => el?.textContent?.replace(/\s+/g, ' ').trim() ?? ''

describe('SessionsView', () => {
  it('counts a warm cache down to cold each second, then stops its timer', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'Date'], now: new Date('2026-01-01T12:30:00Z') })
    const { el, unmount } = await mountSessions(pressure({ cache: promptCache({ tokens: 142000, coldInSeconds: 192 }) }))
    const line = () => el.querySelector('[data-testid=session-cache] [data-testid=cache-line]')
    expect(text(line())).toBe('cache warm · 142K tokens · cold in 3:12')
    expect(line()?.getAttribute('data-warm')).toBe('true')
    expect(line()?.getAttribute('title')).toContain('5 min after each use')
    expect(vi.getTimerCount()).toBe(1)

    vi.advanceTimersByTime(1000)
    await nextTick()
    expect(text(line())).toBe('cache warm · 142K tokens · cold in 3:11')
    vi.advanceTimersByTime(60_000)
    await nextTick()
    expect(text(line())).toBe('cache warm · 142K tokens · cold in 2:11')
    vi.advanceTimersByTime(130_000)
    await nextTick()
    expect(text(line())).toBe('cache warm · 142K tokens · cold in 0:01')
    vi.advanceTimersByTime(1000)
    await nextTick()
    expect(text(line())).toBe('cache cold')
    expect(line()?.getAttribute('data-warm')).toBe('false')
    expect(vi.getTimerCount()).toBe(0)
    unmount()
  })

  it('clears the countdown’s timer when the page goes away', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'Date'], now: new Date('2026-01-01T12:30:00Z') })
    const { el, unmount } = await mountSessions(pressure({ cache: promptCache() }))
    expect(el.querySelector('[data-testid=cache-line]')?.getAttribute('data-warm')).toBe('true')
    expect(vi.getTimerCount()).toBe(1)
    unmount()
    expect(vi.getTimerCount()).toBe(0)
  })

  it('says a cold cache is cold, with no timer', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'Date'], now: new Date('2026-01-01T12:30:00Z') })
    const { el, unmount } = await mountSessions(pressure({ cache: promptCache({ warm: false, coldInSeconds: 0, summary: 'cache cold (142k tokens were cached)' }) }))
    expect(text(el.querySelector('[data-testid=session-cache] [data-testid=cache-line]'))).toBe('cache cold')
    expect(vi.getTimerCount()).toBe(0)
    unmount()
  })

  it('says nothing of a cache when none was seen', async () => {
    const { el, unmount } = await mountSessions(pressure())
    expect(el.querySelector('[data-testid=session-cache]')).toBeNull()
    expect(el.querySelector('[data-testid=cache-line]')).toBeNull()
    unmount()
  })

  it.each([
    ['setting', 'your setting'],
    ['default', 'default'],
    ['beta', 'raised by the 1M beta'],
    ['learned', 'learned from the upstream'],
  ])('shows the window with why it applies: %s', async (source, want) => {
    const { el, unmount } = await mountSessions(pressure({ limit: 180000, limitSource: source }))
    const w = el.querySelector('[data-testid=session-window]')
    expect(text(w)).toBe(`180,000 tokens · ${want}`)
    expect(w?.querySelector('[data-testid=context-window]')?.getAttribute('data-source')).toBe(source)
    // The bar is drawn against the same window.
    expect(text(el.querySelector('[data-testid=pressure]'))).toContain('90K / 180K')
    unmount()
  })

  it('says all of it in Chinese', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'Date'], now: new Date('2026-01-01T12:30:00Z') })
    try {
      const { el, unmount } = await mountSessions(pressure({ limit: 120000, limitSource: 'learned', cache: promptCache({ tokens: 142000, coldInSeconds: 75 }) }), 'zh-CN')
      expect(text(el.querySelector('[data-testid=session-window] [data-testid=context-window-source]'))).toBe('从上游得知')
      expect(text(el.querySelector('[data-testid=cache-line]'))).toContain('1:15 后失效')
      unmount()
    } finally {
      setLocale('en')
    }
    expect(missingKeys).toEqual([])
  })
})
