// Self-update: its state, "check now", and "restart to finish" in the window.

import { defineStore } from 'pinia'
import { ref } from 'vue'
import { errorMessage } from '../api/errors'
import type { UpdateStatus } from '../api/models'
import { updates as api } from '../api/updates'

export const useUpdatesStore = defineStore('updates', () => {
  const status = ref<UpdateStatus | null>(null)
  const busy = ref(false)
  const error = ref('')

  async function run(fn: () => Promise<UpdateStatus | void>): Promise<void> {
    busy.value = true
    error.value = ''
    try {
      const v = await fn()
      if (v) status.value = v
    } catch (err) {
      error.value = errorMessage(err)
    } finally {
      busy.value = false
    }
  }

  /** subscribe follows pushed states and loads the current one; returns the stop function. */
  function subscribe(): () => void {
    const off = api.onStatus((s) => {
      status.value = s
    })
    void run(api.status)
    return off
  }

  return {
    status,
    busy,
    error,
    subscribe,
    /** Only the window can restart itself. */
    canRestart: api.canRestart,
    check: () => run(api.check),
    restart: () => run(api.restart),
  }
})
