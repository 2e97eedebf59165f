// Shapes of the Go backend's JSON (app and store packages). Field names match the Go JSON tags;
// durations are nanoseconds (Go's time.Duration), times RFC 3339 strings ("" or the zero time
// "0001-01-01T00:00:00Z" when unset).

export interface Attempt {
  accountID: number
  accountName: string
  status: number
  error: string
  start: string
  durationNs: number
}

export interface CompactionStep {
  layer: string
  tokensBefore: number
  tokensAfter: number
  rawBefore: number
  rawAfter: number
  items: number
  durationNs: number
  cacheHit: boolean
}

export interface Bodies {
  request: string
  forwarded: string
  reply: string
}

export interface Exchange {
  seq: number
  id: string
  state: 'started' | 'finished' | string
  route: string
  method: string
  path: string
  userAgent: string
  remoteAddr: string
  sessionID: string
  model: string
  modelSent: string
  stream: boolean
  accountID: number
  accountName: string
  start: string
  firstByte: string
  end: string
  durationNs: number
  ttfbNs: number
  status: number
  errorType: string
  errorMessage: string
  streamOutcome: string
  stopReason: string
  inputTokens: number
  outputTokens: number
  cacheReadTokens: number
  cacheWriteTokens: number
  contextLimit: number
  tokensBefore: number
  tokensAfter: number
  pressureBefore: number
  pressureAfter: number
  layers: string[]
  tokensSaved: number
  signatureRecoveries: number
  crossModelDropped: number
  signatures: number
  toolUseIDs: string[]
  bytesIn: number
  bytesOut: number
  hasBodies: boolean
  bodiesTruncated: boolean
  attempts?: Attempt[]
  compaction?: CompactionStep[]
  bodies?: Bodies
}

export interface HistoryPage {
  exchanges: Exchange[]
  next: number
}

/** The history list's filters, as the door's query parameters (app/history_door.go). */
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

export interface Session {
  id: string
  client: string
  firstSeen: string
  lastSeen: string
  requests: number
  errors: number
  lastModel: string
  lastAccount: string
  contextLimit: number
  tokens: number
  pressure: number
  layersFired: string[]
  compactions: number
  tokensSaved: number
  inputTokens: number
  outputTokens: number
  cacheReadTokens: number
  cacheWriteTokens: number
}

export interface Pressure {
  session: string
  model: string
  tokens: number
  limit: number
  ratio: number
  forwardedTokens: number
  forwardedRatio: number
  usageTokens: number
  nextLayer: string
  nextThreshold: number
  layersApplied: string[]
  account: string
  bound: boolean
  at: string
}

export interface StatsRow {
  key: string
  bucket?: string
  requests: number
  errors: number
  inputTokens: number
  outputTokens: number
  cacheReadTokens: number
  cacheWriteTokens: number
  tokensSaved: number
}

export interface Stats {
  since: string
  until: string
  bucket: 'hour' | 'day' | string
  total: StatsRow
  byAccount: StatsRow[]
  byModel: StatsRow[]
  byTime: StatsRow[]
}

export interface StatsSeries {
  since: string
  until: string
  by: 'account' | 'model' | string
  bucket: 'hour' | 'day' | string
  /** key and bucket set; ordered by bucket, then key. */
  rows: StatsRow[]
}

export interface AccountView {
  id: number
  label: string
  kind: string
  baseURL: string
  /** Masked: sk-…abcd. */
  key: string
  enabled: boolean
  disabledReason?: string
  models?: string[]
  priority: number
  weight: number
  available: boolean
  /** Model (or "*") → until when the account cools down. */
  coolingUntil?: Record<string, string>
  rateLimit?: Record<string, string>
  rateLimitAt?: string
  requests: number
  tokens: number
  errors: number
  sessionsBound: number
}

/** The add/edit form. key: the secret; empty on edit keeps the stored one. */
export interface AccountInput {
  label: string
  kind: string
  baseURL: string
  key: string
  enabled?: boolean
  models: string[]
  priority: number
  weight: number
}

export interface KeyTest {
  ok: boolean
  status: number
  latencyMs: number
  model: string
  message: string
  rateLimit?: Record<string, string>
}

export interface ModelMapping {
  pattern: string
  model: string
  account?: string
}

/** store.Settings: nested by the dotted setting keys. */
export interface Settings {
  proxy: {
    port: number
    bind: string
    client_key: string
    max_body_bytes: number
    request_timeout: string
    rotation: { policy: string; session_affinity: boolean; max_attempts: number }
    model_map: ModelMapping[]
    context_limits: Record<string, number>
    default_context_limit: number
    experimental: {
      enable_signature_cache: boolean
      enable_tool_loop_recovery: boolean
      enable_cross_model_checks: boolean
      enable_usage_scaling: boolean
      context_compression_threshold_l1: number
      context_compression_threshold_l2: number
      context_compression_threshold_l3: number
    }
  }
  compaction: {
    keep_tool_rounds: number
    protect_last_messages: number
    max_tool_result_chars: number
    summary_model: string
    signature_cache_entries: number
  }
  history: {
    retention_days: number
    max_bytes: number
    store_bodies: boolean
    body_retention_days: number
    max_body_bytes: number
  }
  app: {
    autostart: boolean
    start_minimized: boolean
    check_updates: boolean
    language: string
  }
}

export interface SettingsView {
  settings: Settings
  defaults: Settings
  /** Key → value in force for this run only (command line), e.g. {"proxy.port": "8050"}. */
  overrides: Record<string, string>
  keys: string[]
}

export interface ClaudeCodeConfig {
  path: string
  exists: boolean
  configured: boolean
  baseURL: string
  backup: string
  backupAt?: string
}

/** isZeroTime: Go's zero time.Time or nothing. */
export function isZeroTime(t: string | undefined | null): boolean {
  return t === undefined || t === null || t === '' || t.startsWith('0001-01-01')
}

export interface UpdateStatus {
  /** off, idle, checking, up-to-date, downloading, ready (restart to finish), error. */
  state: string
  message: string
  current: string
  latest?: string
  /** The release source, owner/name. */
  source?: string
  signed: boolean
  checkedAt?: string
  error?: string
}
