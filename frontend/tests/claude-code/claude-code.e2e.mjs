// End-to-end test of issue 15's "window truth": a 40-round session of the real Claude Code CLI
// through `longhaul --headless` to a scripted upstream whose context window is far smaller than
// any limit Longhaul is configured with completes with no error reaching the client, and the
// learned window appears in the session view.
//
//   bash install.sh     # the pinned CLI into ./node_modules (once; package-lock.json pins it)
//   LONGHAUL_BIN=/path/to/longhaul-headless SCRIPTED_UPSTREAM=/path/to/scripted-upstream node claude-code.e2e.mjs
//
// The CLI runs `claude -p` with its Bash tool allowed for one command, `e2e`, a script on its
// PATH printing a few KB. The scripted upstream (proxy/proxytest/cmd/scripted-upstream with
// -agent -agent-calls Bash:40) answers as a model that runs Bash 40 times, then answers in text;
// with -window it refuses, as Anthropic does ("prompt is too long: N tokens > M maximum"), any
// prompt its own tokenizer counts above WINDOW. The CLI is asked for CLAUDE_MODEL, whose [1m]
// suffix makes it send the context-1m beta, so Longhaul starts from a 1,000,000-token window;
// around round 19 the conversation passes WINDOW, the upstream refuses, and Longhaul must learn
// the window, compact to it and retry before anything reaches the CLI, and keep to it after.
//
// Environment:
//   LONGHAUL_BIN         the backend binary (required)
//   SCRIPTED_UPSTREAM    a built scripted-upstream binary (default: `go run` it from the repo)
//   CLAUDE_BIN           the claude binary (default: ./node_modules/.bin/claude)
//   LONGHAUL_E2E_KEEP=1  keep the temporary folder
//
// Prints "N passed, N failed" and exits non-zero on any failure. Every wait is bounded; the
// whole run takes about 15 s (the CLI's session about 8 s).

