// End-to-end test of the real UI against the real backend, in headless Chromium.
//
//   LONGHAUL_BIN=/path/to/longhaul npm run test:e2e
//
// It stores proxy.port = <free port> with `$LONGHAUL_BIN settings set`, starts
// `$LONGHAUL_BIN --headless --data-dir <tmp> --ui-addr 127.0.0.1:0`,
// reads "Longhaul UI: http://127.0.0.1:NNNNN/" from its stdout, opens that page and switches the
// proxy off and on, checking the page, the live events and the proxy's /healthz each time. Then,
// against a scripted Anthropic upstream (proxy/proxytest/cmd/scripted-upstream), it adds an account
// in the Accounts page, tests its key, disables and enables it; sets a tiny context limit in
// Settings; sends a tool-loop request through the proxy and sees it in the live monitor within a
// second; opens its detail and finds the ledger entry of Layer 1 (rounds removed, messages[1–6]);
// has L2 below L1 refused (in the
// page and by the backend), saves a valid L2 and sees the next request run Layer-2; sends one offering 31 tools and sees
// the tool warning badge, its Layer-3 summary call as a linked child row with account and tokens,
// its ledger (the compressor, Layers 1–3, each edit at its path in the request as received), a
// model-mapped request's "model renamed" entry, and the dashboard counting the summary call; sets
// a price for e2e-* in Settings and sees each request's estimated cost and input split in the
// monitor, on its page and on the dashboard, the replay counted apart; filters the
// monitor (status error, then ok) and sees live requests shown only as the backend matches them; configures
// Claude Code and undoes it; starts a second scripted upstream that simulates the prompt cache
// (-cache-ttl 5m) as an account for one model, sends it a cached prompt, and sees the session's
// "cache warm" line count down and its window named with its reason ("your setting"), on the
// Sessions page and the request's page; starts a third scripted upstream playing the agent (-agent)
// whose thinking is signed, sends the next turn back without the signature and sees the ledger's
// "signature restored" entry at messages[1].content[0] and the signature in the forwarded body
// only; renders every page in English and in Chinese, failing on any
// missing message key; and sets a client key: the login page refuses a wrong key, the right one
// opens the app with an HttpOnly SameSite=Strict session, the API without the cookie answers 401,
// and sign-out asks for the key again; then a request with both keys pasted into its prompt is
// downloaded as a repro bundle from its detail page: a zip with request.json and neither key. Screenshots of every page go to build/e2e-artifacts/.
//
// Environment:
//   LONGHAUL_BIN        the backend binary (required)
//   CHROMIUM            the browser (default /usr/bin/chromium)
//   LONGHAUL_E2E_KEEP=1 keep the temporary folder (data dir, HOME, browser profile)
//   SCRIPTED_UPSTREAM   a built scripted-upstream binary (default: `go run` it from the repo)
//   E2E_ARTIFACTS       where screenshots go (default: <repo>/build/e2e-artifacts)
//
// Writes <page>.png, <page>-zh.png, login.png, ui.png, ui-dark.png (and failure.png when a step fails).
// Prints "N passed, N failed" and exits non-zero on any failure. Every wait is bounded.

import { execFileSync, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises'
import { get as httpGet, request as httpRequest } from 'node:http'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'

import { freePort, signal, withTimeout } from '../lib/processes.mjs'
import { inflateRawSync } from 'node:zlib'
import { chromium } from 'playwright-core'

const here = dirname(fileURLToPath(import.meta.url))
const repoRoot = resolve(here, '../../..')
const outDir = process.env.E2E_ARTIFACTS ? resolve(process.env.E2E_ARTIFACTS) : join(repoRoot, 'build/e2e-artifacts')
const chromiumPath = process.env.CHROMIUM || '/usr/bin/chromium'
const bin = process.env.LONGHAUL_BIN ? resolve(process.env.LONGHAUL_BIN) : ''
const keepTmp = process.env.LONGHAUL_E2E_KEEP === '1'

const startupMs = 30_000 // backend prints its UI address
const stepMs = 20_000 // any one step
const settleMs = 10_000 // listener opens/closes after the UI says so
const totalMs = 300_000 // the whole run (a cold `go run` of the upstream included)
const exitMs = 10_000 // backend exits after SIGTERM

const chromiumArgs = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]

// ---------------------------------------------------------------------------------------------
// A tiny step runner: steps run in order; after the first failure the rest are not run (they
// depend on each other) and count as failed.

/** @type {{name: string, status: 'pass' | 'fail' | 'not run', detail?: string}[]} */
const results = []
let failed = false

/**
 * @param {string} name
 * @param {() => Promise<unknown>} fn
 * @param {number} [ms]
 */
async function step(name, fn, ms = stepMs) {
  if (failed) {
    results.push({ name, status: 'not run' })
    console.log(`SKIP ${name} (not run)`)
    return
  }
  const t0 = Date.now()
  try {
    await withTimeout(fn(), ms, name)
    results.push({ name, status: 'pass' })
    console.log(`ok   ${name} (${Date.now() - t0} ms)`)
  } catch (err) {
    failed = true
    const detail = err instanceof Error ? err.message : String(err)
    results.push({ name, status: 'fail', detail })
    console.log(`FAIL ${name} (${Date.now() - t0} ms)\n     ${detail.replace(/\n/g, '\n     ')}`)
  }
}

/**
 * Polls check() until it returns true or ms pass; describe() says what was seen last.
 * @param {() => Promise<boolean>} check
 * @param {number} ms
 * @param {() => string} describe
 */
