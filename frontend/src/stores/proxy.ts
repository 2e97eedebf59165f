// The proxy domain: its status, live updates and the on/off switch.

import { defineStore } from 'pinia'
import { computed, ref } from 'vue'
import { errorMessage } from '../api/errors'
import type { ProxyStatus } from '../api/models'
import { proxy as api } from '../api/proxy'

export const useProxyStore = defineStore('proxy', () => {
  /** The last status the backend reported; null until the first one arrives. */
  const status = ref<ProxyStatus | null>(null)
  /** A call (toggle) is in flight. */
  const busy = ref(false)
  /** Why the last toggle failed; cleared by the next toggle. */
  const actionError = ref('')
  /** Why the last status fetch failed; cleared by any status that arrives. */
  const loadError = ref('')

  // Bumped whenever a status is applied from a push or a toggle reply. A fetch started before a
  // bump carries older news and is dropped, so a slow refresh never overwrites a newer event.
  let epoch = 0

  const running = computed(() => status.value?.running === true)

  /** Every error worth showing, the backend's own first, without repeats. */
  const errors = computed(() => {
    const all = [status.value?.error ?? '', actionError.value, loadError.value]
    return [...new Set(all.filter((e) => e !== ''))]
  })

  function apply(s: ProxyStatus): void {
    epoch++
    status.value = s
    loadError.value = ''
  }

  async function refresh(): Promise<void> {
    const started = epoch
    try {
      const s = await api.status()
      if (epoch === started || status.value === null) apply(s)
    } catch (err) {
      loadError.value = errorMessage(err)
    }
  }

  /** setEnabled switches the proxy on or off, then re-reads the status. */
  async function setEnabled(on: boolean): Promise<void> {
    if (busy.value) return
    busy.value = true
    actionError.value = ''
    try {
      apply(await api.setEnabled(on))
    } catch (err) {
      actionError.value = errorMessage(err)
    } finally {
      await refresh()
      busy.value = false
    }
  }

  /** toggle flips the proxy to the opposite of what it last reported; no-op while unknown or busy. */
  async function toggle(): Promise<void> {
    if (status.value === null) return
    await setEnabled(!status.value.running)
  }

  /** subscribe starts live updates and fetches the current status; returns the stop function. */
  function subscribe(): () => void {
    const off = api.onStatus(apply)
    void refresh()
    return off
  }

  return { status, busy, actionError, loadError, running, errors, refresh, setEnabled, toggle, subscribe }
})
