export namespace app {
	
	export class AccountInput {
	    label: string;
	    kind: string;
	    baseURL: string;
	    key: string;
	    enabled?: boolean;
	    models: string[];
	    priority: number;
	    weight: number;
	
	    static createFrom(source: any = {}) {
	        return new AccountInput(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.label = source["label"];
	        this.kind = source["kind"];
	        this.baseURL = source["baseURL"];
	        this.key = source["key"];
	        this.enabled = source["enabled"];
	        this.models = source["models"];
	        this.priority = source["priority"];
	        this.weight = source["weight"];
	    }
	}
	export class AccountView {
	    id: number;
	    label: string;
	    kind: string;
	    baseURL: string;
	    key: string;
	    enabled: boolean;
	    disabledReason?: string;
	    models?: string[];
	    priority: number;
	    weight: number;
	    available: boolean;
	    coolingUntil?: Record<string, time.Time>;
	    rateLimit?: Record<string, string>;
	    // Go type: time
	    rateLimitAt: any;
	    requests: number;
	    tokens: number;
	    errors: number;
	    sessionsBound: number;
	
	    static createFrom(source: any = {}) {
	        return new AccountView(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.id = source["id"];
	        this.label = source["label"];
	        this.kind = source["kind"];
	        this.baseURL = source["baseURL"];
	        this.key = source["key"];
	        this.enabled = source["enabled"];
	        this.disabledReason = source["disabledReason"];
	        this.models = source["models"];
	        this.priority = source["priority"];
	        this.weight = source["weight"];
	        this.available = source["available"];
	        this.coolingUntil = this.convertValues(source["coolingUntil"], time.Time, true);
	        this.rateLimit = source["rateLimit"];
	        this.rateLimitAt = this.convertValues(source["rateLimitAt"], null);
	        this.requests = source["requests"];
	        this.tokens = source["tokens"];
	        this.errors = source["errors"];
	        this.sessionsBound = source["sessionsBound"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class ClaudeCodeConfig {
	    path: string;
	    exists: boolean;
	    configured: boolean;
	    baseURL: string;
	    backup: string;
	    // Go type: time
	    backupAt: any;
	
	    static createFrom(source: any = {}) {
	        return new ClaudeCodeConfig(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.path = source["path"];
	        this.exists = source["exists"];
	        this.configured = source["configured"];
	        this.baseURL = source["baseURL"];
	        this.backup = source["backup"];
	        this.backupAt = this.convertValues(source["backupAt"], null);
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class KeyTest {
	    ok: boolean;
	    status: number;
	    latencyMs: number;
	    model: string;
	    message: string;
	    rateLimit?: Record<string, string>;
	
	    static createFrom(source: any = {}) {
	        return new KeyTest(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.ok = source["ok"];
	        this.status = source["status"];
	        this.latencyMs = source["latencyMs"];
	        this.model = source["model"];
	        this.message = source["message"];
	        this.rateLimit = source["rateLimit"];
	    }
	}
	export class Pressure {
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
	    // Go type: time
	    at: any;
	
	    static createFrom(source: any = {}) {
	        return new Pressure(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.session = source["session"];
	        this.model = source["model"];
	        this.tokens = source["tokens"];
	        this.limit = source["limit"];
	        this.ratio = source["ratio"];
	        this.forwardedTokens = source["forwardedTokens"];
	        this.forwardedRatio = source["forwardedRatio"];
	        this.usageTokens = source["usageTokens"];
	        this.nextLayer = source["nextLayer"];
	        this.nextThreshold = source["nextThreshold"];
	        this.layersApplied = source["layersApplied"];
	        this.account = source["account"];
	        this.bound = source["bound"];
	        this.at = this.convertValues(source["at"], null);
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class ProxyStatus {
	    running: boolean;
	    address: string;
	    baseURL: string;
	    error: string;
	    accounts: number;
	    requests: number;
	    version: string;
	    dataDir: string;
	
	    static createFrom(source: any = {}) {
	        return new ProxyStatus(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.running = source["running"];
	        this.address = source["address"];
	        this.baseURL = source["baseURL"];
	        this.error = source["error"];
	        this.accounts = source["accounts"];
	        this.requests = source["requests"];
	        this.version = source["version"];
	        this.dataDir = source["dataDir"];
	    }
	}
	export class SettingsView {
	    settings: store.Settings;
	    defaults: store.Settings;
	    overrides: Record<string, string>;
	    keys: string[];
	
	    static createFrom(source: any = {}) {
	        return new SettingsView(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.settings = this.convertValues(source["settings"], store.Settings);
	        this.defaults = this.convertValues(source["defaults"], store.Settings);
	        this.overrides = source["overrides"];
	        this.keys = source["keys"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class UpdateStatus {
	    state: string;
	    message: string;
	    current: string;
	    latest?: string;
	    source?: string;
	    signed: boolean;
	    // Go type: time
	    checkedAt: any;
	    error?: string;
	
	    static createFrom(source: any = {}) {
	        return new UpdateStatus(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.state = source["state"];
	        this.message = source["message"];
	        this.current = source["current"];
	        this.latest = source["latest"];
	        this.source = source["source"];
	        this.signed = source["signed"];
	        this.checkedAt = this.convertValues(source["checkedAt"], null);
	        this.error = source["error"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}

}

export namespace store {
	
	export class AppSettings {
	    autostart: boolean;
	    start_minimized: boolean;
	    check_updates: boolean;
	    language: string;
	
	    static createFrom(source: any = {}) {
	        return new AppSettings(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.autostart = source["autostart"];
	        this.start_minimized = source["start_minimized"];
	        this.check_updates = source["check_updates"];
	        this.language = source["language"];
	    }
	}
	export class Attempt {
	    accountID: number;
	    accountName: string;
	    status: number;
	    error: string;
	    // Go type: time
	    start: any;
	    durationNs: number;
	
	    static createFrom(source: any = {}) {
	        return new Attempt(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.accountID = source["accountID"];
	        this.accountName = source["accountName"];
	        this.status = source["status"];
	        this.error = source["error"];
	        this.start = this.convertValues(source["start"], null);
	        this.durationNs = source["durationNs"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class Bodies {
	    request: string;
	    forwarded: string;
	    reply: string;
	
	    static createFrom(source: any = {}) {
	        return new Bodies(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.request = source["request"];
	        this.forwarded = source["forwarded"];
	        this.reply = source["reply"];
	    }
	}
	export class CompactionSettings {
	    keep_tool_rounds: number;
	    protect_last_messages: number;
	    max_tool_result_chars: number;
	    summary_model: string;
	    signature_cache_entries: number;
	
	    static createFrom(source: any = {}) {
	        return new CompactionSettings(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.keep_tool_rounds = source["keep_tool_rounds"];
	        this.protect_last_messages = source["protect_last_messages"];
	        this.max_tool_result_chars = source["max_tool_result_chars"];
	        this.summary_model = source["summary_model"];
	        this.signature_cache_entries = source["signature_cache_entries"];
	    }
	}
	export class CompactionStep {
	    layer: string;
	    tokensBefore: number;
	    tokensAfter: number;
	    rawBefore: number;
	    rawAfter: number;
	    items: number;
	    durationNs: number;
	    cacheHit: boolean;
	
	    static createFrom(source: any = {}) {
	        return new CompactionStep(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.layer = source["layer"];
	        this.tokensBefore = source["tokensBefore"];
	        this.tokensAfter = source["tokensAfter"];
	        this.rawBefore = source["rawBefore"];
	        this.rawAfter = source["rawAfter"];
	        this.items = source["items"];
	        this.durationNs = source["durationNs"];
	        this.cacheHit = source["cacheHit"];
	    }
	}
	export class Exchange {
	    seq: number;
	    id: string;
	    state: string;
	    route: string;
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
	    // Go type: time
	    start: any;
	    // Go type: time
	    firstByte: any;
	    // Go type: time
	    end: any;
	    durationNs: number;
	    ttfbNs: number;
	    status: number;
	    errorType: string;
	    errorMessage: string;
	    streamOutcome: string;
	    stopReason: string;
	    inputTokens: number;
	    outputTokens: number;
	    cacheReadTokens: number;
	    cacheWriteTokens: number;
	    contextLimit: number;
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
	    bytesIn: number;
	    bytesOut: number;
	    hasBodies: boolean;
	    bodiesTruncated: boolean;
	    attempts?: Attempt[];
	    compaction?: CompactionStep[];
	    bodies?: Bodies;
	
	    static createFrom(source: any = {}) {
	        return new Exchange(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.seq = source["seq"];
	        this.id = source["id"];
	        this.state = source["state"];
	        this.route = source["route"];
	        this.method = source["method"];
	        this.path = source["path"];
	        this.userAgent = source["userAgent"];
	        this.remoteAddr = source["remoteAddr"];
	        this.sessionID = source["sessionID"];
	        this.model = source["model"];
	        this.modelSent = source["modelSent"];
	        this.stream = source["stream"];
	        this.accountID = source["accountID"];
	        this.accountName = source["accountName"];
	        this.start = this.convertValues(source["start"], null);
	        this.firstByte = this.convertValues(source["firstByte"], null);
	        this.end = this.convertValues(source["end"], null);
	        this.durationNs = source["durationNs"];
	        this.ttfbNs = source["ttfbNs"];
	        this.status = source["status"];
	        this.errorType = source["errorType"];
	        this.errorMessage = source["errorMessage"];
	        this.streamOutcome = source["streamOutcome"];
	        this.stopReason = source["stopReason"];
	        this.inputTokens = source["inputTokens"];
	        this.outputTokens = source["outputTokens"];
	        this.cacheReadTokens = source["cacheReadTokens"];
	        this.cacheWriteTokens = source["cacheWriteTokens"];
	        this.contextLimit = source["contextLimit"];
	        this.tokensBefore = source["tokensBefore"];
	        this.tokensAfter = source["tokensAfter"];
	        this.pressureBefore = source["pressureBefore"];
	        this.pressureAfter = source["pressureAfter"];
	        this.layers = source["layers"];
	        this.tokensSaved = source["tokensSaved"];
	        this.signatureRecoveries = source["signatureRecoveries"];
	        this.crossModelDropped = source["crossModelDropped"];
	        this.signatures = source["signatures"];
	        this.toolUseIDs = source["toolUseIDs"];
	        this.bytesIn = source["bytesIn"];
	        this.bytesOut = source["bytesOut"];
	        this.hasBodies = source["hasBodies"];
	        this.bodiesTruncated = source["bodiesTruncated"];
	        this.attempts = this.convertValues(source["attempts"], Attempt);
	        this.compaction = this.convertValues(source["compaction"], CompactionStep);
	        this.bodies = this.convertValues(source["bodies"], Bodies);
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class ExperimentalSettings {
	    enable_signature_cache: boolean;
	    enable_tool_loop_recovery: boolean;
	    enable_cross_model_checks: boolean;
	    enable_usage_scaling: boolean;
	    context_compression_threshold_l1: number;
	    context_compression_threshold_l2: number;
	    context_compression_threshold_l3: number;
	
	    static createFrom(source: any = {}) {
	        return new ExperimentalSettings(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.enable_signature_cache = source["enable_signature_cache"];
	        this.enable_tool_loop_recovery = source["enable_tool_loop_recovery"];
	        this.enable_cross_model_checks = source["enable_cross_model_checks"];
	        this.enable_usage_scaling = source["enable_usage_scaling"];
	        this.context_compression_threshold_l1 = source["context_compression_threshold_l1"];
	        this.context_compression_threshold_l2 = source["context_compression_threshold_l2"];
	        this.context_compression_threshold_l3 = source["context_compression_threshold_l3"];
	    }
	}
	export class HistoryPage {
	    exchanges: Exchange[];
	    next: number;
	
	    static createFrom(source: any = {}) {
	        return new HistoryPage(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.exchanges = this.convertValues(source["exchanges"], Exchange);
	        this.next = source["next"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class HistorySettings {
	    retention_days: number;
	    max_bytes: number;
	    store_bodies: boolean;
	    body_retention_days: number;
	    max_body_bytes: number;
	
	    static createFrom(source: any = {}) {
	        return new HistorySettings(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.retention_days = source["retention_days"];
	        this.max_bytes = source["max_bytes"];
	        this.store_bodies = source["store_bodies"];
	        this.body_retention_days = source["body_retention_days"];
	        this.max_body_bytes = source["max_body_bytes"];
	    }
	}
	export class ModelMapping {
	    pattern: string;
	    model: string;
	    account?: string;
	
	    static createFrom(source: any = {}) {
	        return new ModelMapping(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.pattern = source["pattern"];
	        this.model = source["model"];
	        this.account = source["account"];
	    }
	}
	export class RotationSettings {
	    policy: string;
	    session_affinity: boolean;
	    max_attempts: number;
	
	    static createFrom(source: any = {}) {
	        return new RotationSettings(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.policy = source["policy"];
	        this.session_affinity = source["session_affinity"];
	        this.max_attempts = source["max_attempts"];
	    }
	}
	export class ProxySettings {
	    port: number;
	    bind: string;
	    client_key: string;
	    max_body_bytes: number;
	    request_timeout: number;
	    rotation: RotationSettings;
	    model_map: ModelMapping[];
	    context_limits: Record<string, number>;
	    default_context_limit: number;
	    experimental: ExperimentalSettings;
	
	    static createFrom(source: any = {}) {
	        return new ProxySettings(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.port = source["port"];
	        this.bind = source["bind"];
	        this.client_key = source["client_key"];
	        this.max_body_bytes = source["max_body_bytes"];
	        this.request_timeout = source["request_timeout"];
	        this.rotation = this.convertValues(source["rotation"], RotationSettings);
	        this.model_map = this.convertValues(source["model_map"], ModelMapping);
	        this.context_limits = source["context_limits"];
	        this.default_context_limit = source["default_context_limit"];
	        this.experimental = this.convertValues(source["experimental"], ExperimentalSettings);
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	
	export class Session {
	    id: string;
	    client: string;
	    // Go type: time
	    firstSeen: any;
	    // Go type: time
	    lastSeen: any;
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
	
	    static createFrom(source: any = {}) {
	        return new Session(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.id = source["id"];
	        this.client = source["client"];
	        this.firstSeen = this.convertValues(source["firstSeen"], null);
	        this.lastSeen = this.convertValues(source["lastSeen"], null);
	        this.requests = source["requests"];
	        this.errors = source["errors"];
	        this.lastModel = source["lastModel"];
	        this.lastAccount = source["lastAccount"];
	        this.boundAccount = source["boundAccount"];
	        this.contextLimit = source["contextLimit"];
	        this.tokens = source["tokens"];
	        this.pressure = source["pressure"];
	        this.layersFired = source["layersFired"];
	        this.compactions = source["compactions"];
	        this.tokensSaved = source["tokensSaved"];
	        this.inputTokens = source["inputTokens"];
	        this.outputTokens = source["outputTokens"];
	        this.cacheReadTokens = source["cacheReadTokens"];
	        this.cacheWriteTokens = source["cacheWriteTokens"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class Settings {
	    proxy: ProxySettings;
	    compaction: CompactionSettings;
	    history: HistorySettings;
	    app: AppSettings;
	
	    static createFrom(source: any = {}) {
	        return new Settings(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.proxy = this.convertValues(source["proxy"], ProxySettings);
	        this.compaction = this.convertValues(source["compaction"], CompactionSettings);
	        this.history = this.convertValues(source["history"], HistorySettings);
	        this.app = this.convertValues(source["app"], AppSettings);
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class StatsRow {
	    key: string;
	    // Go type: time
	    bucket: any;
	    requests: number;
	    errors: number;
	    inputTokens: number;
	    outputTokens: number;
	    cacheReadTokens: number;
	    cacheWriteTokens: number;
	    tokensSaved: number;
	
	    static createFrom(source: any = {}) {
	        return new StatsRow(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.key = source["key"];
	        this.bucket = this.convertValues(source["bucket"], null);
	        this.requests = source["requests"];
	        this.errors = source["errors"];
	        this.inputTokens = source["inputTokens"];
	        this.outputTokens = source["outputTokens"];
	        this.cacheReadTokens = source["cacheReadTokens"];
	        this.cacheWriteTokens = source["cacheWriteTokens"];
	        this.tokensSaved = source["tokensSaved"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class Stats {
	    // Go type: time
	    since: any;
	    // Go type: time
	    until: any;
	    bucket: string;
	    total: StatsRow;
	    byAccount: StatsRow[];
	    byModel: StatsRow[];
	    byTime: StatsRow[];
	
	    static createFrom(source: any = {}) {
	        return new Stats(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.since = this.convertValues(source["since"], null);
	        this.until = this.convertValues(source["until"], null);
	        this.bucket = source["bucket"];
	        this.total = this.convertValues(source["total"], StatsRow);
	        this.byAccount = this.convertValues(source["byAccount"], StatsRow);
	        this.byModel = this.convertValues(source["byModel"], StatsRow);
	        this.byTime = this.convertValues(source["byTime"], StatsRow);
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	
	export class StatsSeries {
	    // Go type: time
	    since: any;
	    // Go type: time
	    until: any;
	    by: string;
	    bucket: string;
	    rows: StatsRow[];
	
	    static createFrom(source: any = {}) {
	        return new StatsSeries(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.since = this.convertValues(source["since"], null);
	        this.until = this.convertValues(source["until"], null);
	        this.by = source["by"];
	        this.bucket = source["bucket"];
	        this.rows = this.convertValues(source["rows"], StatsRow);
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}

}