async function until(check, ms, describe) {
  const deadline = Date.now() + ms
  for (;;) {
    if (await check()) return
    if (Date.now() > deadline) throw new Error(`gave up after ${ms} ms: ${describe()}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

// ---------------------------------------------------------------------------------------------
// Helpers

/**
 * GET http://127.0.0.1:<port>/healthz on a fresh connection (no keep-alive pool, so a closed
 * listener shows up as refused instead of being hidden by a reused connection).
 * @param {number} port
 * @returns {Promise<{status: number} | {error: string}>}
 */
function healthz(port) {
  return new Promise((done) => {
    const req = httpGet(
      { host: '127.0.0.1', port, path: '/healthz', agent: false, headers: { Connection: 'close' }, timeout: 3000 },
      (res) => {
        res.resume()
        res.on('end', () => done({ status: res.statusCode ?? 0 }))
        res.on('error', (err) => done({ error: errorCode(err) }))
      },
    )
    req.on('timeout', () => req.destroy(new Error('timeout')))
    req.on('error', (err) => done({ error: errorCode(err) }))
  })
}

/** @param {unknown} err */
function errorCode(err) {
  const e = /** @type {{code?: string, message?: string}} */ (err)
  return e.code || e.message || String(err)
}

/** @param {{status: number} | {error: string}} r */
function show(r) {
  return 'status' in r ? `HTTP ${r.status}` : r.error
}

/**
 * Waits until the element with data-testid=id has exactly the text want.
 * @param {import('playwright-core').Page} page
 * @param {string} id
 * @param {string} want
 * @param {number} [ms]
 */
async function expectText(page, id, want, ms = stepMs - 2000) {
  let last = '(element not found)'
  await until(
    async () => {
      const loc = page.getByTestId(id)
      if ((await loc.count()) !== 1) return false
      last = JSON.stringify(((await loc.textContent({ timeout: 1000 })) ?? '').trim())
      return last === JSON.stringify(want)
    },
    ms,
    () => `[data-testid=${id}] text is ${last}, want ${JSON.stringify(want)}`,
  )
}

/**
 * @param {import('playwright-core').Page} page
 * @param {string} id
 * @param {string} name
 * @param {string} want
 */
async function expectAttr(page, id, name, want) {
  /** @type {string | null} */
  let last = null
  await until(
    async () => {
      last = await page.getByTestId(id).getAttribute(name, { timeout: 1000 })
      return last === want
    },
    5000,
    () => `[data-testid=${id}] ${name}=${JSON.stringify(last)}, want ${JSON.stringify(want)}`,
  )
}

/**
 * Opens the page and waits until its live event stream (SSE) is connected, so that later
 * changes reach it only through events.
 * @param {import('playwright-core').BrowserContext} context
 * @param {string} url
 */
async function openPage(context, url) {
  const page = await context.newPage()
  page.on('pageerror', (err) => pageErrors.push(`${err.name}: ${err.message}`))
  page.on('console', (msg) => {
    if (msg.type() === 'error' || msg.type() === 'warning') consoleLines.push(`[${msg.type()}] ${msg.text()}`)
  })
  const events = page.waitForResponse((res) => new URL(res.url()).pathname === '/longhaul/v1/events', {
    timeout: stepMs - 2000,
  })
  await page.goto(url, { waitUntil: 'load', timeout: stepMs - 2000 })
  const res = await events
  if (res.status() !== 200) throw new Error(`GET /longhaul/v1/events answered ${res.status()}`)
  const type = (await res.headerValue('content-type')) ?? ''
  if (!type.startsWith('text/event-stream')) throw new Error(`GET /longhaul/v1/events Content-Type is ${JSON.stringify(type)}`)
  return page
}

// ---------------------------------------------------------------------------------------------
// The run

/** @type {string[]} */
const pageErrors = []
/** @type {string[]} */
const consoleLines = []
/** @type {string[]} */
const backendOutput = []

/** @type {import('node:child_process').ChildProcess | undefined} */
let child
/** The scripted upstreams started, stopped with the run.
 * @type {import('node:child_process').ChildProcess[]} */
const upstreams = []
/** @type {Promise<{code: number | null, signal: string | null}> | undefined} */
let childExit
/** @type {import('playwright-core').BrowserContext | undefined} */
let context
let tmp = ''

const watchdog = setTimeout(() => {
  console.log(`FAIL whole run took longer than ${totalMs} ms; killing everything`)
  if (child !== undefined) signal(child, 'SIGKILL')
  for (const u of upstreams) signal(u, 'SIGKILL')
  process.exit(1)
}, totalMs)
watchdog.unref()

// Interrupted (Ctrl+C): do not leave the backend running.
for (const sig of /** @type {NodeJS.Signals[]} */ (['SIGINT', 'SIGTERM'])) {
  process.once(sig, () => {
    console.log(`\ninterrupted by ${sig}`)
    if (child !== undefined) signal(child, 'SIGKILL')
    for (const u of upstreams) signal(u, 'SIGKILL')
    process.exit(130)
  })
}

async function main() {
  if (!bin) {
    await step('LONGHAUL_BIN names the backend binary', async () => {
      throw new Error('set LONGHAUL_BIN to the longhaul binary, e.g. LONGHAUL_BIN=../build/bin/longhaul')
    })
    return
  }
  await step('prerequisites exist', async () => {
    if (!existsSync(bin)) throw new Error(`LONGHAUL_BIN=${bin} does not exist`)
    if (!existsSync(chromiumPath)) throw new Error(`no browser at ${chromiumPath} (apt-get install chromium, or set CHROMIUM)`)
  })
  if (failed) return

  tmp = await mkdtemp(join(tmpdir(), 'longhaul-e2e-'))
  const dataDir = join(tmp, 'data')
  const home = join(tmp, 'home')
  const profile = join(tmp, 'chromium-profile')
  await Promise.all([dataDir, home, profile, outDir].map((d) => mkdir(d, { recursive: true })))
  await rm(join(outDir, 'failure.png'), { force: true })
  const port = await freePort()

  /** @type {string} */
  let uiURL = ''
  await step(
    'backend starts and prints its UI address',
    async () => {
      uiURL = await startBackend(port, dataDir, home)
      console.log(`     UI at ${uiURL}, proxy port ${port}`)
    },
    startupMs + 2000,
  )
  if (failed) return

  await step('browser starts', async () => {
    context = await chromium.launchPersistentContext(profile, {
      executablePath: chromiumPath,
      headless: true,
      args: chromiumArgs,
      viewport: { width: 1100, height: 1000 },
      timeout: stepMs - 2000,
    })
  })
  if (failed || context === undefined) return
  const ctx = context

  /** @type {import('playwright-core').Page | undefined} */
  let page
  /** @type {import('playwright-core').Page | undefined} */
  let watcher
  const p = () => /** @type {import('playwright-core').Page} */ (page)
  const w = () => /** @type {import('playwright-core').Page} */ (watcher)

  try {
    await step('page loads and connects to the event stream', async () => {
      page = await openPage(ctx, uiURL)
    })
    await step('page shows the proxy Running', () => expectText(p(), 'proxy-state', 'Running'))
    await step('toggle is pressed while running', () => expectAttr(p(), 'proxy-toggle', 'aria-pressed', 'true'))
    await step('address shows the proxy port', async () => {
      const text = (await p().getByTestId('proxy-address').textContent({ timeout: 2000 })) ?? ''
      if (!text.includes(`:${port}`)) throw new Error(`proxy-address is ${JSON.stringify(text)}, want it to contain :${port}`)
    })
    await step('no error shown', async () => {
      const n = await p().getByTestId('proxy-error').count()
      if (n !== 0) throw new Error(`proxy-error shows ${JSON.stringify(await p().getByTestId('proxy-error').textContent())}`)
    })
    await step('fresh data dir shows the add-account hint', () =>
      p().getByTestId('accounts-hint').waitFor({ state: 'visible', timeout: 5000 }),
    )
    await step('healthz answers 200 while running', async () => {
      let last = /** @type {{status: number} | {error: string}} */ ({ error: 'not tried' })
      await until(async () => 'status' in (last = await healthz(port)) && last.status === 200, settleMs, () => show(last))
    })
    await step('a second page is open to watch live updates', async () => {
      watcher = await openPage(ctx, uiURL)
      await expectText(w(), 'proxy-state', 'Running')
    })

    await step('toggle stops the proxy', async () => {
      await p().bringToFront() // the watcher opened last; background tabs are throttled
      await p().getByTestId('proxy-toggle').click({ timeout: 5000 })
      await expectText(p(), 'proxy-state', 'Stopped')
      await expectAttr(p(), 'proxy-toggle', 'aria-pressed', 'false')
    })
    await step('healthz is refused while stopped', async () => {
      let last = /** @type {{status: number} | {error: string}} */ ({ error: 'not tried' })
      await until(async () => 'error' in (last = await healthz(port)) && last.error === 'ECONNREFUSED', settleMs, () => show(last))
    })
    await step('the second page shows Stopped without reloading (live event)', () =>
      expectText(w(), 'proxy-state', 'Stopped', 5000),
    )

    await step('toggle starts the proxy again', async () => {
      await p().getByTestId('proxy-toggle').click({ timeout: 5000 })
      await expectText(p(), 'proxy-state', 'Running')
      await expectAttr(p(), 'proxy-toggle', 'aria-pressed', 'true')
    })
    await step('healthz answers 200 again', async () => {
      let last = /** @type {{status: number} | {error: string}} */ ({ error: 'not tried' })
      await until(async () => 'status' in (last = await healthz(port)) && last.status === 200, settleMs, () => show(last))
    })
    await step('the second page shows Running again (live event)', () => expectText(w(), 'proxy-state', 'Running', 5000))

    await pageSteps(p(), uiURL, port, home)
    await loginSteps(p(), uiURL)
    await bundleSteps(p(), uiURL)

    await step('screenshots saved', async () => {
      await p().goto(`${uiURL}#/monitor`, { waitUntil: 'load' })
      await p().getByTestId('proxy-state').waitFor({ timeout: 5000 })
      await p().screenshot({ path: join(outDir, 'ui.png'), fullPage: true, timeout: 10_000 })
      await p().emulateMedia({ colorScheme: 'dark' })
      await p().screenshot({ path: join(outDir, 'ui-dark.png'), fullPage: true, timeout: 10_000 })
      await p().emulateMedia({ colorScheme: 'light' })
      console.log(`     ${join(outDir, 'ui.png')}`)
    })
    await step('no uncaught errors in the page', async () => {
      if (pageErrors.length > 0) throw new Error(pageErrors.join('\n'))
    })
    await step('no missing message key was logged', async () => {
      const missing = consoleLines.filter((l) => l.includes('[i18n] missing') || l.includes('[intlify] Not found'))
      if (missing.length > 0) throw new Error(missing.join('\n'))
    })
  } finally {
    if (failed && page !== undefined) {
      await withTimeout(page.screenshot({ path: join(outDir, 'failure.png'), fullPage: true }), 10_000, 'failure screenshot').then(
        () => console.log(`     failure screenshot: ${join(outDir, 'failure.png')}`),
        () => {},
      )
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The pages against a scripted upstream

const L2 = 'proxy.experimental.context_compression_threshold_l2'
const L3 = 'proxy.experimental.context_compression_threshold_l3'
const pageNames = ['monitor', 'sessions', 'dashboard', 'accounts', 'settings', 'connect']

/**
 * A Claude Code-like tool loop: 8 rounds of thinking + tool_use / tool_result. With the
 * context limit of 3000 tokens set below, it is at ~74% before compaction; Layer 1 (keep 5
 * rounds) brings it to ~46%: above an L2 of 0.42, below the default 0.55.
 * @param {string} session
 */
function toolLoop(session) {
  /** @type {unknown[]} */
  const messages = [{ role: 'user', content: 'Find and fix the failing test in this repository.' }]
  for (let i = 1; i <= 8; i++) {
    messages.push({
      role: 'assistant',
      content: [
        {
          type: 'thinking',
          thinking: `Round ${i}: I should read file ${i} to see what the test expects before changing anything.`,
          signature: `EqSig${i}${'x'.repeat(40)}`,
        },
        { type: 'tool_use', id: `toolu_e2e_${i}`, name: 'read_file', input: { path: `src/file${i}.go` } },
      ],
    })
    const body = `// file ${i}\n` + `line of code number ${i} `.repeat(40).slice(0, 800)
    messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: `toolu_e2e_${i}`, content: body }] })
  }
  messages.push({ role: 'user', content: 'Go on.' })
  return {
    model: 'e2e-model',
    max_tokens: 64,
    stream: false,
    metadata: { user_id: `user_e2e_account__session_${session}` },
    messages,
  }
}

/**
 * n tool definitions, each with a description long enough that 31 of them take about 2,300
 * tokens (estimated): with the 3000-token limit of e2e-* they keep the toolLoop request above L3
 * (0.95) after Layers 1 and 2, and below the limit once Layer 3 has summarised its history
 * (the tools cannot be compacted, so more of them would leave it over the limit and refused).
 * @param {number} n
 */
function manyTools(n) {
  return Array.from({ length: n }, (_, i) => ({
    name: `tool_${i + 1}`,
    description: `Tool number ${i + 1}. ` + 'It does one small thing to the repository and reports what it did. '.repeat(2),
    input_schema: { type: 'object', properties: { path: { type: 'string' } } },
  }))
}

/**
 * body with the tool result of its first round (messages[2]) made long enough for the
 * tool-result compressor (over the 1000-character cap the Settings step sets).
 * @param {ReturnType<typeof toolLoop>} body
 */
function bigResult(body) {
  const messages = /** @type {{content: {content: string}[]}[]} */ (body.messages)
  const block = /** @type {{content: string}} */ (messages[2]?.content[0])
  block.content = `// file 1\n` + 'a long log line from the build output\n'.repeat(130)
  return body
}

/**
 * A first turn whose system prompt carries a cache_control breakpoint, for the upstream that
 * simulates prompt caching. The prompt is 1,300 one-letter words: 1,300 tokens to that
 * upstream's tokenizer, over the 1,024 it caches at least (proxy/proxytest/cache_sim.go), yet
 * about half that to Longhaul's estimate, well under the 3000-token limit of e2e-*, so no layer
 * has anything to do.
 * @param {string} session
 */
function cachedPrompt(session) {
  const rules = Array.from({ length: 1300 }, (_, i) => 'abcdefghij'[i % 10]).join(' ')
  return {
    model: 'e2e-cache',
    max_tokens: 16,
    stream: false,
    metadata: { user_id: `user_e2e_account__session_${session}` },
    system: [{ type: 'text', text: `House rules: ${rules}`, cache_control: { type: 'ephemeral' } }],
    messages: [{ role: 'user', content: 'Hello.' }],
  }
}

/**
 * Calls the backend's API from the page (with its session), failing on a status other than 2xx.
 * @param {import('playwright-core').Page} page
 * @param {string} uiURL
 * @param {string} method
 * @param {string} path
 * @param {unknown} [body]
 */
