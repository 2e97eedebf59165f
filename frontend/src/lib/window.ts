// The context window a request or session was held to, and why: the UI's words for the sources
// the server records (proxy/compact/limits.go, Window*), and the prompt cache's countdown.
// Pure functions, no Vue.

/**
 * Every window source the server records, each labelled by window.source.<source>.
 * window.test.ts reads the Go constants and fails when one is missing here.
 */
export const windowSources = ['setting', 'default', 'beta', 'learned'] as const

/** sourceKey is the i18n key naming source, '' when there is none to name (an exchange
 * recorded before sources were, or a source this UI does not know). */
export function sourceKey(source: string | undefined): string {
  return (windowSources as readonly string[]).includes(source ?? '') ? `window.source.${source}` : ''
}

/** coldIn is how many whole seconds a cache that had coldInSeconds left at fetchedAt (ms since
 * the epoch) has left at now; 0 once it has gone cold. */
export function coldIn(coldInSeconds: number, fetchedAt: number, now: number): number {
  return Math.max(0, Math.ceil(coldInSeconds - (now - fetchedAt) / 1000))
}

/** clock renders seconds as "3:12" (minutes may exceed 59: a 1 h cache shows "59:59"). */
export function clock(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds))
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`
}
