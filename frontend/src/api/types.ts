// Shapes shared with the Go backend (app.System). Field names match the Go JSON tags.

export interface ProxyStatus {
  /** Whether the proxy listener is up and serving. */
  running: boolean
  /** The listen address, e.g. "127.0.0.1:8787". */
  address: string
  /** What clients put in ANTHROPIC_BASE_URL, e.g. "http://127.0.0.1:8787". */
  baseURL: string
  /** Why the proxy is not running as asked (e.g. "port in use"); empty when all is well. */
  error: string
  /** Number of configured upstream accounts. */
  accounts: number
  /** Requests served since start. */
  requests: number
  version: string
  dataDir: string
}

/** An error from the backend, with the message to show the user. */
export class ApiError extends Error {
  /** HTTP status for the HTTP door; 0 for the Wails door and for network failures. */
  readonly status: number

  constructor(message: string, status = 0) {
    super(message)
    this.name = 'ApiError'
    this.status = status
  }
}

/**
 * toProxyStatus accepts whatever the backend sent and returns a complete ProxyStatus, so a field
 * the Go side leaves out (`omitempty`) or a null does not break the UI.
 */
export function toProxyStatus(raw: unknown): ProxyStatus {
  const o = raw !== null && typeof raw === 'object' ? (raw as Record<string, unknown>) : {}
  const str = (v: unknown): string => (typeof v === 'string' ? v : '')
  const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0)
  return {
    running: o.running === true,
    address: str(o.address),
    baseURL: str(o.baseURL),
    error: str(o.error),
    accounts: num(o.accounts),
    requests: num(o.requests),
    version: str(o.version),
    dataDir: str(o.dataDir),
  }
}

/** errorMessage turns anything thrown or rejected into text for the user. */
export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message
  if (typeof err === 'string') return err
  try {
    return JSON.stringify(err)
  } catch {
    return String(err)
  }
}