async function api(page, uiURL, method, path, body) {
  const r = await page.evaluate(
    async ([u, m, p, b]) => {
      const res = await fetch(new URL(String(p), String(u)), {
        method: String(m),
        headers: { 'Content-Type': 'application/json' },
        body: b === undefined ? undefined : JSON.stringify(b),
      })
      return { status: res.status, text: await res.text() }
    },
    [uiURL, method, path, body],
  )
  if (r.status < 200 || r.status > 299) throw new Error(`${method} ${path} = ${r.status}: ${r.text.slice(0, 300)}`)
  return r.text === '' ? undefined : JSON.parse(r.text)
}

/**
 * The ledger as the request page draws it: each entry's step, kind, path and label.
 * @param {import('playwright-core').Page} page
 */
async function ledgerEntries(page) {
  return page.getByTestId('ledger-entry').evaluateAll((els) =>
    els.map((e) => ({
      layer: e.getAttribute('data-layer') ?? '',
      kind: e.getAttribute('data-kind') ?? '',
      path: e.getAttribute('data-path') ?? '',
      label: (e.querySelector('[data-testid=ledger-entry-label]')?.textContent ?? '').trim(),
    })),
  )
}

/**
 * POSTs JSON on a fresh connection and resolves with the status, the body and the request id
 * the proxy answered with (Longhaul-Request-Id).
 * @param {number} port
 * @param {string} path
 * @param {unknown} body
 * @param {string} [key] the client key sent as x-api-key
 * @returns {Promise<{status: number, body: string, id: string}>}
 */
function postJSON(port, path, body, key = 'e2e') {
  return new Promise((done, fail) => {
    const data = JSON.stringify(body)
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'POST',
        agent: false,
        headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(data), 'x-api-key': key },
        timeout: 10_000,
      },
      (res) => {
        /** @type {Buffer[]} */
        const chunks = []
        res.on('data', (c) => chunks.push(c))
        res.on('end', () =>
          done({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), id: String(res.headers['longhaul-request-id'] ?? '') }),
        )
        res.on('error', fail)
      },
    )
    req.on('timeout', () => req.destroy(new Error('timeout')))
    req.on('error', fail)
    req.end(data)
  })
}

/**
 * Starts a scripted Anthropic upstream on a free port; resolves with its base URL.
 * @param {string[]} [flags] more flags, such as the simulation's (-cache-ttl 5m)
 * @returns {Promise<string>}
 */
