// The Clients facade (app.Clients): pointing coding agents (Claude Code) at the proxy, and undo.

import * as Go from '../../wailsjs/go/app/Clients'
import { api, bind } from './door'

const claudeCode = `${api}/clients/claude-code`

export const clients = {
  claudeCodeStatus: bind(Go.ClaudeCodeStatus, () => ({ method: 'GET', path: claudeCode })),
  configureClaudeCode: bind(Go.ConfigureClaudeCode, () => ({ method: 'POST', path: claudeCode, body: {} })),
  undoClaudeCode: bind(Go.UndoClaudeCode, () => ({ method: 'POST', path: `${claudeCode}/undo`, body: {} })),
}
