// Connecting clients: the one-click Claude Code setup and its undo.

import { defineStore } from 'pinia'
import { ref } from 'vue'
import { clients as api } from '../api/clients'
import { errorMessage } from '../api/errors'
import type { ClaudeCodeConfig } from '../api/models'

export const useClientsStore = defineStore('clients', () => {
  const claudeCode = ref<ClaudeCodeConfig | null>(null)
  const busy = ref(false)
  const error = ref('')

  async function run(fn: () => Promise<ClaudeCodeConfig>): Promise<void> {
    busy.value = true
    error.value = ''
    try {
      claudeCode.value = await fn()
    } catch (err) {
      error.value = errorMessage(err)
    } finally {
      busy.value = false
    }
  }

  return {
    claudeCode,
    busy,
    error,
    load: () => run(api.claudeCodeStatus),
    configure: () => run(api.configureClaudeCode),
    undo: () => run(api.undoClaudeCode),
  }
})