async function startUpstream(flags = []) {
  const port = await freePort()
  const addr = `127.0.0.1:${port}`
  const bin = process.env.SCRIPTED_UPSTREAM
  const [cmd, args] = bin
    ? [resolve(bin), ['-addr', addr, '-gap', '5ms', ...flags]]
    : ['go', ['run', './proxy/proxytest/cmd/scripted-upstream', '-addr', addr, '-gap', '5ms', ...flags]]
  const proc = spawn(cmd, args, { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'], detached: true })
  upstreams.push(proc)
  const keep = (/** @type {string} */ prefix) => (/** @type {string} */ line) => backendOutput.push(prefix + line)
  createInterface({ input: /** @type {import('node:stream').Readable} */ (proc.stderr) }).on('line', keep('[upstream] '))
  const out = createInterface({ input: /** @type {import('node:stream').Readable} */ (proc.stdout) })
  const ready = new Promise((ok) => out.on('line', (line) => /scripted upstream .* on http/.test(line) && ok(undefined)))
  const exited = new Promise((_, fail) => proc.once('exit', (code) => fail(new Error(`scripted upstream exited (code ${code})`))))
  const spawnError = new Promise((_, fail) => proc.once('error', fail))
  await withTimeout(Promise.race([ready, exited, spawnError]), 120_000, 'scripted upstream to start')
  return `http://${addr}`
}

/**
 * Goes to a page through the sidebar, like a person.
 * @param {import('playwright-core').Page} page
 * @param {string} name
 */
async function nav(page, name) {
  await page.getByTestId(`nav-${name}`).click({ timeout: 5000 })
  await until(
    async () => (await page.locator('main').getAttribute('data-page', { timeout: 1000 })) === name,
    5000,
    () => `page ${name} did not open`,
  )
}

/**
 * Types into a number input and leaves it (its change handler runs on blur).
 * @param {import('playwright-core').Locator} input
 * @param {string} value
 */
async function typeAndLeave(input, value) {
  await input.fill(value, { timeout: 5000 })
  await input.press('Tab', { timeout: 5000 })
}

/**
 * @param {import('playwright-core').Page} page
 * @param {string} uiURL
 */
async function settingsJSON(page, uiURL) {
  return page.evaluate(async (u) => (await fetch(new URL('longhaul/v1/settings', u))).json(), uiURL)
}

/**
 * @param {import('playwright-core').Page} page
 * @param {string} uiURL
 */
async function historyJSON(page, uiURL) {
  return page.evaluate(async (u) => (await fetch(new URL('longhaul/v1/history?limit=10', u))).json(), uiURL)
}

/**
 * Waits until the monitor shows a row that was not in `before`, and returns its id.
 * @param {import('playwright-core').Page} page
 * @param {Set<string>} before
 * @param {number} ms
 */
async function newRow(page, before, ms) {
  let id = ''
  await until(
    async () => {
      const ids = await page.getByTestId('monitor-row').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-id') ?? ''))
      id = ids.find((x) => x !== '' && !before.has(x)) ?? ''
      return id !== ''
    },
    ms,
    () => 'no new row in the monitor',
  )
  return id
}

/** @param {import('playwright-core').Page} page */
async function rowIds(page) {
  return new Set(await page.getByTestId('monitor-row').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-id') ?? '')))
}

/**
 * @param {import('playwright-core').Page} page
 * @param {string} uiURL
 * @param {number} port
 * @param {string} home
 */
async function pageSteps(page, uiURL, port, home) {
  let upstreamURL = ''
  await step(
    'scripted upstream starts',
    async () => {
      upstreamURL = await startUpstream()
      console.log(`     upstream at ${upstreamURL}`)
    },
    125_000,
  )

  await step('Accounts: add an account', async () => {
    await nav(page, 'accounts')
    await page.getByTestId('account-add').click({ timeout: 5000 })
    const kinds = await page.locator('[data-testid=account-kind] option').evaluateAll((os) => os.map((o) => o.getAttribute('value')))
    if (kinds.join() !== 'anthropic,openai,openai-responses,gemini') throw new Error(`kinds offered: ${kinds.join()}`)
    /** @type {[string, string][]} */
    const placeholders = [['openai', 'https://api.openai.com/v1'], ['gemini', 'https://generativelanguage.googleapis.com'], ['anthropic', 'https://api.anthropic.com']]
    for (const [kind, url] of placeholders) {
      await page.getByTestId('account-kind').selectOption(kind)
      const shown = await page.getByTestId('account-base-url').getAttribute('placeholder')
      if (shown !== url) throw new Error(`base URL placeholder for ${kind} = ${shown}; want ${url}`)
    }
    await page.getByTestId('account-label').fill('e2e')
    await page.getByTestId('account-base-url').fill(upstreamURL)
    await page.getByTestId('account-save').click()
    await expectText(page, 'account-key-error', 'must not be empty', 5000) // refused without a key, on the field
    await page.getByTestId('account-key').fill(accountKey)
    await page.getByTestId('account-save').click()
    await expectText(page, 'account-masked-key', 'sk-…abcd', 5000)
    await expectText(page, 'proxy-accounts', '1', 5000)
    const html = await page.content()
    if (html.includes('sk-test-e2e-local')) throw new Error('the page shows the secret')
  })
  await step('Accounts: the key test reaches the upstream', async () => {
    await page.getByTestId('account-test').click({ timeout: 5000 })
    await until(
      async () => ((await page.getByTestId('account-test-result').textContent({ timeout: 1000 })) ?? '').includes('Key works'),
      10_000,
      () => 'no "Key works"',
    )
  })
  await step('Accounts: disable and enable', async () => {
    await page.getByTestId('account-toggle').click({ timeout: 5000 })
    await expectText(page, 'account-state', 'Disabled', 5000)
    await page.getByTestId('account-toggle').click({ timeout: 5000 })
    await expectText(page, 'account-state', 'Available', 5000)
  })

  await step('Settings: a 3000-token limit for e2e-*, L3 out of the way, no usage scaling, two allowed origins, tool results capped at 1000 characters, e2e-alias mapped to e2e-model', async () => {
    await nav(page, 'settings')
    await page.getByTestId('limit-new-pattern').fill('e2e-*', { timeout: 5000 })
    await page.getByTestId('limit-new-tokens').fill('3000')
    await page.getByTestId('limit-add').click()
    await typeAndLeave(page.getByTestId(`input-${L3}`), '0.95')
    await page.getByTestId('input-proxy.experimental.enable_usage_scaling').uncheck()
    await typeAndLeave(page.getByTestId('input-proxy.allowed_origins'), 'http://localhost:5173, https://chat.example.com')
    // toolLoop's results (~810 characters) stay under the cap; bigResult's is over it.
    await typeAndLeave(page.getByTestId('input-compaction.max_tool_result_chars'), '1000')
    await page.getByTestId('group-model-map').getByRole('button', { name: 'Add mapping' }).click()
    const mapping = page.getByTestId('mapping-row').last()
    await typeAndLeave(mapping.locator('input').nth(0), 'e2e-alias')
    await typeAndLeave(mapping.locator('input').nth(1), 'e2e-model')
    await page.getByTestId('settings-save').click()
    await page.getByTestId('settings-saved').waitFor({ timeout: 5000 })
    const v = await settingsJSON(page, uiURL)
    const x = v.settings.proxy
    if (x.context_limits['e2e-*'] !== 3000 || x.experimental.context_compression_threshold_l3 !== 0.95 || x.experimental.enable_usage_scaling ||
      JSON.stringify(x.allowed_origins) !== '["http://localhost:5173","https://chat.example.com"]' ||
      v.settings.compaction.max_tool_result_chars !== 1000 ||
      !x.model_map.some((/** @type {{pattern: string, model: string}} */ m) => m.pattern === 'e2e-alias' && m.model === 'e2e-model')) {
      throw new Error(`stored settings: ${JSON.stringify(v.settings)}`)
    }
  })

  /** @type {string} */
  let first = ''
  await step('a request through the proxy appears in the live monitor within a second', async () => {
    await nav(page, 'monitor')
    await until(async () => (await page.getByText('Loading…').count()) === 0, 5000, () => 'monitor still loading')
    const before = await rowIds(page)
    const res = await postJSON(port, '/v1/messages', toolLoop('first'))
    const t0 = Date.now()
    if (res.status !== 200) throw new Error(`proxy answered ${res.status}: ${res.body.slice(0, 300)}`)
    first = await newRow(page, before, 1000)
    console.log(`     row ${first} shown ${Date.now() - t0} ms after the reply`)
    await page.locator(`[data-testid=monitor-row][data-id="${first}"][data-state=finished]`).waitFor({ timeout: 5000 })
    await page.locator(`[data-testid=monitor-row][data-id="${first}"] [data-layer="Layer-1"]`).waitFor({ timeout: 2000 })
    // An Anthropic client to an Anthropic account: one name.
    const protocol = (await page.locator(`[data-testid=monitor-row][data-id="${first}"] [data-testid=row-protocol]`).textContent({ timeout: 2000 }))?.trim()
    if (protocol !== 'anthropic') throw new Error(`protocol column shows ${JSON.stringify(protocol)}; want "anthropic"`)
  })
  await step('its detail shows the ledger: Layer 1 removed the old rounds, messages[1–6]', async () => {
    await page.locator(`[data-testid=monitor-row][data-id="${first}"]`).click({ timeout: 5000 })
    await page.getByTestId('ledger').waitFor({ timeout: 5000 })
    const steps = await page.getByTestId('ledger-step').evaluateAll((els) => els.map((e) => e.getAttribute('data-layer')))
    if (JSON.stringify(steps) !== '["Layer-1"]') throw new Error(`ledger steps ${JSON.stringify(steps)}; want only Layer-1`)
    const entries = await ledgerEntries(page)
    // 3 of the 8 tool rounds (2 messages each) go, as one span of the request as received.
    if (JSON.stringify(entries) !== JSON.stringify([{ layer: 'Layer-1', kind: 'rounds-removed', path: 'messages[1–6]', label: 'old tool rounds removed' }])) {
      throw new Error(`ledger entries ${JSON.stringify(entries)}`)
    }
    await page.getByTestId('body-tab-forwarded').click()
    await page.screenshot({ path: join(outDir, 'request.png'), fullPage: true, timeout: 10_000 })
  })

  /** @type {string} */
  let replay = ''
  await step('Replay: "Re-send uncompacted" on its page shows the original and the replay side by side', async () => {
    await page.getByTestId('request-resend').click({ timeout: 5000 })
    // The replay returns, then its record is written by the recorder's batch: the page polls.
    await page.getByTestId('replay-comparison').waitFor({ timeout: 15_000 })
    const statuses = [
      ((await page.getByTestId('compare-status-original').textContent()) ?? '').trim(),
      ((await page.getByTestId('compare-status-replay').textContent()) ?? '').trim(),
    ]
    if (statuses.join() !== '200,200') throw new Error(`statuses compared: ${statuses.join(', ')}; want 200, 200`)
    if ((await page.locator('[data-testid=compare-compaction-original] [data-layer="Layer-1"]').count()) !== 1) throw new Error('the original shows no Layer-1')
    const replayed = ((await page.getByTestId('compare-compaction-replay').textContent()) ?? '').trim()
    if (replayed !== 'none') throw new Error(`the replay's compaction reads ${JSON.stringify(replayed)}; want none (sent uncompacted)`)
    if (!((await page.getByTestId('compare-reply-replay').textContent()) ?? '').includes('"content"')) throw new Error('the replay shows no reply')
    replay = ((await page.locator('[data-testid=compare-head-replay] a').textContent()) ?? '').trim()
    if (replay === '' || replay === first) throw new Error(`replay id ${JSON.stringify(replay)}`)
    // The original, read again, lists its replay.
    await page.locator(`[data-testid=replay-row][data-id="${replay}"]`).waitFor({ timeout: 5000 })
    await page.screenshot({ path: join(outDir, 'request-replay.png'), fullPage: true, timeout: 10_000 })
  })
  await step('Replay: marked in the monitor, linked to the request it re-sent', async () => {
    await nav(page, 'monitor')
    const row = page.locator(`[data-testid=monitor-row][data-id="${replay}"][data-replay-of="${first}"]`)
    await row.waitFor({ timeout: 5000 })
    await row.getByTestId('row-replay-of').waitFor({ timeout: 2000 })
    if ((await page.locator(`[data-testid=monitor-row][data-id="${first}"] [data-testid=row-replay-of]`).count()) !== 0) throw new Error('the original is marked as a replay')
    await row.click()
    await page.locator(`[data-testid=request-replay-of][href$="${first}"]`).waitFor({ timeout: 5000 })
  })

  await step('Settings: L2 below L1 is refused (page and backend)', async () => {
    await nav(page, 'settings')
    const l2 = page.getByTestId(`input-${L2}`)
    await typeAndLeave(l2, '0.3')
    const msg = (await page.getByTestId(`error-${L2}`).textContent({ timeout: 5000 })) ?? ''
    if (!msg.includes('L1')) throw new Error(`L2 error is ${JSON.stringify(msg)}`)
    if ((await l2.inputValue()) !== '0.55') throw new Error(`L2 input shows ${await l2.inputValue()} after the refusal`)
    if (!(await page.getByTestId('settings-save').isDisabled())) throw new Error('save is enabled with nothing to save')
    const r = await page.evaluate(
      async ([u, key]) => {
        const res = await fetch(new URL('longhaul/v1/settings', String(u)), {
          method: 'PUT',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ values: { [String(key)]: 0.3 } }),
        })
        return { status: res.status, body: await res.json() }
      },
      [uiURL, L2],
    )
    if (r.status !== 400 || r.body?.error?.fields?.[0]?.field !== L2) throw new Error(`backend answered ${r.status} ${JSON.stringify(r.body)}`)
  })
  await step('Settings: L2 = 0.42 is accepted', async () => {
    await typeAndLeave(page.getByTestId(`input-${L2}`), '0.42')
    if ((await page.getByTestId(`error-${L2}`).count()) !== 0) throw new Error('an error is still shown on L2')
    await page.getByTestId('settings-save').click()
    await page.getByTestId('settings-saved').waitFor({ timeout: 5000 })
    const v = await settingsJSON(page, uiURL)
    if (v.settings.proxy.experimental.context_compression_threshold_l2 !== 0.42) throw new Error(`stored L2 ${JSON.stringify(v.settings.proxy.experimental)}`)
  })
  await step('the next request uses the new L2 (Layer-2 fires)', async () => {
    await nav(page, 'monitor')
    await until(async () => (await page.getByText('Loading…').count()) === 0, 5000, () => 'monitor still loading')
    const before = await rowIds(page)
    const res = await postJSON(port, '/v1/messages', toolLoop('second'))
    if (res.status !== 200) throw new Error(`proxy answered ${res.status}`)
    const id = await newRow(page, before, 2000)
    await page.locator(`[data-testid=monitor-row][data-id="${id}"] [data-layer="Layer-2"]`).waitFor({ timeout: 3000 })
    const h = await historyJSON(page, uiURL)
    /** @type {Record<string, string[]>} */
    const layers = Object.fromEntries(h.exchanges.map((/** @type {{id: string, layers: string[]}} */ e) => [e.id, e.layers]))
    if (JSON.stringify(layers[first]) !== '["Layer-1"]') throw new Error(`first request layers ${JSON.stringify(layers[first])}; want only Layer-1`)
    if (!layers[id]?.includes('Layer-2')) throw new Error(`second request layers ${JSON.stringify(layers[id])}; want Layer-2`)
  })

  /** @type {{parent: string, child: string}} */
  const l3 = { parent: '', child: '' }
  await step('a request offering 31 tools shows the tool warning badge in the monitor', async () => {
    const before = await rowIds(page)
    const res = await postJSON(port, '/v1/messages', { ...bigResult(toolLoop('tools')), tools: manyTools(31) })
    if (res.status !== 200) throw new Error(`proxy answered ${res.status}: ${res.body.slice(0, 300)}`)
    await newRow(page, before, 3000)
    await until(
      async () => {
        const h = await historyJSON(page, uiURL)
        const e = h.exchanges.find((/** @type {{tools: number, parentID: string}} */ x) => x.tools === 31 && x.parentID === '')
        l3.parent = e?.id ?? ''
        return l3.parent !== ''
      },
      5000,
      () => 'no recorded request with 31 tools',
    )
    const badge = page.locator(`[data-testid=monitor-row][data-id="${l3.parent}"] [data-testid=tools-badge]`)
    await badge.waitFor({ timeout: 5000 })
    if ((await badge.getAttribute('data-warning')) !== 'true') throw new Error('31 tools (over the default 30) show no warning')
    if (!((await badge.textContent()) ?? '').includes('31')) throw new Error(`badge reads ${JSON.stringify(await badge.textContent())}`)
  })
  await step('Layer 3 ran on it: its summary call is a child row, linked to it, with account and tokens on its page', async () => {
    await until(
      async () => {
        const h = await historyJSON(page, uiURL)
        const c = h.exchanges.find((/** @type {{parentID: string}} */ x) => x.parentID === l3.parent)
        l3.child = c?.id ?? ''
        return l3.child !== ''
      },
      5000,
      () => `no summary call recorded for ${l3.parent}`,
    )
    const row = page.locator(`[data-testid=monitor-row][data-id="${l3.child}"][data-parent="${l3.parent}"]`)
    await row.waitFor({ timeout: 5000 })
    await row.getByTestId('row-parent').click()
    const call = page.locator(`[data-testid=summary-call][data-id="${l3.child}"]`)
    await call.waitFor({ timeout: 5000 })
    const account = ((await call.getByTestId('summary-call-account').textContent()) ?? '').trim()
    const tokens = ((await call.getByTestId('summary-call-tokens').textContent()) ?? '').trim()
    if (account === '' || account === '–') throw new Error('the summary call shows no account')
    if (!/^in [1-9]/.test(tokens)) throw new Error(`the summary call shows tokens ${JSON.stringify(tokens)}; want its input tokens`)
    await page.screenshot({ path: join(outDir, 'request-layer3.png'), fullPage: true, timeout: 10_000 })
  })
  await step('its ledger: the compressor, Layers 1, 2 and 3, each entry at its place in the request as received', async () => {
    await page.getByTestId('ledger').waitFor({ timeout: 5000 })
    const steps = await page.getByTestId('ledger-step').evaluateAll((els) => els.map((e) => e.getAttribute('data-layer')))
    if (JSON.stringify(steps) !== '["tool-results","Layer-1","Layer-2","Layer-3"]') throw new Error(`ledger steps ${JSON.stringify(steps)}`)
    const entries = await ledgerEntries(page)
    /** @param {string} layer @param {string} kind @param {RegExp} path */
    const find = (layer, kind, path) => {
      const e = entries.find((x) => x.layer === layer && x.kind === kind && path.test(x.path))
      if (!e) throw new Error(`no ${layer} ${kind} entry at ${path}: ${JSON.stringify(entries)}`)
      return e
    }
    // bigResult put the long result in round 1: message 2, block 0.
    find('tool-results', 'result-shortened', /^messages\[2\]\.content\[0\]$/)
    const rounds = find('Layer-1', 'rounds-removed', /^messages\[1–\d+\]$/)
    if (rounds.label !== 'old tool rounds removed') throw new Error(`rounds-removed reads ${JSON.stringify(rounds.label)}`)
    const elided = find('Layer-2', 'thinking-elided', /^messages\[\d+\]\.content\[0\]$/)
    if (elided.label !== 'thinking elided (signature kept)') throw new Error(`thinking-elided reads ${JSON.stringify(elided.label)}`)
    find('Layer-3', 'summary-added', /^$/)
    const shortened = page.locator('[data-testid=ledger-entry][data-kind=result-shortened]')
    const before = (await shortened.getByTestId('ledger-entry-before').textContent()) ?? ''
    if (!before.startsWith('// file 1')) throw new Error(`the shortened result's preview reads ${JSON.stringify(before.slice(0, 80))}`)
    if (!((await shortened.textContent()) ?? '').includes('toolu_e2e_1')) throw new Error('the shortened result does not name its tool_use id')
    await page.screenshot({ path: join(outDir, 'request-ledger.png'), fullPage: true, timeout: 10_000 })
  })
  await step('a mapped model: the ledger says the model was renamed, naming both', async () => {
    const res = await postJSON(port, '/v1/messages', { model: 'e2e-alias', max_tokens: 16, stream: false, messages: [{ role: 'user', content: 'hi' }] })
    if (res.status !== 200 || res.id === '') throw new Error(`proxy answered ${res.status}: ${res.body.slice(0, 300)}`)
    await page.goto(`${uiURL}#/request/${encodeURIComponent(res.id)}`, { waitUntil: 'load' })
    // The row is written by the recorder's batch: the detail page retries until it is there.
    const entry = page.locator('[data-testid=ledger-step][data-layer=model-map] [data-testid=ledger-entry][data-kind=model-renamed]')
    await entry.waitFor({ timeout: 10_000 })
    const label = ((await entry.getByTestId('ledger-entry-label').textContent()) ?? '').trim()
    const change = ((await entry.getByTestId('ledger-entry-change').textContent()) ?? '').trim()
    if (label !== 'model renamed' || !change.startsWith('e2e-alias → e2e-model')) throw new Error(`model-map entry reads ${JSON.stringify(label)}, ${JSON.stringify(change)}`)
    const steps = await page.getByTestId('ledger-step').evaluateAll((els) => els.map((e) => e.getAttribute('data-layer')))
    if (JSON.stringify(steps) !== '["model-map"]') throw new Error(`ledger steps ${JSON.stringify(steps)}; want only the model map`)
    await nav(page, 'monitor')
    await until(async () => (await page.getByText('Loading…').count()) === 0, 5000, () => 'monitor still loading')
    // A model map is no compaction: its row has no compaction badge.
    const badges = await page.locator(`[data-testid=monitor-row][data-id="${res.id}"] [data-testid=layer-badge]`).count()
    if (badges !== 0) throw new Error(`the mapped request shows ${badges} compaction badges; want none`)
  })
  await step('the dashboard counts the summary call', async () => {
    await nav(page, 'dashboard')
    const text = (await page.getByTestId('total-summary-calls').textContent({ timeout: 5000 })) ?? ''
    if (!/[1-9]/.test(text)) throw new Error(`dashboard summary calls: ${JSON.stringify(text)}`)
    await nav(page, 'monitor')
    await until(async () => (await page.getByText('Loading…').count()) === 0, 5000, () => 'monitor still loading')
  })

  await step('Prices: a price for e2e-* set in Settings; the monitor, the request page and the dashboard show estimated costs, the replay apart', async () => {
    await nav(page, 'settings')
    await page.getByTestId('price-new-pattern').fill('e2e-*', { timeout: 5000 })
    await page.getByTestId('price-new-input').fill('1000')
    await page.getByTestId('price-new-output').fill('5000')
    await page.getByTestId('price-add').click()
    await page.getByTestId('settings-save').click()
    await page.getByTestId('settings-saved').waitFor({ timeout: 5000 })
    const v = await settingsJSON(page, uiURL)
    if (JSON.stringify(v.settings.pricing.table['e2e-*']) !== '{"input":1000,"output":5000}') throw new Error(`stored price: ${JSON.stringify(v.settings.pricing.table['e2e-*'])}`)

    await nav(page, 'monitor')
    await until(async () => (await page.getByText('Loading…').count()) === 0, 5000, () => 'monitor still loading')
    const before = await rowIds(page)
    const res = await postJSON(port, '/v1/messages', toolLoop('priced'))
    if (res.status !== 200) throw new Error(`proxy answered ${res.status}`)
    const id = await newRow(page, before, 2000)
    const row = page.locator(`[data-testid=monitor-row][data-id="${id}"][data-state=finished]`)
    await row.waitFor({ timeout: 5000 })
    // The live row is priced by the backend as it finishes: tokens × the price just saved (the
    // cache prices left out follow the input price), the same as the history's row.
    const h = await historyJSON(page, uiURL)
    const e = h.exchanges.find((/** @type {{id: string}} */ x) => x.id === id)
    const want = (e.inputTokens * 1000 + e.outputTokens * 5000 + e.cacheReadTokens * 100 + e.cacheWriteTokens * 1250) / 1e6
    if (!e.cost || Math.abs(e.cost.total - want) > 1e-9) throw new Error(`history row cost ${JSON.stringify(e.cost)}; want total ${want}`)
    const shown = ((await row.getByTestId('row-cost').textContent()) ?? '').trim()
    if (!/^\$[0-9.,]+$/.test(shown) || Math.abs(Number(shown.slice(1).replace(/,/g, '')) - want) > Math.max(0.005, want * 0.05)) {
      throw new Error(`the monitor shows ${JSON.stringify(shown)}; want about $${want}`)
    }
    const split = (await row.getByTestId('row-tokens').getAttribute('title')) ?? ''
    if (!/new · .* cached · .* written/.test(split)) throw new Error(`the tokens' tooltip reads ${JSON.stringify(split)}; want the input split`)
    await row.click()
    const detail = ((await page.getByTestId('request-cost').textContent({ timeout: 5000 })) ?? '').trim()
    if (!detail.startsWith(shown) || !detail.includes('cache read')) throw new Error(`the request page's cost reads ${JSON.stringify(detail)}`)
    const inputSplit = ((await page.getByTestId('request-input-split').textContent()) ?? '').trim()
    if (!inputSplit.startsWith(`${e.inputTokens.toLocaleString('en')} new`)) throw new Error(`the request page's input reads ${JSON.stringify(inputSplit)}`)

    await nav(page, 'dashboard')
    await until(
      async () => /^\$[0-9.,]+$/.test(((await page.getByTestId('total-cost').textContent({ timeout: 1000 })) ?? '').trim()),
      5000,
      () => 'the dashboard shows no total cost',
    )
    const replays = ((await page.getByTestId('total-replays').textContent({ timeout: 5000 })) ?? '').trim()
    if (!/^↻ replays not counted: 1 \(\$[0-9.,]+\)$/.test(replays)) throw new Error(`the dashboard's replays read ${JSON.stringify(replays)}; want the one replay, priced, apart`)
    await page.screenshot({ path: join(outDir, 'dashboard-cost.png'), fullPage: true, timeout: 10_000 })
    await nav(page, 'monitor')
    await until(async () => (await page.getByText('Loading…').count()) === 0, 5000, () => 'monitor still loading')
  })

  await step('Monitor: paused, a new request waits; resumed, it shows', async () => {
    await page.getByTestId('monitor-pause').click({ timeout: 5000 })
    const before = await rowIds(page)
    const res = await postJSON(port, '/v1/messages', toolLoop('paused'))
    if (res.status !== 200) throw new Error(`proxy answered ${res.status}`)
    await until(
      async () => ((await page.getByTestId('monitor-pending').textContent({ timeout: 1000 })) ?? '').startsWith('1 '),
      3000,
      () => 'the pending count did not reach 1',
    )
    if ((await rowIds(page)).size !== before.size) throw new Error('a row was added while paused')
    await page.getByTestId('monitor-pause').click()
    await newRow(page, before, 2000)
  })

  await step('Monitor: with a filter on, the backend decides which live requests show', async () => {
    const status = page.getByTestId('filter-status')
    const settled = () => until(async () => (await page.getByText('Loading…').count()) === 0, 5000, () => 'monitor still loading')
    await status.selectOption('error', { timeout: 5000 })
    await settled()
    const errors = await rowIds(page)
    let res = await postJSON(port, '/v1/messages', toolLoop('filtered-out'))
    if (res.status !== 200) throw new Error(`proxy answered ${res.status}`)
    await new Promise((r) => setTimeout(r, 3000)) // past the refilter and the settling one
    const shown = [...(await rowIds(page))].filter((x) => !errors.has(x))
    if (shown.length > 0) throw new Error(`a successful request (${shown.join(', ')}) was shown under the "error" filter`)

    await status.selectOption('ok')
    await settled()
    const before = await rowIds(page)
    if (before.size === 0) throw new Error('no rows under "ok"')
    res = await postJSON(port, '/v1/messages', toolLoop('filtered-in'))
    if (res.status !== 200) throw new Error(`proxy answered ${res.status}`)
    const id = await newRow(page, before, 5000)
    await page.locator(`[data-testid=monitor-row][data-id="${id}"][data-state=finished]`).waitFor({ timeout: 2000 })
    await status.selectOption('')
    await settled()
  })

  await step('Connect: configure Claude Code, then undo', async () => {
    await nav(page, 'connect')
    await page.getByTestId('claude-code-configure').click({ timeout: 5000 })
    await until(
      async () => ((await page.getByTestId('claude-code-state').textContent({ timeout: 1000 })) ?? '').includes('points at Longhaul'),
      5000,
      () => 'not shown as configured',
    )
    const file = join(home, '.claude', 'settings.json')
    const doc = JSON.parse(await readFile(file, 'utf8'))
    if (doc.env?.ANTHROPIC_BASE_URL !== `http://127.0.0.1:${port}`) throw new Error(`settings.json: ${JSON.stringify(doc)}`)
    await page.getByTestId('claude-code-undo').click({ timeout: 5000 })
    await until(async () => !existsSync(file), 5000, () => `${file} still exists after undo`)
  })
  await step('Connect: OpenAI and Gemini clients get snippets with this proxy\'s address', async () => {
    const code = async (/** @type {string} */ id) => (await page.locator(`[data-testid=snippet-${id}] code`).textContent({ timeout: 5000 })) ?? ''
    const u = `http://127.0.0.1:${port}`
    const want = {
      codex: [`base_url = "${u}/v1"`, 'wire_api = "responses"', 'model_provider = "longhaul"'],
      openaiPython: [`base_url="${u}/v1"`],
      cline: [`Base URL: ${u}/v1`],
      geminiCli: [`GOOGLE_GEMINI_BASE_URL=${u}\n`],
      genaiNode: [`baseUrl: "${u}"`],
    }
    for (const [id, parts] of Object.entries(want)) {
      const text = await code(id)
      for (const p of parts) if (!text.includes(p)) throw new Error(`snippet ${id} lacks ${JSON.stringify(p)}: ${text}`)
    }
  })

  await step('Settings: a new port applies without restart and the page shows it', async () => {
    const newPort = await freePort()
    await nav(page, 'settings')
    await typeAndLeave(page.getByTestId('input-proxy.port'), String(newPort))
    await page.getByTestId('settings-save').click()
    await page.getByTestId('settings-saved').waitFor({ timeout: 5000 })
    await until(
      async () => ((await page.getByTestId('proxy-address').textContent({ timeout: 1000 })) ?? '').endsWith(`:${newPort}`),
      5000,
      () => `the sidebar does not show :${newPort}`,
    )
    const shown = (await page.getByTestId('settings-address').textContent()) ?? ''
    if (!shown.includes(`:${newPort}`)) throw new Error(`settings shows ${JSON.stringify(shown)}`)
    let last = /** @type {{status: number} | {error: string}} */ ({ error: 'not tried' })
    await until(async () => 'status' in (last = await healthz(newPort)) && last.status === 200, settleMs, () => `new port: ${show(last)}`)
    await until(async () => 'error' in (last = await healthz(port)) && last.error === 'ECONNREFUSED', settleMs, () => `old port: ${show(last)}`)
    const res = await postJSON(newPort, '/v1/messages', toolLoop('after-port-change'))
    if (res.status !== 200) throw new Error(`proxy on the new port answered ${res.status}`)
  })

  await step('Settings: self-update says it is off (no release source in this build)', async () => {
    await nav(page, 'settings')
    await page.locator('[data-testid=update-state][data-state=off]').waitFor({ timeout: 5000 })
    if (!(await page.getByTestId('update-check').isDisabled())) throw new Error('"Check now" is enabled while updates are off')
  })

  /** @type {{url: string, session: string, request: string}} */
  const cached = { url: '', session: '', request: '' }
  await step(
    'a second scripted upstream simulates the prompt cache (-cache-ttl 5m), an account for e2e-cache only',
    async () => {
      cached.url = await startUpstream(['-cache-ttl', '5m'])
      console.log(`     caching upstream at ${cached.url}`)
      // Only requests for e2e-cache may go to it: the steps before and after see one account.
      await api(page, uiURL, 'POST', 'longhaul/v1/accounts', {
        label: 'e2e-cache', kind: 'anthropic', baseURL: cached.url, key: cacheAccountKey, models: ['e2e-cache'], priority: 0, weight: 1,
      })
    },
    125_000,
  )
  await step('Sessions: a session whose prompt the upstream cached shows "cache warm" counting down, and its window with the reason', async () => {
    // The first account serves any model: off for this one request, so the caching one answers.
    const accounts = await api(page, uiURL, 'GET', 'longhaul/v1/accounts')
    const first = accounts.find((/** @type {{label: string}} */ a) => a.label === 'e2e')
    if (first === undefined) throw new Error(`no account "e2e": ${JSON.stringify(accounts)}`)
    const status = await api(page, uiURL, 'GET', 'longhaul/v1/status')
    const proxyPort = Number(String(status.address).split(':').pop())
    await api(page, uiURL, 'POST', `longhaul/v1/accounts/${first.id}/enabled`, { enabled: false })
    /** @type {{status: number, body: string, id: string}} */
    let res
    try {
      res = await postJSON(proxyPort, '/v1/messages', cachedPrompt('cached'))
    } finally {
      await api(page, uiURL, 'POST', `longhaul/v1/accounts/${first.id}/enabled`, { enabled: true })
    }
    if (res.status !== 200 || res.id === '') throw new Error(`proxy answered ${res.status}: ${res.body.slice(0, 300)}`)
    const usage = JSON.parse(res.body).usage ?? {}
    if (!(usage.cache_creation_input_tokens > 1024)) throw new Error(`the upstream cached nothing: usage ${JSON.stringify(usage)}`)
    cached.request = res.id
    await until(
      async () => {
        const h = await historyJSON(page, uiURL)
        cached.session = h.exchanges.find((/** @type {{id: string}} */ e) => e.id === res.id)?.sessionID ?? ''
        return cached.session !== ''
      },
      5000,
      () => `request ${res.id} not recorded with a session`,
    )
    await nav(page, 'sessions')
    const card = page.locator(`[data-testid=session][data-id="${cached.session}"]`)
    await card.waitFor({ timeout: 5000 })
    const line = card.locator('[data-testid=session-cache] [data-testid=cache-line]')
    await line.waitFor({ timeout: 5000 })
    const warm = /^cache warm · [\d.]+K tokens · cold in ([0-5]):(\d\d)$/
    /** @param {string} text */
    const left = (text) => {
      const m = warm.exec(text)
      return m ? Number(m[1]) * 60 + Number(m[2]) : -1
    }
    const firstText = ((await line.textContent()) ?? '').trim()
    const firstLeft = left(firstText)
    if ((await line.getAttribute('data-warm')) !== 'true' || firstLeft < 240 || firstLeft > 300) {
      throw new Error(`the cache line reads ${JSON.stringify(firstText)}; want "cache warm · 1.3K tokens · cold in 4:5x"`)
    }
    // It counts down in the page, without a reload.
    let now = firstText
    await until(
      async () => {
        now = ((await line.textContent()) ?? '').trim()
        return left(now) > 0 && left(now) < firstLeft
      },
      5000,
      () => `the countdown stayed at ${JSON.stringify(now)}`,
    )
    // The window of e2e-* is the one set in Settings.
    const win = card.getByTestId('session-window')
    const winText = ((await win.textContent()) ?? '').replace(/\s+/g, ' ').trim()
    if (winText !== '3,000 tokens · your setting') throw new Error(`the session's window reads ${JSON.stringify(winText)}`)
    if ((await win.getByTestId('context-window').getAttribute('data-source')) !== 'setting') throw new Error('the window source is not "setting"')
    // A session with no cache seen says nothing of one.
    const plain = page.locator('[data-testid=session]').filter({ hasNot: page.getByTestId('session-cache') })
    if ((await plain.count()) === 0) throw new Error('every session shows a cache line; the first sessions saw none')
    await page.screenshot({ path: join(outDir, 'sessions-cache.png'), fullPage: true, timeout: 10_000 })
  })
  await step('its request page names the window and why', async () => {
    await page.goto(`${uiURL}#/request/${encodeURIComponent(cached.request)}`, { waitUntil: 'load' })
    const win = page.getByTestId('request-window')
    await win.waitFor({ timeout: 10_000 })
    const text = ((await win.textContent()) ?? '').replace(/\s+/g, ' ').trim()
    if (text !== '3,000 tokens · your setting') throw new Error(`the request's window reads ${JSON.stringify(text)}`)
    await nav(page, 'monitor')
  })

  await step(
    'a signature-repaired request: a third scripted upstream (-agent, an account for e2e-agent only) signs its thinking; the next turn, sent back without the signature, shows "signature restored" at messages[1].content[0] and forwards the signature it did not receive',
    async () => {
      const agentURL = await startUpstream(['-agent'])
      console.log(`     agent upstream at ${agentURL}`)
      await api(page, uiURL, 'POST', 'longhaul/v1/accounts', {
        label: 'e2e-agent', kind: 'anthropic', baseURL: agentURL, key: agentAccountKey, models: ['e2e-agent'], priority: 0, weight: 1,
      })
      // The first account serves any model: off for these two requests, so the agent answers both.
      const accounts = await api(page, uiURL, 'GET', 'longhaul/v1/accounts')
      const any = accounts.find((/** @type {{label: string}} */ a) => a.label === 'e2e')
      if (any === undefined) throw new Error(`no account "e2e": ${JSON.stringify(accounts)}`)
      const status = await api(page, uiURL, 'GET', 'longhaul/v1/status')
      const proxyPort = Number(String(status.address).split(':').pop())
      const first = {
        model: 'e2e-agent',
        max_tokens: 2000,
        stream: false,
        thinking: { type: 'enabled', budget_tokens: 1024 },
        metadata: { user_id: 'user_e2e_account__session_signature' },
        tools: [{ name: 'read_file', description: 'Reads a file.', input_schema: { type: 'object', properties: { path: { type: 'string' } } } }],
        messages: [{ role: 'user', content: 'Read the README.' }],
      }
      /** @type {{status: number, body: string, id: string}} */
      let repaired
      await api(page, uiURL, 'POST', `longhaul/v1/accounts/${any.id}/enabled`, { enabled: false })
      try {
        const res = await postJSON(proxyPort, '/v1/messages', first)
        if (res.status !== 200 || res.id === '') throw new Error(`first turn: proxy answered ${res.status}: ${res.body.slice(0, 300)}`)
        const content = JSON.parse(res.body).content ?? []
        const thinking = content.find((/** @type {{type: string}} */ b) => b.type === 'thinking')
        const call = content.find((/** @type {{type: string}} */ b) => b.type === 'tool_use')
        if (thinking?.signature !== 'EqScriptedAgentSignature' || call === undefined) throw new Error(`first turn's reply: ${res.body.slice(0, 500)}`)
        // The proxy learns the reply's signature as the exchange finishes (proxy/compaction.go
        // learn); once its row is recorded, that has happened.
        await until(
          async () => (await historyJSON(page, uiURL)).exchanges.some((/** @type {{id: string}} */ e) => e.id === res.id),
          5000,
          () => `first turn ${res.id} not recorded`,
        )
        // The client sends the turn back with the thinking block's signature dropped.
        repaired = await postJSON(proxyPort, '/v1/messages', {
          ...first,
          messages: [
            ...first.messages,
            { role: 'assistant', content: [{ type: 'thinking', thinking: thinking.thinking }, call] },
            { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: '# Longhaul' }] },
          ],
        })
      } finally {
        await api(page, uiURL, 'POST', `longhaul/v1/accounts/${any.id}/enabled`, { enabled: true })
      }
      if (repaired.status !== 200 || repaired.id === '') throw new Error(`second turn: proxy answered ${repaired.status}: ${repaired.body.slice(0, 300)}`)

      await page.goto(`${uiURL}#/request/${encodeURIComponent(repaired.id)}`, { waitUntil: 'load' })
      // The row is written by the recorder's batch: the detail page retries until it is there.
      const entry = page.locator('[data-testid=ledger-step][data-layer=signatures] [data-testid=ledger-entry][data-kind=signature-restored]')
      await entry.waitFor({ timeout: 10_000 })
      const entries = await ledgerEntries(page)
      const want = [{ layer: 'signatures', kind: 'signature-restored', path: 'messages[1].content[0]', label: 'signature restored from the cache' }]
      if (JSON.stringify(entries) !== JSON.stringify(want)) throw new Error(`ledger entries ${JSON.stringify(entries)}; want ${JSON.stringify(want)}`)
      // The bodies as the page shows them: the signature went upstream, the client never sent it.
      const shownBody = async (/** @type {string} */ tab) => {
        await page.getByTestId(`body-tab-${tab}`).click({ timeout: 5000 })
        await until(
          async () => (await page.getByTestId(`body-tab-${tab}`).getAttribute('aria-selected')) === 'true',
          5000,
          () => `the ${tab} tab is not selected`,
        )
        return (await page.locator('[data-testid=bodies] pre code').textContent({ timeout: 5000 })) ?? ''
      }
      // Shown pretty-printed: read back as JSON, the thinking block of messages[1] in each.
      const thinkingOf = (/** @type {string} */ text) => JSON.parse(text).messages?.[1]?.content?.[0] ?? {}
      const received = thinkingOf(await shownBody('request'))
      const forwarded = thinkingOf(await shownBody('forwarded'))
      if (received.type !== 'thinking' || 'signature' in received) throw new Error(`the received body's messages[1].content[0]: ${JSON.stringify(received)}`)
      if (forwarded.type !== 'thinking' || forwarded.signature !== 'EqScriptedAgentSignature' || forwarded.thinking !== received.thinking) {
        throw new Error(`the forwarded body's messages[1].content[0]: ${JSON.stringify(forwarded)}`)
      }
      await page.screenshot({ path: join(outDir, 'request-signature.png'), fullPage: true, timeout: 10_000 })
      // The record agrees with the page.
      const record = await api(page, uiURL, 'GET', `longhaul/v1/history/${encodeURIComponent(repaired.id)}`)
      if (record.bodies?.request.includes('EqScriptedAgentSignature') || !record.bodies?.forwarded.includes('EqScriptedAgentSignature')) {
        throw new Error(`recorded bodies: ${JSON.stringify(record.bodies).slice(0, 600)}`)
      }
      await nav(page, 'monitor')
    },
    125_000,
  )

  await step('every page renders in English (screenshots)', async () => {
    for (const name of pageNames) {
      await nav(page, name)
      await page.waitForTimeout(400)
      await page.screenshot({ path: join(outDir, `${name}.png`), fullPage: true, timeout: 10_000 })
    }
    await nav(page, 'monitor')
    await page.emulateMedia({ colorScheme: 'dark' })
    await page.screenshot({ path: join(outDir, 'monitor-dark.png'), fullPage: true, timeout: 10_000 })
    await page.emulateMedia({ colorScheme: 'light' })
  })
  await step('zh-CN: every page renders with no missing key', async () => {
    await nav(page, 'settings')
    await page.getByTestId('input-app.language').selectOption('zh-CN', { timeout: 5000 })
    await page.getByTestId('settings-save').click()
    await expectText(page, 'nav-monitor', '监控', 5000)
    for (const name of pageNames) {
      await nav(page, name)
      await page.waitForTimeout(400)
      await page.screenshot({ path: join(outDir, `${name}-zh.png`), fullPage: true, timeout: 10_000 })
    }
    await nav(page, 'monitor')
    await page.locator('[data-testid=monitor-row]').first().click({ timeout: 5000 })
    await page.getByTestId('diff').waitFor({ timeout: 5000 })
    await page.screenshot({ path: join(outDir, 'request-zh.png'), fullPage: true, timeout: 10_000 })
    const missing = await page.evaluate(() => window.__longhaulMissingKeys ?? ['(no record)'])
    if (missing.length > 0) throw new Error(`missing keys: ${missing.join(', ')}`)
    // Back to English for the rest of the run.
    await nav(page, 'settings')
    await page.getByTestId('input-app.language').selectOption('en', { timeout: 5000 })
    await page.getByTestId('settings-save').click()
    await expectText(page, 'nav-monitor', 'Monitor', 5000)
  })
}

