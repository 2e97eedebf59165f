// Test data shaped like the Go backend's JSON, typed by the generated models: a Go field the
// fixtures do not fill (or fill with the wrong type) fails the type check.

import type { AccountView, ClaudeCodeConfig, Exchange, Pressure, PromptCache, ProxyStatus, Session, Settings, SettingsView, Stats, StatsSeries, UpdateStatus } from '../api/models'

export function proxyStatus(over: Partial<ProxyStatus> = {}): ProxyStatus {
  return {
    running: true,
    address: '127.0.0.1:8787',
    baseURL: 'http://127.0.0.1:8787',
    error: '',
    accounts: 0,
    requests: 0,
    version: '0.1.0',
    dataDir: '/tmp/longhaul',
    ...over,
  }
}

export function accountView(over: Partial<AccountView> = {}): AccountView {
  return {
    id: 1,
    label: 'work',
    kind: 'anthropic',
    baseURL: 'https://api.anthropic.com',
    key: 'sk-…abcd',
    secretStorage: 'keychain',
    enabled: true,
    priority: 0,
    weight: 1,
    available: true,
    requests: 0,
    tokens: 0,
    errors: 0,
    sessionsBound: 0,
    ...over,
  }
}

export function emptyStats(): Stats {
  const total = { key: '', requests: 0, errors: 0, inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, tokensSaved: 0, summaryCalls: 0, unpricedRequests: 0 }
  return { since: '', until: '', bucket: 'hour', total, byAccount: [], byModel: [], byTime: [], replays: { ...total } }
}

export function emptySeries(by: 'account' | 'model' = 'account'): StatsSeries {
  return { since: '', until: '', by, bucket: 'hour', rows: [] }
}

export function updatesOff(): UpdateStatus {
  return { state: 'off', message: 'no release source in this build', current: 'dev', signed: false }
}

export function claudeCodeUnconfigured(): ClaudeCodeConfig {
  return { path: '/home/me/.claude/settings.json', exists: false, configured: false, baseURL: '', backup: '' }
}

export function defaultSettings(): Settings {
  return {
    proxy: {
      port: 8045,
      bind: '127.0.0.1',
      client_key: '',
      allowed_origins: [],
      max_body_bytes: 33554432,
      memory_budget_bytes: 1073741824,
      request_timeout: '10m0s',
      rotation: { policy: 'round-robin', session_affinity: true, max_attempts: 3 },
      model_map: [],
      context_limits: { 'claude-*': 200000, 'gemini-*': 1048576 },
      default_context_limit: 200000,
      experimental: {
        enable_signature_cache: true,
        enable_tool_loop_recovery: true,
        enable_cross_model_checks: true,
        enable_usage_scaling: true,
        context_compression_threshold_l1: 0.4,
        context_compression_threshold_l2: 0.55,
        context_compression_threshold_l3: 0.7,
      },
    },
    compaction: {
      keep_tool_rounds: 5,
      protect_last_messages: 4,
      max_tool_result_chars: 200000,
      summary_model: 'claude-haiku-4-5',
      signature_cache_entries: 10000,
      cache_aware: true,
      force_ratio: 0.85,
      payback_requests: 10,
      fold_duplicates: true,
    },
    history: { retention_days: 90, max_bytes: 1073741824, store_bodies: true, body_retention_days: 7, max_body_bytes: 2097152 },
    monitor: { tool_warning_count: 30 },
    pricing: {
      table: {
        'claude-sonnet-4*': { input: 3, output: 15, cache_read: 0.3, cache_write: 3.75, cache_write_1h: 6 },
        'gpt-5*': { input: 1.25, output: 10, cache_read: 0.125, cache_write: 1.25, cache_write_1h: 1.25 },
      },
    },
    app: { autostart: false, start_minimized: false, check_updates: true, language: 'en' },
  }
}

