// The backend's data, as the UI names it. Every shape here is generated from the Go structs
// (frontend/wailsjs/go/models.ts, written by `make bindings`): a Go change that the UI does not
// follow fails the type check. Only UI-side helpers and the query parameter names (Go takes
// them as map[string]string) are written by hand.
//
// Conventions of the Go JSON: durations are nanoseconds (time.Duration), times RFC 3339 strings
// (the zero time "0001-01-01T00:00:00Z" when unset, or left out when the Go field says omitzero).

import type { app, clients, store, update } from '../../wailsjs/go/models'

export type ProxyStatus = app.ProxyStatus

export type AccountView = app.AccountView
/** The add/edit form. key: the secret; empty on edit keeps the stored one. */
export type AccountInput = app.AccountInput
export type KeyTest = app.KeyTest

export type Settings = store.Settings
export type SettingsView = app.SettingsView
export type ModelMapping = store.ModelMapping
export type ModelPrice = store.ModelPrice

export type Exchange = store.Exchange
export type Attempt = store.Attempt
export type CompactionStep = store.CompactionStep
/** One change a step made to the request (the ledger; proxy/compact/ledger.go). */
export type Edit = store.Edit
export type HistoryPage = store.HistoryPage
export type Session = store.Session
export type ModelUsage = store.ModelUsage
/** An estimated cost in US dollars by kind of token (app/pricing computes it). */
export type Cost = store.Cost
export type Pressure = app.Pressure
/** A session's prompt cache at the upstream (app.PromptCache): warm, tokens, cold in. */
export type PromptCache = app.PromptCache
/** How a recorded request is re-sent (app.ReplayOptions): accountID 0 lets the pool choose, model '' keeps it. */
export type ReplayOptions = app.ReplayOptions
export type ReplayResult = app.ReplayResult
export type Stats = store.Stats
export type StatsRow = store.StatsRow
export type StatsSeries = store.StatsSeries

export type ClaudeCodeConfig = clients.ClaudeCodeConfig

export type UpdateStatus = update.Status

/**
 * The history list's filters, by the names History.List and GET /longhaul/v1/history read
 * (app/door: historyFilter). Empty values do not filter.
 */
export interface HistoryQuery {
  since?: string
  until?: string
  status?: '' | '2xx' | '3xx' | '4xx' | '5xx' | 'error' | 'ok'
  model?: string
  account?: string
  session?: string
  route?: string
  compacted?: '' | 'true'
  q?: string
  before?: string
  limit?: string
}

/** isZeroTime: Go's zero time.Time or nothing. */
export function isZeroTime(t: string | undefined | null): boolean {
  return t === undefined || t === null || t === '' || t.startsWith('0001-01-01')
}