// ---------------------------------------------------------------------------------------------
// The login page: with a client key set, the browser UI asks for it once.

const clientKey = 'lh-e2e-client-key-4242'
/** The key of the account added in the Accounts page. */
const accountKey = 'sk-test-e2e-local-0000-abcd'
/** The key of the account of the upstream that simulates the prompt cache. */
const cacheAccountKey = 'sk-test-e2e-cache-0000-wxyz'
/** The key of the account of the upstream that plays the agent (-agent). */
const agentAccountKey = 'sk-test-e2e-agent-0000-mnop'

/**
 * GET url from Node, with no cookie: what a script or another page without the session gets.
 * @param {string} url
 * @returns {Promise<number>}
 */
function statusWithoutCookie(url) {
  return new Promise((done, fail) => {
    const req = httpGet(url, { agent: false, headers: { Connection: 'close' }, timeout: 5000 }, (res) => {
      res.resume()
      res.on('end', () => done(res.statusCode ?? 0))
    })
    req.on('timeout', () => req.destroy(new Error('timeout')))
    req.on('error', fail)
  })
}

/**
 * @param {import('playwright-core').Page} page
 * @param {string} uiURL
 */
async function loginSteps(page, uiURL) {
  await step('Login: a client key is set', async () => {
    const status = await page.evaluate(
      async ([u, key]) =>
        (
          await fetch(new URL('longhaul/v1/settings', u), {
            method: 'PUT',
            headers: { 'Content-Type': 'application/json' },
            body: JSON.stringify({ values: { 'proxy.client_key': key } }),
          })
        ).status,
      [uiURL, clientKey],
    )
    if (status !== 200) throw new Error(`PUT settings = ${status}`)
  })
  await step('Login: the UI shows the login page', async () => {
    await page.goto(`${uiURL}#/monitor`, { waitUntil: 'load' })
    await page.getByTestId('login-page').waitFor({ timeout: 10_000 })
    await page.screenshot({ path: join(outDir, 'login.png'), fullPage: true, timeout: 10_000 })
  })
  await step('Login: a wrong key is refused', async () => {
    await page.getByTestId('login-key').fill('lh-e2e-guess', { timeout: 5000 })
    await page.getByTestId('login-submit').click({ timeout: 5000 })
    await expectText(page, 'login-error', 'That is not the client key.', 5000)
    const cookies = await page.context().cookies(new URL('longhaul/v1/', uiURL).href)
    if (cookies.some((c) => c.name.startsWith('longhaul_session_'))) throw new Error('a session cookie after a wrong key')
  })
  await step('Login: the right key opens the app', async () => {
    await page.getByTestId('login-key').fill(clientKey, { timeout: 5000 })
    await page.getByTestId('login-submit').click({ timeout: 5000 })
    await expectText(page, 'proxy-state', 'Running', 10_000)
    await nav(page, 'accounts')
    await nav(page, 'monitor')
    await page.getByTestId('monitor-row').first().waitFor({ timeout: 10_000 })
  })
  await step('Login: the session cookie is HttpOnly, SameSite=Strict, for the API path only', async () => {
    const c = (await page.context().cookies(new URL('longhaul/v1/', uiURL).href)).find((x) => x.name.startsWith('longhaul_session_'))
    if (c === undefined || !c.httpOnly || c.sameSite !== 'Strict' || c.path !== '/longhaul/v1/') throw new Error(`cookie: ${JSON.stringify(c)}`)
    if ((await page.context().cookies(uiURL)).some((x) => x.name.startsWith('longhaul_session_'))) {
      throw new Error('the session cookie is sent beyond the API path /longhaul/v1/')
    }
    const seen = await page.evaluate(() => document.cookie)
    if (seen.includes('longhaul_session')) throw new Error('the page script can read the session cookie')
  })
  await step('Login: the API without the cookie answers 401, with it 200', async () => {
    const without = await statusWithoutCookie(new URL('longhaul/v1/settings', uiURL).href)
    if (without !== 401) throw new Error(`GET settings without the cookie = ${without}`)
    const withCookie = await page.evaluate(async (u) => (await fetch(new URL('longhaul/v1/settings', u))).status, uiURL)
    if (withCookie !== 200) throw new Error(`GET settings with the cookie = ${withCookie}`)
  })
  await step('Login: sign out asks for the key again', async () => {
    await page.getByTestId('logout').click({ timeout: 5000 })
    await page.getByTestId('login-page').waitFor({ timeout: 10_000 })
    const after = await page.evaluate(async (u) => (await fetch(new URL('longhaul/v1/settings', u))).status, uiURL)
    if (after !== 401) throw new Error(`GET settings after sign-out = ${after}`)
  })
  await step('Login: signing in again returns to the app', async () => {
    await page.getByTestId('login-key').fill(clientKey, { timeout: 5000 })
    await page.getByTestId('login-submit').click({ timeout: 5000 })
    await expectText(page, 'proxy-state', 'Running', 10_000)
  })
}

