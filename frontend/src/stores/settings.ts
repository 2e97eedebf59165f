// Settings: the effective values, an editable draft, per-field errors from the backend (and
// the local threshold-order check), save of the changed keys only, reset to defaults.

import { defineStore } from 'pinia'
import { computed, ref } from 'vue'
import { ApiError, errorMessage } from '../api/errors'
import type { Settings, SettingsView } from '../api/models'
import { settings as api } from '../api/settings'
import { setLocale, t } from '../i18n'

export const L1 = 'proxy.experimental.context_compression_threshold_l1'
export const L2 = 'proxy.experimental.context_compression_threshold_l2'
export const L3 = 'proxy.experimental.context_compression_threshold_l3'

/** getKey reads a dotted setting key from a Settings object. */
export function getKey(s: unknown, key: string): unknown {
  let v: unknown = s
  for (const part of key.split('.')) {
    if (v === null || typeof v !== 'object') return undefined
    v = (v as Record<string, unknown>)[part]
  }
  return v
}

/** setKey writes a dotted setting key into a Settings object (in place). */
export function setKey(s: unknown, key: string, value: unknown): void {
  const parts = key.split('.')
  let o = s as Record<string, unknown>
  for (const part of parts.slice(0, -1)) {
    if (o[part] === null || typeof o[part] !== 'object') o[part] = {}
    o = o[part] as Record<string, unknown>
  }
  o[parts[parts.length - 1] as string] = value
}

/** changedKeys lists the keys whose draft value differs from the saved one. */
export function changedKeys(keys: string[], saved: Settings, draft: Settings): string[] {
  return keys.filter((k) => JSON.stringify(getKey(saved, k)) !== JSON.stringify(getKey(draft, k)))
}

/**
 * thresholdError says why value cannot be the threshold at key given the other two ('' when it
 * can): 0 < L1 ≤ L2 ≤ L3 ≤ 1, as the backend checks it.
 */
export function thresholdError(key: string, value: number, s: Settings): string {
  const x = s.proxy.experimental
  if (!Number.isFinite(value) || value <= 0 || value > 1) return t('settings.errors.unit')
  if (key === L2 && value < x.context_compression_threshold_l1)
    return t('settings.errors.atLeast', { other: 'L1', value: x.context_compression_threshold_l1 })
  if (key === L3 && value < x.context_compression_threshold_l2)
    return t('settings.errors.atLeast', { other: 'L2', value: x.context_compression_threshold_l2 })
  if (key === L1 && value > x.context_compression_threshold_l2)
    return t('settings.errors.atMost', { other: 'L2', value: x.context_compression_threshold_l2 })
  if (key === L2 && value > x.context_compression_threshold_l3)
    return t('settings.errors.atMost', { other: 'L3', value: x.context_compression_threshold_l3 })
  return ''
}

function clone<T>(v: T): T {
  return JSON.parse(JSON.stringify(v)) as T
}

export const useSettingsStore = defineStore('settings', () => {
  const view = ref<SettingsView | null>(null)
  const draft = ref<Settings | null>(null)
  const fieldErrors = ref<Record<string, string>>({})
  const error = ref('')
  const saving = ref(false)
  const savedAt = ref(0)

  /** Requests offering more tools than this get a warning badge (monitor.tool_warning_count). */
  const toolWarningCount = computed(() => view.value?.settings.monitor?.tool_warning_count ?? 30)

  const dirty = computed(() =>
    view.value && draft.value ? changedKeys(view.value.keys, view.value.settings, draft.value) : [],
  )

  function adopt(v: SettingsView): void {
    view.value = v
    draft.value = clone(v.settings)
    setLocale(v.settings.app.language)
  }

  async function load(): Promise<void> {
    try {
      adopt(await api.get())
      error.value = ''
    } catch (err) {
      error.value = errorMessage(err)
    }
  }

  /** set changes one key of the draft and clears its error. */
  function set(key: string, value: unknown): void {
    if (!draft.value) return
    setKey(draft.value, key, value)
    const { [key]: _, ...rest } = fieldErrors.value
    fieldErrors.value = rest
  }

  /**
   * setThreshold changes L1, L2 or L3 unless that would put them out of order; a refused value
   * leaves the draft as it was and shows why on the field. Returns whether it was taken.
   */
  function setThreshold(key: string, value: number): boolean {
    if (!draft.value) return false
    const why = thresholdError(key, value, draft.value)
    if (why !== '') {
      fieldErrors.value = { ...fieldErrors.value, [key]: why }
      return false
    }
    set(key, value)
    return true
  }

  async function save(): Promise<boolean> {
    if (!view.value || !draft.value) return false
    const keys = dirty.value
    if (keys.length === 0) return true
    const values: Record<string, unknown> = {}
    for (const k of keys) values[k] = getKey(draft.value, k)
    saving.value = true
    error.value = ''
    try {
      adopt(await api.set(values))
      fieldErrors.value = {}
      savedAt.value = Date.now()
      return true
    } catch (err) {
      if (err instanceof ApiError && Object.keys(err.fields).length > 0) fieldErrors.value = err.fields
      else error.value = errorMessage(err)
      return false
    } finally {
      saving.value = false
    }
  }

  async function reset(keys: string[]): Promise<void> {
    saving.value = true
    try {
      adopt(await api.reset(keys))
      fieldErrors.value = {}
    } catch (err) {
      if (err instanceof ApiError && Object.keys(err.fields).length > 0) fieldErrors.value = err.fields
      else error.value = errorMessage(err)
    } finally {
      saving.value = false
    }
  }

  function discard(): void {
    if (view.value) draft.value = clone(view.value.settings)
    fieldErrors.value = {}
  }

  return { view, draft, fieldErrors, error, saving, savedAt, dirty, toolWarningCount, load, set, setThreshold, save, reset, discard }
})
