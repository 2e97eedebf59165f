// Self-update: its state, "check now", and "restart to finish" in the window.

import { defineStore } from 'pinia'
import { ref } from 'vue'
import { backend } from '../api/backend'
import type { UpdateStatus } from '../api/models'
import { currentDoor } from '../api/system'
import { errorMessage } from '../api/types'
import { UPDATE_STATUS } from '../events'

export const useUpdatesStore = defineStore('updates', () => {
  const status = ref<UpdateStatus | null>(null)
  const busy = ref(false)
  const error = ref('')

  async function run(fn: () => Promise<unknown>): Promise<void> {
    busy.value = true
    error.value = ''
    try {
      const v = await fn()
      if (v !== null && typeof v === 'object' && 'state' in v) status.value = v as UpdateStatus
    } catch (err) {
      error.value = errorMessage(err)
    } finally {
      busy.value = false
    }
  }

  /** subscribe follows pushed states and loads the current one; returns the stop function. */
  function subscribe(): () => void {
    const off = currentDoor().on(UPDATE_STATUS, (payload) => {
      if (payload !== null && typeof payload === 'object') status.value = payload as UpdateStatus
    })
    void run(backend.updateStatus)
    return off
  }

  return {
    status,
    busy,
    error,
    subscribe,
    check: () => run(backend.checkForUpdates),
    restart: () => run(backend.restart),
  }
})