/**
 * The repro bundle: a request whose prompt holds the client key and the account key (as is and
 * base64) goes through the proxy; its detail page's button downloads a zip that holds
 * request.json and neither key in any file. Runs after loginSteps, so a client key is set.
 * @param {import('playwright-core').Page} page
 * @param {string} uiURL
 */
async function bundleSteps(page, uiURL) {
  /** @type {string} */
  let id = ''
  const secrets = [clientKey, accountKey]
  await step('Bundle: a request with the client key and the account key in its prompt', async () => {
    // The proxy's port changed in Settings: ask the backend where it is now.
    const status = await page.evaluate(async (u) => (await fetch(new URL('longhaul/v1/status', u))).json(), uiURL)
    const port = Number(String(status.address).split(':').pop())
    const body = toolLoop('bundle')
    body.messages[body.messages.length - 1] = {
      role: 'user',
      content: `Go on. My keys: ${clientKey} and ${accountKey}; encoded ${Buffer.from(clientKey).toString('base64')} ${Buffer.from(accountKey).toString('base64')}`,
    }
    const res = await postJSON(port, '/v1/messages', body, clientKey)
    if (res.status !== 200 || res.id === '') throw new Error(`proxy answered ${res.status} (request id ${JSON.stringify(res.id)}): ${res.body.slice(0, 300)}`)
    id = res.id
  })
  await step('Bundle: "Download repro bundle" saves a zip with request.json and no key', async () => {
    await page.goto(`${uiURL}#/request/${encodeURIComponent(id)}`, { waitUntil: 'load' })
    const button = page.getByTestId('request-bundle')
    // The row is written by the recorder's batch: the detail page retries until it is there.
    await button.waitFor({ timeout: 10_000 })
    const [download] = await Promise.all([page.waitForEvent('download', { timeout: 10_000 }), button.click()])
    if (download.suggestedFilename() !== `longhaul-bundle-${id}.zip`) throw new Error(`saved as ${download.suggestedFilename()}`)
    const files = unzip(await readFile(await download.path()))
    for (const name of ['manifest.json', 'request.json', 'settings.json', 'attempts.json', 'ledger.json']) {
      if (!files.has(name)) throw new Error(`the bundle lacks ${name}: ${[...files.keys()].join(', ')}`)
    }
    const request = JSON.parse(/** @type {Buffer} */ (files.get('request.json')).toString('utf8'))
    if (request.model !== 'e2e-model') throw new Error(`request.json is not the request: ${JSON.stringify(request).slice(0, 200)}`)
    for (const [name, data] of files) {
      for (const secret of secrets) {
        const b64 = Buffer.from(secret).toString('base64')
        if (data.includes(secret) || data.includes(b64.slice(0, -4))) throw new Error(`${name} holds a key (${secret.slice(0, 6)}…)`)
      }
    }
  })
}

