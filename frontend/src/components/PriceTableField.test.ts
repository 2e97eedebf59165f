import { createPinia, setActivePinia } from 'pinia'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createApp } from 'vue'
import { i18n } from '../i18n'
import { useSettingsStore } from '../stores/settings'
import { settingsView } from '../testing/fixtures'
import { installWails } from '../testing/wails'
import PriceTableField from './PriceTableField.vue'

afterEach(() => {
  delete window.go
  delete window.runtime
  document.body.innerHTML = ''
})

async function mounted() {
  const { go } = installWails()
  go.Settings.Get.mockImplementation(async () => settingsView())
  const pinia = createPinia()
  setActivePinia(pinia)
  const settings = useSettingsStore()
  await settings.load()
  const el = document.createElement('div')
  document.body.appendChild(el)
  const app = createApp(PriceTableField).use(pinia).use(i18n)
  app.mount(el)
  await vi.waitFor(() => expect(el.querySelectorAll('[data-testid=price-row]')).toHaveLength(2))
  return { el, app, settings }
}

function change(input: Element | null, value: string): void {
  const el = input as HTMLInputElement
  el.value = value
  el.dispatchEvent(new Event('change'))
}

describe('PriceTableField', () => {
  it('edits a price, and an emptied cache price follows the input price again', async () => {
    const { el, app, settings } = await mounted()
    const sonnet = el.querySelectorAll('[data-testid=price-row]')[0] as HTMLElement
    expect(sonnet.textContent).toContain('claude-sonnet-4*')
    change(sonnet.querySelector('[data-testid=price-input]'), '2.5')
    change(sonnet.querySelector('[data-testid=price-cache_read]'), '')
    expect(settings.draft?.pricing.table['claude-sonnet-4*']).toEqual({ input: 2.5, output: 15, cache_write: 3.75, cache_write_1h: 6 })
    expect(settings.dirty).toEqual(['pricing.table'])
    app.unmount()
  })

  it('adds a model pattern with input and output prices, and removes one', async () => {
    const { el, app, settings } = await mounted()
    const pattern = el.querySelector('[data-testid=price-new-pattern]') as HTMLInputElement
    pattern.value = 'my-model*'
    pattern.dispatchEvent(new Event('input'))
    for (const [id, v] of [['price-new-input', '2'], ['price-new-output', '6']] as const) {
      const input = el.querySelector(`[data-testid=${id}]`) as HTMLInputElement
      input.value = v
      input.dispatchEvent(new Event('input'))
    }
    ;(el.querySelector('[data-testid=price-add]') as HTMLButtonElement).click()
    await vi.waitFor(() => expect(el.querySelectorAll('[data-testid=price-row]')).toHaveLength(3))
    expect(settings.draft?.pricing.table['my-model*']).toEqual({ input: 2, output: 6 })
    ;(el.querySelectorAll('[data-testid=price-row]')[1]?.querySelector('button') as HTMLButtonElement).click()
    await vi.waitFor(() => expect(el.querySelectorAll('[data-testid=price-row]')).toHaveLength(2))
    expect(Object.keys(settings.draft?.pricing.table ?? {})).toEqual(['claude-sonnet-4*', 'my-model*'])
    app.unmount()
  })
})
