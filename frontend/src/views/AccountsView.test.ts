import { createPinia } from 'pinia'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createApp } from 'vue'
import { i18n } from '../i18n'
import { accountView } from '../testing/fixtures'
import { installWails } from '../testing/wails'
import AccountsView from './AccountsView.vue'

afterEach(() => {
  delete window.go
  delete window.runtime
  document.body.innerHTML = ''
})

async function mount(accounts: ReturnType<typeof accountView>[]): Promise<HTMLElement> {
  const { go } = installWails()
  go.Accounts.List.mockImplementation(async () => accounts)
  const el = document.createElement('div')
  document.body.appendChild(el)
  createApp(AccountsView).use(createPinia()).use(i18n).mount(el)
  await vi.waitFor(() => expect(el.querySelectorAll('[data-testid=account]').length).toBe(accounts.length))
  return el
}

describe('AccountsView: where keys are stored', () => {
  it('says a key is in the OS keychain, with no warning', async () => {
    const el = await mount([accountView({ id: 1, secretStorage: 'keychain' })])
    expect(el.querySelector('[data-testid=account-secret-storage]')?.textContent).toContain('OS keychain')
    expect(el.querySelector('[data-testid=accounts-storage-notice]')).toBeNull()
  })

  it('says plainly when keys are kept in the database file', async () => {
    const el = await mount([accountView({ id: 1, secretStorage: 'database' })])
    expect(el.querySelector('[data-testid=account-secret-storage]')?.textContent).toContain('database file')
    expect(el.querySelector('[data-testid=accounts-storage-notice]')?.textContent).toContain('No OS keychain answered')
  })
})

describe('AccountsView: account kinds', () => {
  async function openAddForm(): Promise<{ el: HTMLElement; add: ReturnType<typeof installWails>['go']['Accounts']['Add'] }> {
    const { go } = installWails()
    go.Accounts.List.mockImplementation(async () => [])
    go.Accounts.Add.mockImplementation(async (input) => accountView({ id: 7, kind: input.kind, baseURL: input.baseURL || 'https://api.openai.com/v1' }))
    const el = document.createElement('div')
    document.body.appendChild(el)
    createApp(AccountsView).use(createPinia()).use(i18n).mount(el)
    await vi.waitFor(() => expect(el.querySelector('[data-testid=accounts-empty]')).not.toBeNull())
    el.querySelector<HTMLButtonElement>('[data-testid=account-add]')?.click()
    await vi.waitFor(() => expect(el.querySelector('[data-testid=account-form]')).not.toBeNull())
    return { el, add: go.Accounts.Add }
  }

  async function choose(el: HTMLElement, kind: string): Promise<void> {
    const select = el.querySelector<HTMLSelectElement>('[data-testid=account-kind]')
    if (select === null) throw new Error('no kind selector')
    select.value = kind
    select.dispatchEvent(new Event('change'))
    await vi.waitFor(() => expect(select.value).toBe(kind))
  }

  it('offers the four kinds, each with its default base URL as the placeholder', async () => {
    const { el } = await openAddForm()
    const options = [...el.querySelectorAll<HTMLOptionElement>('[data-testid=account-kind] option')].map((o) => o.value)
    expect(options).toEqual(['anthropic', 'openai', 'openai-responses', 'gemini'])
    const want: Record<string, string> = {
      anthropic: 'https://api.anthropic.com',
      openai: 'https://api.openai.com/v1',
      'openai-responses': 'https://api.openai.com/v1',
      gemini: 'https://generativelanguage.googleapis.com',
    }
    for (const [kind, url] of Object.entries(want)) {
      await choose(el, kind)
      await vi.waitFor(() => expect(el.querySelector<HTMLInputElement>('[data-testid=account-base-url]')?.placeholder).toBe(url))
      expect(el.querySelector('[data-testid=account-base-url-hint]')?.textContent).toContain(url)
    }
    expect(el.querySelector('[data-testid=account-base-url-hint]')?.textContent).toContain('/v1beta')
  })

  it('adds an OpenAI-compatible account at a local Ollama with the kind the form shows', async () => {
    const { el, add } = await openAddForm()
    await choose(el, 'openai')
    const set = (id: string, v: string) => {
      const input = el.querySelector<HTMLInputElement>(`[data-testid=${id}]`)
      if (input === null) throw new Error(`no ${id}`)
      input.value = v
      input.dispatchEvent(new Event('input'))
    }
    set('account-base-url', 'http://localhost:11434/v1')
    set('account-key', 'ollama')
    el.querySelector<HTMLButtonElement>('[data-testid=account-save]')?.click()
    await vi.waitFor(() => expect(add).toHaveBeenCalledTimes(1))
    expect(add.mock.calls[0]?.[0]).toMatchObject({ kind: 'openai', baseURL: 'http://localhost:11434/v1', key: 'ollama' })
  })

  it('lets a base URL left at one kind’s default follow a change of kind', async () => {
    const { go } = installWails()
    go.Accounts.List.mockImplementation(async () => [accountView({ id: 3, kind: 'anthropic', baseURL: 'https://api.anthropic.com' })])
    const el = document.createElement('div')
    document.body.appendChild(el)
    createApp(AccountsView).use(createPinia()).use(i18n).mount(el)
    await vi.waitFor(() => expect(el.querySelectorAll('[data-testid=account]').length).toBe(1))
    el.querySelector<HTMLButtonElement>('[data-testid=account-edit]')?.click()
    await vi.waitFor(() => expect(el.querySelector<HTMLInputElement>('[data-testid=account-base-url]')?.value).toBe('https://api.anthropic.com'))
    await choose(el, 'gemini')
    await vi.waitFor(() => expect(el.querySelector<HTMLInputElement>('[data-testid=account-base-url]')?.value).toBe(''))
    expect(el.querySelector<HTMLInputElement>('[data-testid=account-base-url]')?.placeholder).toBe('https://generativelanguage.googleapis.com')
  })
})
