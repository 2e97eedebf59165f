export namespace app {
	
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

