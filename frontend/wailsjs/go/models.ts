export namespace app {
	
	export interface AccountInput {
	    label: string;
	    kind: string;
	    baseURL: string;
	    key: string;
	    enabled?: boolean;
	    models: string[];
	    priority: number;
	    weight: number;
	}
	export interface AccountView {
	    id: number;
	    label: string;
	    kind: string;
	    baseURL: string;
	    key: string;
	    secretStorage: string;
	    enabled: boolean;
	    disabledReason?: string;
	    models?: string[];
	    priority: number;
	    weight: number;
	    available: boolean;
	    coolingUntil?: Record<string, string>;
	    rateLimit?: Record<string, string>;
	    rateLimitAt?: string;
	    requests: number;
	    tokens: number;
	    errors: number;
	    sessionsBound: number;
	}
	export interface KeyTest {
	    ok: boolean;
	    status: number;
	    latencyMs: number;
	    model: string;
	    request: string;
	    message: string;
	    rateLimit?: Record<string, string>;
	}
	export interface PromptCache {
	    warm: boolean;
	    tokens: number;
	    coldInSeconds: number;
	    ttlSeconds: number;
	    summary: string;
	}
	export interface Pressure {
	    session: string;
	    model: string;
	    tokens: number;
	    limit: number;
	    ratio: number;
	    forwardedTokens: number;
	    forwardedRatio: number;
	    usageTokens: number;
	    nextLayer: string;
	    nextThreshold: number;
	    layersApplied: string[];
	    account: string;
	    bound: boolean;
	    at: string;
	    limitSource: string;
	    cache?: PromptCache;
	}
	
	export interface ProxyStatus {
	    running: boolean;
	    address: string;
	    baseURL: string;
	    error: string;
	    accounts: number;
	    requests: number;
	    version: string;
	    dataDir: string;
	}
	export interface ReplayOptions {
	    noCompaction: boolean;
	    accountID: number;
	    model: string;
	}
	export interface ReplayResult {
	    id: string;
	    status: number;
	}
	export interface SettingsView {
	    settings: store.Settings;
	    defaults: store.Settings;
	    overrides: Record<string, string>;
	    keys: string[];
	}

}

export namespace clients {
	
	export interface ClaudeCodeConfig {
	    path: string;
	    exists: boolean;
	    configured: boolean;
	    baseURL: string;
	    backup: string;
	    backupAt?: string;
	}

}

export namespace store {
	
	export interface AppSettings {
	    autostart: boolean;
	    start_minimized: boolean;
	    check_updates: boolean;
	    language: string;
	}
	export interface Attempt {
	    accountID: number;
	    accountName: string;
	    status: number;
	    error: string;
	    start: string;
	    durationNs: number;
	}
	export interface Bodies {
	    request: string;
	    forwarded: string;
	    reply: string;
	}
	export interface CompactionSettings {
	    keep_tool_rounds: number;
	    protect_last_messages: number;
	    max_tool_result_chars: number;
	    summary_model: string;
	    signature_cache_entries: number;
	    cache_aware: boolean;
	    force_ratio: number;
	    payback_requests: number;
	    fold_duplicates: boolean;
	}
	export interface Edit {
	    kind: string;
	    message: number;
	    through: number;
	    block: number;
	    count: number;
	    tokensBefore: number;
	    tokensAfter: number;
	    before: string;
	    after: string;
	    note: string;
	}
	export interface CompactionStep {
	    layer: string;
	    tokensBefore: number;
	    tokensAfter: number;
	    rawBefore: number;
	    rawAfter: number;
	    items: number;
	    durationNs: number;
	    cacheHit: boolean;
	    edits?: Edit[];
	    rewrite: number;
	    deferred?: string;
	}
	export interface Cost {
	    input: number;
	    output: number;
	    cacheRead: number;
	    cacheWrite: number;
	    total: number;
	}
	
