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