/**
 * The files of a zip by name: the central directory read, each entry inflated (deflate) or
 * taken as stored. Enough for the bundles Go's archive/zip writes.
 * @param {Buffer} zip
 * @returns {Map<string, Buffer>}
 */
function unzip(zip) {
  const eocd = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]))
  if (eocd < 0) throw new Error('not a zip: no end of central directory')
  const count = zip.readUInt16LE(eocd + 10)
  let at = zip.readUInt32LE(eocd + 16)
  /** @type {Map<string, Buffer>} */
  const files = new Map()
  for (let i = 0; i < count; i++) {
    if (zip.readUInt32LE(at) !== 0x02014b50) throw new Error(`not a zip: bad central directory entry ${i}`)
    const method = zip.readUInt16LE(at + 10)
    const size = zip.readUInt32LE(at + 20)
    const nameLen = zip.readUInt16LE(at + 28)
    const skip = nameLen + zip.readUInt16LE(at + 30) + zip.readUInt16LE(at + 32)
    const local = zip.readUInt32LE(at + 42)
    const name = zip.subarray(at + 46, at + 46 + nameLen).toString('utf8')
    const start = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28)
    const data = zip.subarray(start, start + size)
    files.set(name, method === 8 ? inflateRawSync(data) : Buffer.from(data))
    at += 46 + skip
  }
  return files
}

