// Errors from either door, as one ApiError with the message to show and per-field messages.

/** An error from the backend, with the message to show the user. */
export class ApiError extends Error {
  /** HTTP status for the HTTP door; 0 for the Wails door and for network failures. */
  readonly status: number
  /** Validation messages by field (a setting key such as "proxy.port", or a form field). */
  readonly fields: Record<string, string>

  constructor(message: string, status = 0, fields: Record<string, string> = {}) {
    super(message)
    this.name = 'ApiError'
    this.status = status
    this.fields = fields
  }
}

/** errorFields reads {"error": {"fields": [{"field", "message"}]}} (the door's validation errors). */
export function errorFields(data: unknown): Record<string, string> {
  const out: Record<string, string> = {}
  if (data === null || typeof data !== 'object') return out
  const e = (data as { error?: unknown }).error
  if (e === null || typeof e !== 'object') return out
  const fields = (e as { fields?: unknown }).fields
  if (!Array.isArray(fields)) return out
  for (const f of fields) {
    if (f !== null && typeof f === 'object') {
      const { field, message } = f as { field?: unknown; message?: unknown }
      if (typeof field === 'string' && typeof message === 'string' && !(field in out)) out[field] = message
    }
  }
  return out
}

/**
 * parseFieldLines reads the text of app.FieldErrors ("field: message" per line), which is all
 * the window's bindings pass on by default. Text with any other line is not field errors.
 */
export function parseFieldLines(text: string): Record<string, string> {
  const out: Record<string, string> = {}
  const lines = text.split('\n').filter((l) => l.trim() !== '')
  for (const line of lines) {
    const m = /^([A-Za-z][\w.\-*?[\]]*): (.+)$/.exec(line)
    if (m === null) return {}
    const [, field, message] = m
    if (field !== undefined && message !== undefined && !(field in out)) out[field] = message
  }
  return out
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
