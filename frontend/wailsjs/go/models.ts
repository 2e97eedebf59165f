export namespace app {
	
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

}