import assert from 'node:assert/strict'
import { execFileSync, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { delimiter, dirname, join, resolve } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'

import { cleanEnv, freePort, outputLog, signal, spawnAndWait, stopGracefully, withTimeout } from '../lib/processes.mjs'

const here = dirname(fileURLToPath(import.meta.url))
const repoRoot = resolve(here, '../../..')
const bin = process.env.LONGHAUL_BIN ? resolve(process.env.LONGHAUL_BIN) : ''
const claudeBin = resolve(process.env.CLAUDE_BIN ?? join(here, 'node_modules/.bin/claude'))
const keepTmp = process.env.LONGHAUL_E2E_KEEP === '1'

const startupMs = 30_000 // a process prints its address (a cold `go run` takes longer: 120 s)
const sessionMs = 120_000 // the CLI's whole session (measured: about 8 s)
const settleMs = 10_000 // the recorder writes the last exchanges after the CLI has its answer
const totalMs = 180_000 // the whole run
const exitMs = 10_000 // the backend exits after SIGTERM

// The model the CLI is asked for. Claude Code 2.1.332 sends anthropic-beta context-1m-2025-08-07
// for a model named with the [1m] suffix, and the model without it (checked against a header
// echo); its default model (claude-opus-5-5) is 1M-native and sends no such beta.
const CLAUDE_MODEL = 'claude-sonnet-4-5[1m]'
const SENT_MODEL = 'claude-sonnet-4-5'
const ROUNDS = 40
// The upstream's window. Measured by the upstream's tokenizer with CLAUDE_MODEL: the CLI's first
// request (system prompt and tools) is 23,847 tokens and each round of `e2e` adds 879, so the
// conversation passes 40,000 at round 19 and reaches about 59,000 by round 40 — far below
// Longhaul's 200,000 default for claude-* and the beta's 1,000,000.
const WINDOW = 40_000
const ONE_MILLION = 1_000_000
const E2E_LINES = 50 // lines the `e2e` command prints: about 3.4 KB

// ---------------------------------------------------------------------------------------------
// Checks: each runs on its own (a failure does not stop the others); setup steps stop the run.

/** @type {{name: string, status: 'pass' | 'fail', detail?: string}[]} */
const results = []

/**
 * @param {string} name
 * @param {() => Promise<unknown>} fn
 * @param {number} [ms]
 */
async function check(name, fn, ms = settleMs) {
  const t0 = Date.now()
  try {
    await withTimeout(fn(), ms, name)
    results.push({ name, status: 'pass' })
    console.log(`ok   ${name} (${Date.now() - t0} ms)`)
    return true
  } catch (err) {
    const detail = err instanceof Error ? err.message : String(err)
    results.push({ name, status: 'fail', detail })
    console.log(`FAIL ${name} (${Date.now() - t0} ms)\n     ${detail.replace(/\n/g, '\n     ')}`)
    return false
  }
}

/**
 * Asks fn until it returns something other than undefined, every 100 ms, for at most ms.
 * @template T
 * @param {() => Promise<T | undefined>} fn
 * @param {number} ms
 * @param {string} what
 * @returns {Promise<T>}
 */
async function until(fn, ms, what) {
  const deadline = Date.now() + ms
  for (;;) {
    const v = await fn()
    if (v !== undefined) return v
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms: ${what}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

// ---------------------------------------------------------------------------------------------
// Processes

const log = outputLog() // the last lines the processes printed, shown on failure
const output = log.lines

/** @type {import('node:child_process').ChildProcess | undefined} */
let backend
/** @type {Promise<{code: number | null, signal: string | null}> | undefined} */
let backendExit
/** @type {import('node:child_process').ChildProcess | undefined} */
let upstream
/** @type {import('node:child_process').ChildProcess | undefined} */
let claude

/**
 * Runs the Longhaul CLI, the input on stdin; returns its stdout.
 * @param {string[]} args
 * @param {NodeJS.ProcessEnv} env
 * @param {string} [input]
 */
function cli(args, env, input = '') {
  return execFileSync(bin, args, { env, input, stdio: ['pipe', 'pipe', 'pipe'], timeout: startupMs }).toString()
}

/**
 * Runs claude to the end, bounded by ms (then its group is killed).
 * @param {string[]} args
 * @param {NodeJS.ProcessEnv} env
 * @param {string} cwd
 * @param {number} ms
 * @returns {Promise<{code: number | null, signal: string | null, stdout: string}>}
 */
function runClaude(args, env, cwd, ms) {
  const proc = spawn(claudeBin, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true })
  claude = proc
  let stdout = ''
  proc.stdout?.on('data', (/** @type {Buffer} */ b) => (stdout += b.toString()))
  createInterface({ input: /** @type {import('node:stream').Readable} */ (proc.stderr) }).on('line', log.keep('claude stderr'))
  const done = new Promise((ok, fail) => {
    proc.once('error', fail)
    proc.once('close', (code, sig) => ok({ code, signal: sig, stdout }))
  })
  return withTimeout(/** @type {Promise<{code: number | null, signal: string | null, stdout: string}>} */ (done), ms, 'the claude session').finally(
    () => {
      if (proc.exitCode === null && proc.signalCode === null) signal(proc, 'SIGKILL')
    },
  )
}

// ---------------------------------------------------------------------------------------------
// What the backend and the upstream recorded

/**
 * @typedef {{id: string, seq: number, parentID: string, route: string, state: string, status: number,
 *   failed: boolean, errorMessage: string, sessionID: string, model: string, modelSent: string,
 *   contextLimit: number, contextLimitSource: string, tokensBefore: number, tokensAfter: number,
 *   layers: string[]}} Exchange
 * @typedef {Exchange & {attempts?: {status: number, error: string}[], clientHeaders?: Record<string, string>}} ExchangeDetail
 * @typedef {{protocol: string, method: string, path: string, model?: string, body?: any}} UpstreamRecord
 */

let proxyURL = ''
let upstreamURL = ''

/**
 * GETs a Longhaul API path and returns its JSON.
 * @param {string} path
 * @returns {Promise<any>}
 */
async function api(path) {
  const res = await fetch(proxyURL + path)
  const text = await res.text()
  assert.equal(res.status, 200, `GET ${path} = ${res.status} ${text}`)
  return JSON.parse(text)
}

/**
 * The session's exchanges the client sent (not Longhaul's own summary calls), oldest first.
 * @param {string} session
 * @returns {Promise<Exchange[]>}
 */
async function clientExchanges(session) {
  const page = /** @type {{exchanges: Exchange[]}} */ (await api(`/longhaul/v1/history?session=${encodeURIComponent(session)}&limit=1000`))
  return page.exchanges.filter((e) => e.parentID === '').sort((a, b) => a.seq - b.seq)
}

/** @returns {Promise<UpstreamRecord[]>} */
async function upstreamRecords() {
  const res = await fetch(`${upstreamURL}/scripted/requests`)
  assert.equal(res.status, 200, 'GET /scripted/requests')
  return /** @type {Promise<UpstreamRecord[]>} */ (res.json())
}

// ---------------------------------------------------------------------------------------------
// The run

let tmp = ''

const watchdog = setTimeout(() => {
  console.log(`FAIL whole run took longer than ${totalMs} ms; killing everything`)
  for (const p of [claude, backend, upstream]) if (p !== undefined) signal(p, 'SIGKILL')
  process.exit(1)
}, totalMs)
watchdog.unref()

for (const sig of /** @type {NodeJS.Signals[]} */ (['SIGINT', 'SIGTERM'])) {
  process.once(sig, () => {
    console.log(`\ninterrupted by ${sig}`)
    for (const p of [claude, backend, upstream]) if (p !== undefined) signal(p, 'SIGKILL')
    process.exit(130)
  })
}

async function main() {
  /** @type {NodeJS.ProcessEnv} */
  let claudeEnv = {}
  let workDir = ''
  const ok = await check(
    'setup: scripted upstream with a small window, one account, backend running, an `e2e` command',
    async () => {
      if (!bin) throw new Error('set LONGHAUL_BIN to the longhaul binary, e.g. LONGHAUL_BIN=../../../build/bin/longhaul-headless')
      if (!existsSync(bin)) throw new Error(`LONGHAUL_BIN=${bin} does not exist`)
      if (!existsSync(claudeBin)) throw new Error(`${claudeBin} does not exist: run \`bash ${join(here, 'install.sh')}\``)
      tmp = await mkdtemp(join(tmpdir(), 'longhaul-claude-code-e2e-'))
      const dataDir = join(tmp, 'data')
      const home = join(tmp, 'home') // Longhaul's
      const claudeHome = join(tmp, 'claude-home') // the CLI's (~/.claude, ~/.claude.json)
      const binDir = join(tmp, 'bin')
      workDir = join(tmp, 'work') // the CLI's working directory: no CLAUDE.md, no git repository
      await Promise.all([dataDir, home, claudeHome, binDir, workDir].map((d) => mkdir(d, { recursive: true })))
      const env = cleanEnv(home)

      // The command the agent's Bash calls run (the agent fills Bash's one required argument,
      // command, with "e2e").
      const lines = Array.from({ length: E2E_LINES }, (_, i) => `e2e line ${i}: the quick brown fox jumps over the lazy dog 0123456789`)
      await writeFile(join(binDir, 'e2e'), `#!/bin/sh\ncat <<'OUT'\n${lines.join('\n')}\nOUT\n`)
      await chmod(join(binDir, 'e2e'), 0o755)

      const upPort = await freePort()
      const upAddr = `127.0.0.1:${upPort}`
      const upArgs = ['-addr', upAddr, '-gap', '1ms', '-agent', '-agent-calls', `Bash:${ROUNDS}`, '-count-tokens', '-window', String(WINDOW)]
      const upBin = process.env.SCRIPTED_UPSTREAM
      const [cmd, args] = upBin ? [resolve(upBin), upArgs] : ['go', ['run', './proxy/proxytest/cmd/scripted-upstream', ...upArgs]]
      const up = spawnAndWait({ label: 'upstream', cmd, args, env: { ...process.env }, cwd: repoRoot, pattern: /scripted upstream .* on (http:\/\/\S+)/, ms: upBin ? startupMs : 120_000, log })
      upstream = up.proc
      upstreamURL = (await up.ready)[1] ?? ''

      const out = cli(
        ['account', 'add', '--base-url', upstreamURL, '--key', '-', '--label', 'e2e-anthropic', '--models', 'claude-*', '--data-dir', dataDir],
        env,
        'sk-e2e-upstream-key-0000\n',
      )
      assert.match(out, /added account \d+ \(anthropic, /, `account add printed ${JSON.stringify(out)}`)
      const port = await freePort()
      cli(['settings', 'set', 'proxy.port', String(port), '--data-dir', dataDir], env)

      const b = spawnAndWait({ label: 'longhaul', cmd: bin, args: ['--headless', '--data-dir', dataDir, '--ui-addr', '127.0.0.1:0'], env, cwd: repoRoot, pattern: /Longhaul UI:\s*(\S+)/, ms: startupMs, log })
      backend = b.proc
      backendExit = b.exit
      await b.ready
      proxyURL = `http://127.0.0.1:${port}`
      await until(async () => ((await fetch(`${proxyURL}/healthz`).catch(() => undefined))?.status === 200 ? true : undefined), startupMs, `${proxyURL}/healthz to answer 200`)

      claudeEnv = Object.assign(cleanEnv(claudeHome), {
        PATH: binDir + delimiter + (process.env.PATH ?? ''),
        ANTHROPIC_BASE_URL: proxyURL,
        ANTHROPIC_API_KEY: 'sk-ant-api03-e2e-client-key', // Longhaul has no local key: any is taken
        DISABLE_TELEMETRY: '1',
        DISABLE_AUTOUPDATER: '1',
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      })
      console.log(`     proxy ${proxyURL}, upstream ${upstreamURL}, claude ${claudeBin}`)
    },
    startupMs * 4,
  )
  if (!ok) return

  /** @type {any} */
  let reply
  const ran = await check(
    `claude -p: ${ROUNDS} rounds of Bash(e2e) through Longhaul end in a successful answer`,
    async () => {
      const args = ['-p', 'Run the e2e command until the tool loop ends, then report.', '--output-format', 'json', '--model', CLAUDE_MODEL,
        '--max-turns', String(ROUNDS + 5), '--allowedTools', 'Bash(e2e)']
      const t0 = Date.now()
      const run = await runClaude(args, claudeEnv, workDir, sessionMs)
      console.log(`     the CLI's session took ${Date.now() - t0} ms`)
      try {
        reply = JSON.parse(run.stdout)
      } catch {
        throw new Error(`claude exited (code ${run.code}, signal ${run.signal}) printing no JSON: ${run.stdout.slice(0, 2000)}`)
      }
      const summary = JSON.stringify({ ...reply, modelUsage: undefined, usage: undefined }).slice(0, 2000)
      assert.equal(run.code, 0, `claude exited with code ${run.code}: ${summary}`)
      assert.equal(reply.is_error, false, `is_error: ${summary}`)
      assert.equal(reply.subtype, 'success', `subtype: ${summary}`)
      assert.ok(reply.num_turns >= ROUNDS + 1, `num_turns = ${reply.num_turns}; want ${ROUNDS} tool rounds and the answer (${summary})`)
      assert.match(reply.result, /^Done: the scripted agent read \d+ tool result\(s\)\.$/, 'the answer after the last round')
      assert.deepEqual(reply.permission_denials, [], 'the CLI denied a Bash call')
    },
    sessionMs + settleMs,
  )
  if (!ran) return
  const session = String(reply.session_id)

  await check(`the upstream ran all ${ROUNDS} rounds, each a real Bash run of e2e`, async () => {
    const sent = (await upstreamRecords()).filter((r) => r.method === 'POST' && r.path === '/v1/messages' && r.model === SENT_MODEL)
    const last = sent.at(-1)?.body
    assert.ok(last, `the upstream got no ${SENT_MODEL} request`)
    const results = /** @type {any[]} */ (last.messages).flatMap((m) =>
      m.role === 'user' && Array.isArray(m.content) ? m.content.filter((/** @type {any} */ b) => b.type === 'tool_result') : [],
    )
    const final = results.at(-1)
    // The agent writes its round into each call id (scripted-upstream agent.go); the request
    // that got the answer carries the last round's result even after compaction.
    assert.match(String(final?.tool_use_id), new RegExp(`_round${ROUNDS}$`), `the last request's last tool result ${JSON.stringify(final)?.slice(0, 300)}`)
    const text = JSON.stringify(final.content)
    assert.ok(text.includes(`e2e line ${E2E_LINES - 1}:`), `the last tool result is not e2e's output: ${text.slice(0, 300)}`)
  })

  // The recorder writes exchanges in batches: wait until every one the CLI made is finished.
  /** @type {ExchangeDetail[]} */
  let exchanges = []
  const recorded = await check('the history holds every client exchange of the session, finished', async () => {
    const list = await until(
      async () => {
        const got = await clientExchanges(session)
        return got.length >= reply.num_turns && got.every((e) => e.state === 'finished') ? got : undefined
      },
      settleMs,
      `${reply.num_turns} finished exchanges of session ${session} in the history`,
    )
    exchanges = await Promise.all(list.map((e) => /** @type {Promise<ExchangeDetail>} */ (api(`/longhaul/v1/history/${e.id}`))))
  })
  if (!recorded) return

  await check('the CLI sent the context-1m beta, so Longhaul first took the window as 1,000,000 tokens', async () => {
    const first = exchanges[0]
    assert.ok(first, 'no exchange')
    const betas = first.clientHeaders?.['anthropic-beta'] ?? ''
    assert.match(betas, /\bcontext-1m-/, `anthropic-beta of the first request = ${JSON.stringify(betas)}`)
    assert.equal(first.modelSent, SENT_MODEL)
    assert.deepEqual([first.contextLimit, first.contextLimitSource], [ONE_MILLION, 'beta'], 'the first request\'s window and why')
  })

  await check('no error reached the client: every exchange of the session answered 200', async () => {
    const bad = exchanges.filter((e) => e.status !== 200 || e.failed)
    assert.deepEqual(
      bad.map((e) => `#${e.seq} ${e.status} ${e.errorMessage}`),
      [],
      'exchanges the CLI got an error for',
    )
  })

  await check(`the upstream refused once as too long; Longhaul learned ${WINDOW}, compacted and retried`, async () => {
    const refused = exchanges.filter((e) => (e.attempts ?? []).some((a) => a.status !== 200))
    const shown = refused.map((e) => `#${e.seq} ${JSON.stringify(e.attempts)}`).join('\n')
    // Once: after learning, no request over the window went upstream again.
    assert.equal(refused.length, 1, `exchanges with a failed attempt:\n${shown}`)
    const e = /** @type {ExchangeDetail} */ (refused[0])
    const attempts = e.attempts ?? []
    assert.deepEqual(
      attempts.map((a) => a.status),
      [400, 200],
      `attempts of #${e.seq}`,
    )
    assert.match(attempts[0]?.error ?? '', new RegExp(`prompt is too long: \\d+ tokens > ${WINDOW} maximum`))
    assert.deepEqual([e.contextLimit, e.contextLimitSource], [WINDOW, 'learned'], `the window #${e.seq} was compacted for`)
    assert.ok(e.tokensAfter < WINDOW && e.tokensAfter < e.tokensBefore, `#${e.seq} went from ${e.tokensBefore} to ${e.tokensAfter} tokens`)
    const later = exchanges.filter((x) => x.seq > e.seq)
    assert.ok(later.length > 0, 'no request after the refusal: the session ended there')
    for (const x of later) {
      assert.deepEqual([x.contextLimit, x.contextLimitSource], [WINDOW, 'learned'], `the window of #${x.seq}, after the learning`)
    }
  })

  await check('the session view shows the learned window', async () => {
    const p = await api(`/longhaul/v1/sessions/${encodeURIComponent(session)}/pressure`)
    assert.equal(p.session, session)
    assert.deepEqual([p.limit, p.limitSource], [WINDOW, 'learned'], `pressure ${JSON.stringify(p)}`)
    assert.ok(p.forwardedTokens > 0 && p.forwardedTokens < WINDOW, `forwardedTokens = ${p.forwardedTokens}; want under ${WINDOW}`)
    assert.ok(p.tokens > WINDOW, `tokens (as the client sent them) = ${p.tokens}; want over the window it was compacted from`)
  })
}

async function cleanup() {
  if (upstream !== undefined && upstream.exitCode === null && upstream.signalCode === null) signal(upstream, 'SIGTERM')
  if (backend !== undefined && backendExit !== undefined) {
    const problem = await stopGracefully(backend, backendExit, exitMs)
    const name = 'backend exits after SIGTERM'
    results.push(problem === undefined ? { name, status: 'pass' } : { name, status: 'fail', detail: problem })
    console.log(problem === undefined ? `ok   ${name}` : `FAIL ${name}\n     ${problem}`)
  }
  const failed = results.some((r) => r.status === 'fail')
  if (tmp !== '') {
    if (keepTmp || failed) console.log(`     kept ${tmp}`)
    else await rm(tmp, { recursive: true, force: true }).catch(() => {})
  }
}

const started = Date.now()
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

const failures = results.filter((r) => r.status === 'fail')
if ((failures.length > 0 || crashed) && output.length > 0) {
  console.log(`\nprocess output (last ${output.length} lines):\n${output.join('\n')}`)
}
const passed = results.length - failures.length
console.log(`\n${passed} passed, ${failures.length + (crashed ? 1 : 0)} failed (${Date.now() - started} ms)`)
if (failures.length > 0) console.log(`failed:\n${failures.map((f) => `  - ${f.name}`).join('\n')}`)
clearTimeout(watchdog)
process.exit(failures.length === 0 && !crashed && results.length > 0 ? 0 : 1)