export const settingKeys = [
  'app.autostart',
  'app.check_updates',
  'app.language',
  'app.start_minimized',
  'compaction.cache_aware',
  'compaction.fold_duplicates',
  'compaction.force_ratio',
  'compaction.keep_tool_rounds',
  'compaction.max_tool_result_chars',
  'compaction.payback_requests',
  'compaction.protect_last_messages',
  'compaction.signature_cache_entries',
  'compaction.summary_model',
  'history.body_retention_days',
  'history.max_body_bytes',
  'history.max_bytes',
  'history.retention_days',
  'history.store_bodies',
  'monitor.tool_warning_count',
  'pricing.table',
  'proxy.allowed_origins',
  'proxy.bind',
  'proxy.client_key',
  'proxy.context_limits',
  'proxy.default_context_limit',
  'proxy.experimental.context_compression_threshold_l1',
  'proxy.experimental.context_compression_threshold_l2',
  'proxy.experimental.context_compression_threshold_l3',
  'proxy.experimental.enable_cross_model_checks',
  'proxy.experimental.enable_signature_cache',
  'proxy.experimental.enable_tool_loop_recovery',
  'proxy.experimental.enable_usage_scaling',
  'proxy.max_body_bytes',
  'proxy.memory_budget_bytes',
  'proxy.model_map',
  'proxy.port',
  'proxy.request_timeout',
  'proxy.rotation.max_attempts',
  'proxy.rotation.policy',
  'proxy.rotation.session_affinity',
]

export function settingsView(s: Settings = defaultSettings()): SettingsView {
  return { settings: s, defaults: defaultSettings(), overrides: {}, keys: settingKeys }
}

let n = 0

export function exchange(over: Partial<Exchange> = {}): Exchange {
  n++
  return {
    seq: 0,
    id: `ex-${n}`,
    parentID: '',
    replayOf: '',
    state: 'finished',
    route: 'messages',
    clientProtocol: 'anthropic',
    upstreamProtocol: 'anthropic',
    method: 'POST',
    path: '/v1/messages',
    userAgent: 'claude-cli/2.1',
    remoteAddr: '127.0.0.1:5000',
    sessionID: 'session-a',
    model: 'claude-sonnet-4-5',
    modelSent: 'claude-sonnet-4-5',
    stream: true,
    accountID: 1,
    accountName: 'work',
    start: new Date(Date.UTC(2026, 0, 1, 12, 0, n)).toISOString(),
    firstByte: '',
    end: '',
    durationNs: 1_200_000_000,
    ttfbNs: 300_000_000,
    status: 200,
    errorType: '',
    errorMessage: '',
    streamOutcome: 'complete',
    stopReason: 'end_turn',
    failed: false,
    inputTokens: 100,
    outputTokens: 20,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    contextLimit: 200000,
    contextLimitSource: 'default',
    tokensBefore: 100,
    tokensAfter: 100,
    pressureBefore: 0.0005,
    pressureAfter: 0.0005,
    layers: [],
    tokensSaved: 0,
    signatureRecoveries: 0,
    crossModelDropped: 0,
    signatures: 0,
    toolUseIDs: [],
    tools: 0,
    toolTokens: 0,
    toolsCalled: [],
    bytesIn: 1000,
    bytesOut: 500,
    hasBodies: false,
    bodiesTruncated: false,
    ...over,
  }
}

export function session(over: Partial<Session> = {}): Session {
  return {
    id: 'session-a',
    client: 'claude-cli/2.1',
    firstSeen: '2026-01-01T12:00:00Z',
    lastSeen: '2026-01-01T12:30:00Z',
    requests: 12,
    errors: 0,
    lastModel: 'claude-sonnet-4-5',
    lastAccount: 'work',
    boundAccount: '',
    contextLimit: 200000,
    tokens: 90000,
    pressure: 0.45,
    layersFired: [],
    compactions: 0,
    tokensSaved: 0,
    inputTokens: 1000,
    outputTokens: 500,
    cacheReadTokens: 80000,
    cacheWriteTokens: 9000,
    tools: 0,
    toolTokens: 0,
    toolsCalled: [],
    summaryCalls: 0,
    unpricedRequests: 0,
    models: [],
    replays: 0,
    ...over,
  }
}

export function pressure(over: Partial<Pressure> = {}): Pressure {
  return {
    session: 'session-a',
    model: 'claude-sonnet-4-5',
    tokens: 90000,
    limit: 200000,
    ratio: 0.45,
    forwardedTokens: 90000,
    forwardedRatio: 0.45,
    usageTokens: 90000,
    nextLayer: 'Layer-2',
    nextThreshold: 0.55,
    layersApplied: [],
    account: 'work',
    bound: false,
    at: '2026-01-01T12:30:00Z',
    limitSource: 'default',
    ...over,
  }
}

export function promptCache(over: Partial<PromptCache> = {}): PromptCache {
  return { warm: true, tokens: 142000, coldInSeconds: 192, ttlSeconds: 300, summary: 'cache warm, 142k tokens, cold in 3:12', ...over }
}
