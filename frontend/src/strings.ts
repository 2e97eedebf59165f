// Every user-visible string in one place, so an i18n library can replace this module later
// (keys stay, values become translations). Functions are strings with parameters.

export const strings = {
  app: {
    name: 'Longhaul',
    tagline: 'Local LLM API proxy for coding agents',
    version: (v: string): string => (/^\d/.test(v) ? `v${v}` : v),
    dataDir: 'Data folder',
  },
  proxy: {
    title: 'Proxy',
    running: 'Running',
    stopped: 'Stopped',
    connecting: 'Connecting…',
    address: 'Listen address',
    noAddress: 'Not listening',
    requests: 'Requests served',
    accounts: 'Accounts',
    start: 'Start proxy',
    stop: 'Stop proxy',
    working: 'Working…',
    retry: 'Try again',
  },
  accounts: {
    noneTitle: 'No upstream account yet',
    noneHint: 'The proxy needs at least one upstream API key to forward requests. Add one from a terminal:',
    commandLabel: 'Terminal',
    addCommand: 'longhaul account add --base-url https://api.anthropic.com --key sk-ant-...',
  },
  connect: {
    title: 'Connect Claude Code',
    intro: 'Point Claude Code, or anything built on the Anthropic SDK, at the local proxy.',
    noAddress: 'Start the proxy to see its address here.',
    shell: 'Shell (current session)',
    settings: 'Claude Code settings: ~/.claude/settings.json',
    python: 'Anthropic Python SDK',
  },
  copy: {
    copy: 'Copy',
    copied: 'Copied',
    failed: 'Press Ctrl+C to copy',
    label: (what: string): string => `Copy ${what}`,
  },
  errors: {
    unreachable: (detail: string): string => `Cannot reach the Longhaul backend (${detail}).`,
    badReply: (status: number): string => `The Longhaul backend sent an unreadable reply (HTTP ${status}).`,
    httpStatus: (status: number, text: string): string =>
      text !== '' ? `The Longhaul backend answered HTTP ${status} ${text}.` : `The Longhaul backend answered HTTP ${status}.`,
  },
} as const