/**
 * Spawns the backend and resolves with the UI address it prints.
 * @param {number} port
 * @param {string} dataDir
 * @param {string} home
 * @returns {Promise<string>}
 */
function startBackend(port, dataDir, home) {
  // A clean environment: nothing from the developer's own Longhaul/Anthropic setup leaks in,
  // and nothing gets written to the real home.
  /** @type {NodeJS.ProcessEnv} */
  const env = {}
  for (const [k, v] of Object.entries(process.env)) {
    if (!/^(ANTHROPIC_|LONGHAUL_|OPENAI_|XDG_)/.test(k)) env[k] = v
  }
  Object.assign(env, {
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_DATA_HOME: join(home, '.local/share'),
    XDG_CACHE_HOME: join(home, '.cache'),
    XDG_STATE_HOME: join(home, '.local/state'),
  })
  // The port is a stored setting (not --port, which would pin it for the run), so the page can
  // change it later and the proxy rebinds.
  const set = ['settings', 'set', 'proxy.port', String(port), '--data-dir', dataDir]
  console.log(`     ${bin} ${set.join(' ')}`)
  execFileSync(bin, set, { env, stdio: ['ignore', 'ignore', 'inherit'], timeout: startupMs })
  const args = ['--headless', '--data-dir', dataDir, '--ui-addr', '127.0.0.1:0']
  console.log(`     ${bin} ${args.join(' ')}`)
  // Its own process group, so whatever it starts is stopped with it.
  const proc = spawn(bin, args, { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true })
  child = proc
  childExit = new Promise((done) => proc.once('exit', (code, signal) => done({ code, signal })))
  // The 'error' event (e.g. ENOENT, EACCES) comes instead of 'exit'.
  const spawnError = new Promise((_, reject) => proc.once('error', reject))

  /** @param {string} prefix */
  const keep = (prefix) => (/** @type {string} */ line) => {
    backendOutput.push(prefix + line)
    if (backendOutput.length > 200) backendOutput.shift()
  }
  createInterface({ input: /** @type {import('node:stream').Readable} */ (proc.stderr) }).on('line', keep('[stderr] '))
  const stdout = createInterface({ input: /** @type {import('node:stream').Readable} */ (proc.stdout) })
  stdout.on('line', keep('[stdout] '))

  const address = new Promise((resolveURL) => {
    stdout.on('line', (line) => {
      const m = /Longhaul UI:\s*(https?:\/\/\S+)/.exec(line)
      if (m?.[1]) resolveURL(m[1])
    })
  })
  const early = /** @type {Promise<{code: number | null, signal: string | null}>} */ (childExit).then(({ code, signal }) => {
    throw new Error(`backend exited (code ${code}, signal ${signal}) before printing "Longhaul UI: ..."`)
  })
  return withTimeout(
    /** @type {Promise<string>} */ (Promise.race([address, early, spawnError])),
    startupMs,
    'backend to print "Longhaul UI: http://..." on stdout',
  )
}

async function cleanup() {
  for (const u of upstreams) if (u.exitCode === null && u.signalCode === null) signal(u, 'SIGTERM')
  if (context !== undefined) {
    await withTimeout(context.close(), 10_000, 'browser close').catch((err) => console.log(`     browser close: ${err.message}`))
  }
  if (child !== undefined && childExit !== undefined) {
    // Always stopped, even after a failure; whether it exits in time is itself a check.
    const proc = child
    const stillRunning = proc.exitCode === null && proc.signalCode === null
    /** @type {string | undefined} */
    let problem
    if (stillRunning) {
      signal(proc, 'SIGTERM')
      try {
        const { code, signal } = await withTimeout(childExit, exitMs, 'backend to exit after SIGTERM')
        console.log(`     backend exited after SIGTERM (code ${code}, signal ${signal})`)
      } catch (err) {
        problem = err instanceof Error ? err.message : String(err)
        signal(proc, 'SIGKILL')
        await withTimeout(childExit, 5000, 'backend to exit after SIGKILL').catch(() => {})
      }
    } else {
      problem = `backend had already exited (code ${proc.exitCode}, signal ${proc.signalCode})`
    }
    if (!failed) {
      const name = 'backend exits after SIGTERM'
      if (problem === undefined) {
        results.push({ name, status: 'pass' })
        console.log(`ok   ${name}`)
      } else {
        failed = true
        results.push({ name, status: 'fail', detail: problem })
        console.log(`FAIL ${name}\n     ${problem}`)
      }
    }
  }
  if (tmp !== '') {
    if (keepTmp || failed) console.log(`     kept ${tmp}`)
    if (!keepTmp && !failed) await rm(tmp, { recursive: true, force: true }).catch(() => {})
  }
}

let crashed = false
try {
  await main()
} catch (err) {
  crashed = true
  console.log(`FAIL test script error: ${err instanceof Error ? err.stack : String(err)}`)
} finally {
  await cleanup().catch((err) => {
    crashed = true
    console.log(`FAIL cleanup: ${err instanceof Error ? err.stack : String(err)}`)
  })
}

if (failed || crashed) {
  if (backendOutput.length > 0) console.log(`\nbackend output (last ${backendOutput.length} lines):\n${backendOutput.join('\n')}`)
  if (consoleLines.length > 0) console.log(`\nbrowser console:\n${consoleLines.join('\n')}`)
}
const passed = results.filter((r) => r.status === 'pass').length
const notPassed = results.length - passed + (crashed ? 1 : 0)
console.log(`\n${passed} passed, ${notPassed} failed`)
clearTimeout(watchdog)
process.exit(notPassed === 0 && results.length > 0 ? 0 : 1)
