// What the end-to-end runners (tests/e2e, tests/sdk, tests/claude-code) share: bounded waits,
// free ports, and child processes started detached in their own group, their output kept for
// the failure report. Node built-ins only, so a runner with its own package.json can import it.

import { spawn } from 'node:child_process'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { createInterface } from 'node:readline'

/**
 * Rejects when promise has not settled after ms.
 * @template T
 * @param {Promise<T>} promise
 * @param {number} ms
 * @param {string} what
 * @returns {Promise<T>}
 */
export function withTimeout(promise, ms, what) {
  /** @type {NodeJS.Timeout | undefined} */
  let timer
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms)
  })
  return /** @type {Promise<T>} */ (Promise.race([promise, timeout])).finally(() => clearTimeout(timer))
}

/**
 * Signals a process's whole group (each is started detached), or just the process.
 * @param {import('node:child_process').ChildProcess} proc
 * @param {NodeJS.Signals} sig
 */
export function signal(proc, sig) {
  try {
    if (proc.pid !== undefined) process.kill(-proc.pid, sig)
  } catch {
    proc.kill(sig)
  }
}

/** A TCP port nobody listens on right now. */
export function freePort() {
  return /** @type {Promise<number>} */ (
    new Promise((done, fail) => {
      const srv = createServer()
      srv.unref()
      srv.on('error', fail)
      srv.listen(0, '127.0.0.1', () => {
        const addr = srv.address()
        const port = typeof addr === 'object' && addr !== null ? addr.port : 0
        srv.close(() => done(port))
      })
    })
  )
}

/**
 * The last lines the runner's processes printed, for its failure report.
 * @param {number} [max]
 */
export function outputLog(max = 200) {
  /** @type {string[]} */
  const lines = []
  return {
    lines,
    /** @param {string} label */
    keep: (label) => (/** @type {string} */ line) => {
      lines.push(`[${label}] ${line}`)
      if (lines.length > max) lines.shift()
    },
  }
}

/**
 * Spawns cmd detached in cwd, keeps its output in log, and resolves ready with the first match
 * of pattern on its stdout (rejecting if it exits, fails to start or takes longer than ms).
 * @param {{label: string, cmd: string, args: string[], env: NodeJS.ProcessEnv, cwd: string,
 *   pattern: RegExp, ms: number, log: ReturnType<typeof outputLog>}} o
 */
export function spawnAndWait({ label, cmd, args, env, cwd, pattern, ms, log }) {
  const proc = spawn(cmd, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true })
  createInterface({ input: /** @type {import('node:stream').Readable} */ (proc.stderr) }).on('line', log.keep(`${label} stderr`))
  const stdout = createInterface({ input: /** @type {import('node:stream').Readable} */ (proc.stdout) })
  stdout.on('line', log.keep(label))
  const exit = new Promise((done) => proc.once('exit', (code, sig) => done({ code, signal: sig })))
  const found = new Promise((done) => {
    stdout.on('line', (line) => {
      const m = pattern.exec(line)
      if (m) done(m)
    })
  })
  const early = exit.then(({ code, signal: sig }) => {
    throw new Error(`${label} exited (code ${code}, signal ${sig}) before printing ${pattern}`)
  })
  const spawnError = new Promise((_, fail) => proc.once('error', fail))
  const ready = withTimeout(
    /** @type {Promise<RegExpExecArray>} */ (Promise.race([found, early, spawnError])),
    ms,
    `${label} to print ${pattern}`,
  )
  return { proc, exit: /** @type {Promise<{code: number | null, signal: string | null}>} */ (exit), ready }
}

/**
 * The environment without the developer's own Longhaul, Anthropic, Claude Code, OpenAI or Gemini
 * setup, writing nothing to the real home.
 * @param {string} home
 */
export function cleanEnv(home) {
  /** @type {NodeJS.ProcessEnv} */
  const env = {}
  for (const [k, v] of Object.entries(process.env)) {
    if (!/^(ANTHROPIC_|CLAUDE_|LONGHAUL_|OPENAI_|GEMINI_|GOOGLE_|XDG_)/.test(k)) env[k] = v
  }
  return Object.assign(env, {
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_DATA_HOME: join(home, '.local/share'),
    XDG_CACHE_HOME: join(home, '.cache'),
    XDG_STATE_HOME: join(home, '.local/state'),
  })
}

/**
 * Stops proc with SIGTERM and waits up to ms for it to exit (then kills its group): what went
 * wrong, or undefined when it exited as asked. A process that had already exited is a problem
 * too: it was meant to run until told to stop.
 * @param {import('node:child_process').ChildProcess} proc
 * @param {Promise<{code: number | null, signal: string | null}>} exit
 * @param {number} ms
 * @returns {Promise<string | undefined>}
 */
export async function stopGracefully(proc, exit, ms) {
  if (proc.exitCode !== null || proc.signalCode !== null) {
    return `it had exited early (code ${proc.exitCode}, signal ${proc.signalCode})`
  }
  signal(proc, 'SIGTERM')
  try {
    await withTimeout(exit, ms, 'exit after SIGTERM')
    return undefined
  } catch (err) {
    signal(proc, 'SIGKILL')
    return err instanceof Error ? err.message : String(err)
  }
}