	export interface Exchange {
	    seq: number;
	    id: string;
	    parentID: string;
	    replayOf: string;
	    state: string;
	    route: string;
	    clientProtocol: string;
	    upstreamProtocol: string;
	    method: string;
	    path: string;
	    userAgent: string;
	    remoteAddr: string;
	    sessionID: string;
	    model: string;
	    modelSent: string;
	    stream: boolean;
	    accountID: number;
	    accountName: string;
	    start: string;
	    firstByte: string;
	    end: string;
	    durationNs: number;
	    ttfbNs: number;
	    status: number;
	    errorType: string;
	    errorMessage: string;
	    streamOutcome: string;
	    stopReason: string;
	    failed: boolean;
	    inputTokens: number;
	    outputTokens: number;
	    cacheReadTokens: number;
	    cacheWriteTokens: number;
	    cost?: Cost;
	    contextLimit: number;
	    contextLimitSource: string;
	    tokensBefore: number;
	    tokensAfter: number;
	    pressureBefore: number;
	    pressureAfter: number;
	    layers: string[];
	    tokensSaved: number;
	    signatureRecoveries: number;
	    crossModelDropped: number;
	    signatures: number;
	    toolUseIDs: string[];
	    tools: number;
	    toolTokens: number;
	    toolsCalled: string[];
	    clientHeaders?: Record<string, string>;
	    bytesIn: number;
	    bytesOut: number;
	    hasBodies: boolean;
	    bodiesTruncated: boolean;
	    attempts?: Attempt[];
	    compaction?: CompactionStep[];
	    bodies?: Bodies;
	    children?: Exchange[];
	    replays?: Exchange[];
	}
	export interface ExperimentalSettings {
	    enable_signature_cache: boolean;
	    enable_tool_loop_recovery: boolean;
	    enable_cross_model_checks: boolean;
	    enable_usage_scaling: boolean;
	    context_compression_threshold_l1: number;
	    context_compression_threshold_l2: number;
	    context_compression_threshold_l3: number;
	}
	export interface HistoryPage {
	    exchanges: Exchange[];
	    next: number;
	}
	export interface HistorySettings {
	    retention_days: number;
	    max_bytes: number;
	    store_bodies: boolean;
	    body_retention_days: number;
	    max_body_bytes: number;
	}
	export interface ModelMapping {
	    pattern: string;
	    model: string;
	    account?: string;
	}
	export interface ModelPrice {
	    input: number;
	    output: number;
	    cache_read?: number;
	    cache_write?: number;
	    cache_write_1h?: number;
	}
	export interface ModelUsage {
	    model: string;
	    requests: number;
	    inputTokens: number;
	    outputTokens: number;
	    cacheReadTokens: number;
	    cacheWriteTokens: number;
	    cost?: Cost;
	}
	export interface MonitorSettings {
	    tool_warning_count: number;
	}
	export interface PricingSettings {
	    table: Record<string, ModelPrice>;
	}
	export interface RotationSettings {
	    policy: string;
	    session_affinity: boolean;
	    max_attempts: number;
	}
	export interface ProxySettings {
	    port: number;
	    bind: string;
	    client_key: string;
	    allowed_origins: string[];
	    max_body_bytes: number;
	    memory_budget_bytes: number;
	    request_timeout: string;
	    rotation: RotationSettings;
	    model_map: ModelMapping[];
	    context_limits: Record<string, number>;
	    default_context_limit: number;
	    experimental: ExperimentalSettings;
	}
	export interface Repeats {
	    Exchange: string;
	    Bytes: number;
	}
	
	export interface Session {
	    id: string;
	    client: string;
	    firstSeen: string;
	    lastSeen: string;
	    requests: number;
	    errors: number;
	    lastModel: string;
	    lastAccount: string;
	    boundAccount: string;
	    contextLimit: number;
	    tokens: number;
	    pressure: number;
	    layersFired: string[];
	    compactions: number;
	    tokensSaved: number;
	    inputTokens: number;
	    outputTokens: number;
	    cacheReadTokens: number;
	    cacheWriteTokens: number;
	    tools: number;
	    toolTokens: number;
	    toolsCalled: string[];
	    summaryCalls: number;
	    cost?: Cost;
	    unpricedRequests: number;
	    models: ModelUsage[];
	    replays: number;
	}
	export interface Settings {
	    proxy: ProxySettings;
	    compaction: CompactionSettings;
	    history: HistorySettings;
	    monitor: MonitorSettings;
	    pricing: PricingSettings;
	    app: AppSettings;
	}
	export interface StatsRow {
	    key: string;
	    bucket?: string;
	    requests: number;
	    errors: number;
	    inputTokens: number;
	    outputTokens: number;
	    cacheReadTokens: number;
	    cacheWriteTokens: number;
	    tokensSaved: number;
	    summaryCalls: number;
	    cost?: Cost;
	    unpricedRequests: number;
	}
	export interface Stats {
	    since: string;
	    until: string;
	    bucket: string;
	    total: StatsRow;
	    byAccount: StatsRow[];
	    byModel: StatsRow[];
	    byTime: StatsRow[];
	    replays: StatsRow;
	}
	
	export interface StatsSeries {
	    since: string;
	    until: string;
	    by: string;
	    bucket: string;
	    rows: StatsRow[];
	}

}

export namespace update {
	
	export interface Status {
	    state: string;
	    message: string;
	    current: string;
	    latest?: string;
	    source?: string;
	    signed: boolean;
	    checkedAt?: string;
	    error?: string;
	}

}

