// Connecting clients: the one-click Claude Code setup and its undo.

import { defineStore } from 'pinia'
import { ref } from 'vue'
import { backend } from '../api/backend'
import type { ClaudeCodeConfig } from '../api/models'
import { errorMessage } from '../api/types'

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
    load: () => run(backend.claudeCodeStatus),
    configure: () => run(backend.configureClaudeCode),
    undo: () => run(backend.undoClaudeCode),
  }
})
