// End-to-end test of the real UI against the real backend, in headless Chromium.
//
//   LONGHAUL_BIN=/path/to/longhaul npm run test:e2e
//
// It starts `$LONGHAUL_BIN --headless --data-dir <tmp> --port <free port> --ui-addr 127.0.0.1:0`,
// reads "Longhaul UI: http://127.0.0.1:NNNNN/" from its stdout, opens that page and switches the
// proxy off and on, checking the page, the live events and the proxy's /healthz each time.
//
// Environment:
//   LONGHAUL_BIN        the backend binary (required)
//   CHROMIUM            the browser (default /usr/bin/chromium)
//   LONGHAUL_E2E_KEEP=1 keep the temporary folder (data dir, HOME, browser profile)
//
// Writes tests/e2e/out/ui.png (and ui-dark.png; failure.png when a step fails).
// Prints "N passed, N failed" and exits non-zero on any failure. Every wait is bounded.

import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import { get as httpGet } from 'node:http'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { chromium } from 'playwright-core'

const here = dirname(fileURLToPath(import.meta.url))
const outDir = join(here, 'out')
const chromiumPath = process.env.CHROMIUM || '/usr/bin/chromium'
const bin = process.env.LONGHAUL_BIN ? resolve(process.env.LONGHAUL_BIN) : ''
const keepTmp = process.env.LONGHAUL_E2E_KEEP === '1'

const startupMs = 30_000 // backend prints its UI address
const stepMs = 20_000 // any one step
const settleMs = 10_000 // listener opens/closes after the UI says so
const totalMs = 180_000 // the whole run
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
 * @template T
 * @param {Promise<T>} promise
 * @param {number} ms
 * @param {string} what
 * @returns {Promise<T>}
 */
function withTimeout(promise, ms, what) {
  /** @type {NodeJS.Timeout | undefined} */
  let timer
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms)
  })
  return /** @type {Promise<T>} */ (Promise.race([promise, timeout])).finally(() => clearTimeout(timer))
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
 * Signals the backend's whole process group (it is started detached), or just the process if
 * that fails.
 * @param {import('node:child_process').ChildProcess} proc
 * @param {NodeJS.Signals} sig
 */
function signal(proc, sig) {
  try {
    if (proc.pid !== undefined) process.kill(-proc.pid, sig)
  } catch {
    proc.kill(sig)
  }
}

/** A TCP port nobody listens on right now. */
function freePort() {
  return new Promise((resolvePort, reject) => {
    const srv = createServer()
    srv.unref()
    srv.on('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address()
      const port = typeof addr === 'object' && addr !== null ? addr.port : 0
      srv.close(() => resolvePort(port))
    })
  })
}

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
/** @type {Promise<{code: number | null, signal: string | null}> | undefined} */
let childExit
/** @type {import('playwright-core').BrowserContext | undefined} */
let context
let tmp = ''

const watchdog = setTimeout(() => {
  console.log(`FAIL whole run took longer than ${totalMs} ms; killing everything`)
  if (child !== undefined) signal(child, 'SIGKILL')
  process.exit(1)
}, totalMs)
watchdog.unref()

// Interrupted (Ctrl+C): do not leave the backend running.
for (const sig of /** @type {NodeJS.Signals[]} */ (['SIGINT', 'SIGTERM'])) {
  process.once(sig, () => {
    console.log(`\ninterrupted by ${sig}`)
    if (child !== undefined) signal(child, 'SIGKILL')
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

    await step('screenshots saved', async () => {
      await p().screenshot({ path: join(outDir, 'ui.png'), fullPage: true, timeout: 10_000 })
      await p().emulateMedia({ colorScheme: 'dark' })
      await p().screenshot({ path: join(outDir, 'ui-dark.png'), fullPage: true, timeout: 10_000 })
      await p().emulateMedia({ colorScheme: 'light' })
      console.log(`     ${join(outDir, 'ui.png')}`)
    })
    await step('no uncaught errors in the page', async () => {
      if (pageErrors.length > 0) throw new Error(pageErrors.join('\n'))
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
  const args = ['--headless', '--data-dir', dataDir, '--port', String(port), '--ui-addr', '127.0.0.1:0']
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
