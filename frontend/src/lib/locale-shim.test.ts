import { afterEach, describe, expect, it, vi } from 'vitest'

describe('locale shim', () => {
  afterEach(() => {
    // Back to the environment's own navigator.language.
    delete (navigator as unknown as Record<string, unknown>).language
    delete (navigator as unknown as Record<string, unknown>).languages
  })

  it('replaces a language tag Intl rejects (WebKitGTK under LANG=C says "C")', async () => {
    Object.defineProperty(navigator, 'language', { configurable: true, get: () => 'C' })
    Object.defineProperty(navigator, 'languages', { configurable: true, get: () => ['C'] })
    expect(() => new Intl.NumberFormat(navigator.language)).toThrow(RangeError)
    vi.resetModules()
    await import('./locale-shim')
    expect(navigator.language).toBe('en-US')
    expect(() => new Intl.NumberFormat(navigator.language)).not.toThrow()
    // uPlot formats with navigator.language as it loads.
    await expect(import('uplot')).resolves.toBeDefined()
  })

  it('leaves a valid language alone', async () => {
    Object.defineProperty(navigator, 'language', { configurable: true, get: () => 'zh-CN' })
    vi.resetModules()
    await import('./locale-shim')
    expect(navigator.language).toBe('zh-CN')
  })
})
