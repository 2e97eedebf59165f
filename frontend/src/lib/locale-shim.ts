// WebKitGTK under the C/POSIX locale (LANG unset, as on many servers and CI machines) reports
// navigator.language "C", which every Intl constructor rejects — and uPlot formats with
// navigator.language as it loads. Imported first by main.ts, before anything that might.

function valid(tag: string | undefined): boolean {
  if (!tag) return false
  try {
    new Intl.NumberFormat(tag)
    return true
  } catch {
    return false
  }
}

if (typeof navigator !== 'undefined' && !valid(navigator.language)) {
  const languages = (navigator.languages ?? []).filter(valid)
  const language = languages[0] ?? 'en-US'
  Object.defineProperty(navigator, 'language', { configurable: true, get: () => language })
  Object.defineProperty(navigator, 'languages', { configurable: true, get: () => (languages.length > 0 ? languages : [language]) })
}

export {}
