// Upstream accounts: list with live state, add/edit/enable/disable/delete, key tests.

import { defineStore } from 'pinia'
import { ref } from 'vue'
import { accounts as api } from '../api/accounts'
import { ApiError, errorMessage } from '../api/errors'
import type { AccountInput, AccountView, KeyTest } from '../api/models'

/** The account kinds, in the order the form offers them (store.Kinds in store/accounts.go). */
export const accountKinds = ['anthropic', 'openai', 'openai-responses', 'gemini'] as const
export type AccountKind = (typeof accountKinds)[number]

/**
 * The base URL the backend stores for a kind when the form leaves it empty (store.DefaultBaseURL
 * in store/accounts.go): the form shows it as the placeholder.
 */
export function defaultBaseURL(kind: string): string {
  switch (kind) {
    case 'openai':
    case 'openai-responses':
      return 'https://api.openai.com/v1'
    case 'gemini':
      return 'https://generativelanguage.googleapis.com'
    default:
      return 'https://api.anthropic.com'
  }
}

/** What a key of a kind looks like, for the key field's placeholder. */
export function keyPlaceholder(kind: string): string {
  switch (kind) {
    case 'openai':
    case 'openai-responses':
      return 'sk-…'
    case 'gemini':
      return 'AIza…'
    default:
      return 'sk-ant-…'
  }
}

/** A new account: the base URL empty, so that the kind's default applies (and shows). */
export function emptyInput(): AccountInput {
  return { label: '', kind: 'anthropic', baseURL: '', key: '', models: [], priority: 0, weight: 1 }
}

export function inputFrom(a: AccountView): AccountInput {
  return {
    label: a.label,
    kind: a.kind,
    baseURL: a.baseURL,
    key: '',
    models: [...(a.models ?? [])],
    priority: a.priority,
    weight: a.weight,
  }
}

export interface QuotaRow {
  /** requests, tokens, input-tokens, output-tokens (or whatever else the upstream sends). */
  kind: string
  limit: string
  remaining: string
  reset: string
}

/**
 * quotaRows groups anthropic-ratelimit-* headers ("Anthropic-Ratelimit-Requests-Remaining",
 * or already without the prefix) by what they count.
 */
export function quotaRows(rateLimit: Record<string, string> | undefined): QuotaRow[] {
  const byKind = new Map<string, QuotaRow>()
  for (const [name, value] of Object.entries(rateLimit ?? {})) {
    const key = name.toLowerCase().replace(/^anthropic-ratelimit-/, '')
    const m = /^(.*)-(limit|remaining|reset)$/.exec(key)
    if (m === null) continue
    const kind = m[1] as string
    const field = m[2] as 'limit' | 'remaining' | 'reset'
    const row = byKind.get(kind) ?? { kind, limit: '', remaining: '', reset: '' }
    row[field] = value
    byKind.set(kind, row)
  }
  const order = ['requests', 'tokens', 'input-tokens', 'output-tokens']
  const rank = (k: string) => (order.includes(k) ? order.indexOf(k) : order.length)
  return [...byKind.values()].sort((a, b) => rank(a.kind) - rank(b.kind) || a.kind.localeCompare(b.kind))
}

export const useAccountsStore = defineStore('accounts', () => {
  const accounts = ref<AccountView[]>([])
  const loading = ref(false)
  const error = ref('')
  /** Validation messages of the last save, by form field (baseURL, key, …). */
  const fieldErrors = ref<Record<string, string>>({})
  const tests = ref<Record<number, KeyTest | 'running'>>({})
  const formTest = ref<KeyTest | 'running' | null>(null)
  const busy = ref(false)

  async function load(): Promise<void> {
    loading.value = true
    try {
      accounts.value = (await api.list()) ?? []
      error.value = ''
    } catch (err) {
      error.value = errorMessage(err)
    } finally {
      loading.value = false
    }
  }

  function replace(v: AccountView): void {
    const i = accounts.value.findIndex((a) => a.id === v.id)
    if (i >= 0) accounts.value.splice(i, 1, v)
    else accounts.value.push(v)
  }

  async function run<T>(fn: () => Promise<T>): Promise<T | undefined> {
    busy.value = true
    error.value = ''
    fieldErrors.value = {}
    try {
      return await fn()
    } catch (err) {
      if (err instanceof ApiError && Object.keys(err.fields).length > 0) fieldErrors.value = err.fields
      else error.value = errorMessage(err)
      return undefined
    } finally {
      busy.value = false
    }
  }

  /** save adds (id 0) or edits an account; true when it was saved. */
  async function save(id: number, input: AccountInput): Promise<boolean> {
    const v = await run(() => (id === 0 ? api.add(input) : api.update(id, input)))
    if (v === undefined) return false
    replace(v)
    return true
  }

  async function setEnabled(id: number, on: boolean): Promise<void> {
    const v = await run(() => api.setEnabled(id, on))
    if (v !== undefined) replace(v)
  }

  async function remove(id: number): Promise<void> {
    const ok = await run(async () => {
      await api.delete(id)
      return true
    })
    if (ok) accounts.value = accounts.value.filter((a) => a.id !== id)
  }

  async function test(id: number): Promise<void> {
    tests.value = { ...tests.value, [id]: 'running' }
    try {
      const r = await api.test(id)
      tests.value = { ...tests.value, [id]: r }
    } catch (err) {
      tests.value = { ...tests.value, [id]: { ok: false, status: 0, latencyMs: 0, model: '', request: '', message: errorMessage(err) } }
    }
  }

  async function testForm(id: number, input: AccountInput): Promise<void> {
    formTest.value = 'running'
    fieldErrors.value = {}
    try {
      formTest.value = await api.testKey(id, input)
    } catch (err) {
      if (err instanceof ApiError && Object.keys(err.fields).length > 0) fieldErrors.value = err.fields
      formTest.value = { ok: false, status: 0, latencyMs: 0, model: '', request: '', message: errorMessage(err) }
    }
  }

  function clearForm(): void {
    fieldErrors.value = {}
    formTest.value = null
  }

  return { accounts, loading, error, fieldErrors, tests, formTest, busy, load, save, setEnabled, remove, test, testForm, clearForm }
})
