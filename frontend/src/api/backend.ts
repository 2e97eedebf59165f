// One function per bound Go method used by the pages, through whichever door is open (see
// door.ts). Replies are trusted to have the shapes of models.ts (they come from our own Go).

import type {
  AccountInput,
  AccountView,
  ClaudeCodeConfig,
  Exchange,
  HistoryPage,
  HistoryQuery,
  KeyTest,
  Pressure,
  Session,
  SettingsView,
  Stats,
  StatsSeries,
  UpdateStatus,
} from './models'
import { currentDoor } from './system'

async function call<T>(method: string, ...args: unknown[]): Promise<T> {
  return (await currentDoor().call(method, ...args)) as T
}

/** Strips empty values, so both doors get the same filter. */
function clean(q: object): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(q)) if (v !== undefined && v !== null && v !== '') out[k] = String(v)
  return out
}

export const backend = {
  accounts: () => call<AccountView[]>('Accounts'),
  addAccount: (input: AccountInput) => call<AccountView>('AddAccount', input),
  updateAccount: (id: number, input: AccountInput) => call<AccountView>('UpdateAccount', id, input),
  setAccountEnabled: (id: number, on: boolean) => call<AccountView>('SetAccountEnabled', id, on),
  deleteAccount: (id: number) => call<unknown>('DeleteAccount', id),
  testAccount: (id: number) => call<KeyTest>('TestAccount', id),
  testKey: (id: number, input: AccountInput) => call<KeyTest>('TestKey', id, input),

  settings: () => call<SettingsView>('Settings'),
  setSettings: (values: Record<string, unknown>) => call<SettingsView>('SetSettings', values),
  resetSettings: (keys: string[]) => call<SettingsView>('ResetSettings', keys),

  history: (q: HistoryQuery) => call<HistoryPage>('History', clean(q)),
  historyDetail: (id: string) => call<Exchange>('HistoryDetail', id),
  exportHistory: (q: HistoryQuery) => call<string>('ExportHistory', clean(q)),
  sessions: (q: { since?: string; limit?: number }) => call<Session[]>('HistorySessions', clean(q)),
  pressure: (id: string) => call<Pressure>('SessionPressure', id),
  stats: (q: { since?: string; until?: string; bucket?: string }) => call<Stats>('HistoryStats', clean(q)),
  statsSeries: (q: { since?: string; until?: string; bucket?: string; by: 'account' | 'model' }) =>
    call<StatsSeries>('HistoryStatsSeries', clean(q)),

  claudeCodeStatus: () => call<ClaudeCodeConfig>('ClaudeCodeStatus'),
  configureClaudeCode: () => call<ClaudeCodeConfig>('ConfigureClaudeCode'),
  undoClaudeCode: () => call<ClaudeCodeConfig>('UndoClaudeCode'),

  updateStatus: () => call<UpdateStatus>('UpdateStatus'),
  checkForUpdates: () => call<UpdateStatus>('CheckForUpdates'),
  /** Only the window can restart itself. */
  canRestart: () => currentDoor().kind === 'wails',
  restart: () => call<unknown>('Restart'),
}

export type Backend = typeof backend
