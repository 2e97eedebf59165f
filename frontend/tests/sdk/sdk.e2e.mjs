// End-to-end test of Longhaul with the real client SDKs: openai (Chat Completions and
// Responses), @anthropic-ai/sdk and @google/genai against the real binary, each protocol pair
// through to a scripted upstream of the other (or the same) protocol.
//
//   LONGHAUL_BIN=/path/to/longhaul-headless SCRIPTED_UPSTREAM=/path/to/scripted-upstream npm run test:sdk
//
// It starts proxy/proxytest/cmd/scripted-upstream with -agent (one address serving Anthropic
// /v1/messages, OpenAI /v1/chat/completions and /v1/responses, Gemini /v1beta; requests that offer
// tools get a call to each tool in turn, then text), adds one account per kind with the real CLI
// (`account add --kind K --base-url URL --key - --models M`, the key on stdin), starts
// `longhaul --headless` on temporary dirs and runs each check below on its own. Every check also
// asks the scripted upstream (GET /scripted/requests) which protocol and model it really saw.
//
// Environment:
//   LONGHAUL_BIN         the backend binary (required)
//   SCRIPTED_UPSTREAM    a built scripted-upstream binary (default: `go run` it from the repo)
//   LONGHAUL_E2E_KEEP=1  keep the temporary folder
//   SDK_E2E_ONLY=regex   run only the checks whose name matches
//
// Prints "N passed, N failed" and exits non-zero on any failure. Every wait is bounded.

import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

import { cleanEnv, freePort, outputLog, signal, spawnAndWait, stopGracefully, withTimeout } from '../lib/processes.mjs'

import Anthropic from '@anthropic-ai/sdk'
import { GoogleGenAI, Type } from '@google/genai'
import OpenAI from 'openai'

const here = dirname(fileURLToPath(import.meta.url))
const repoRoot = resolve(here, '../../..')
const bin = process.env.LONGHAUL_BIN ? resolve(process.env.LONGHAUL_BIN) : ''
const keepTmp = process.env.LONGHAUL_E2E_KEEP === '1'
const only = process.env.SDK_E2E_ONLY ? new RegExp(process.env.SDK_E2E_ONLY) : undefined

const startupMs = 30_000 // a process prints its address (a cold `go run` takes longer: 120 s)
const checkMs = 20_000 // any one check
const totalMs = 120_000 // the whole run
const exitMs = 10_000 // the backend exits after SIGTERM

// The models of each pair, and the allow-list that sends each to its own account.
const CLAUDE = 'claude-sonnet-4-5'
const GPT_CHAT = 'gpt-4o-mini'
const GPT_RESPONSES = 'gpt-5'
const GEMINI_FLASH = 'gemini-2.5-flash'
const GEMINI_PRO = 'gemini-2.5-pro'
const accounts = [
  { kind: 'anthropic', path: '', models: 'claude-*' },
  { kind: 'openai', path: '/v1', models: 'gpt-4o*' },
  { kind: 'openai-responses', path: '/v1', models: 'gpt-5*' },
  { kind: 'gemini', path: '', models: 'gemini-*' },
]

// What the scripted upstream answers when it is not calling tools (see its main.go and agent.go).
const ANTHROPIC_TEXT = 'Hello from the scripted upstream! This reply streams event by event.'
const CHAT_TEXT = 'Hello from the scripted Chat upstream.'
const GEMINI_TEXT = 'Hello from the scripted Gemini upstream.'
const agentDone = (/** @type {number} */ n) => `Done: the scripted agent read ${n} tool result(s).`

// A 1×1 PNG.
const PNG_BASE64 =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=='
const PNG_DATA_URL = `data:image/png;base64,${PNG_BASE64}`

// ---------------------------------------------------------------------------------------------
// Checks: each runs on its own (a failure does not stop the others); setup steps stop the run.

/** @type {{name: string, status: 'pass' | 'fail', detail?: string}[]} */
const results = []

/**
 * @param {string} name
 * @param {() => Promise<unknown>} fn
 * @param {{setup?: boolean}} [opts]
 */
async function check(name, fn, opts = {}) {
  if (only && !opts.setup && !only.test(name)) return true
  const t0 = Date.now()
  try {
    await withTimeout(fn(), opts.setup ? startupMs * 4 : checkMs, name)
    results.push({ name, status: 'pass' })
    console.log(`ok   ${name} (${Date.now() - t0} ms)`)
    return true
  } catch (err) {
    const detail = describeError(err)
    results.push({ name, status: 'fail', detail })
    console.log(`FAIL ${name} (${Date.now() - t0} ms)\n     ${detail.replace(/\n/g, '\n     ')}`)
    return false
  }
}

/**
 * An SDK error with what the server said (status, body), or an assertion with its diff.
 * @param {unknown} err
 */
function describeError(err) {
  if (!(err instanceof Error)) return String(err)
  const e = /** @type {Error & {status?: number, error?: unknown, headers?: unknown}} */ (err)
  let text = e.message
  if (e.status !== undefined) text = `HTTP ${e.status}: ${text}`
  if (e.error !== undefined && !text.includes(JSON.stringify(e.error))) text += `\nbody: ${JSON.stringify(e.error)}`
  return text
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

/**
 * Runs the CLI, the input on stdin; returns its stdout.
 * @param {string[]} args
 * @param {NodeJS.ProcessEnv} env
 * @param {string} [input]
 */
function cli(args, env, input = '') {
  return execFileSync(bin, args, { env, input, stdio: ['pipe', 'pipe', 'pipe'], timeout: startupMs }).toString()
}

// ---------------------------------------------------------------------------------------------
// What the upstream saw

let upstreamURL = ''

/**
 * @typedef {{protocol: string, method: string, path: string, query?: string, model?: string, body?: any}} UpstreamRecord
 */

/** @returns {Promise<UpstreamRecord[]>} */
async function upstreamRecords() {
  const res = await fetch(`${upstreamURL}/scripted/requests`)
  assert.equal(res.status, 200, 'GET /scripted/requests')
  return /** @type {Promise<UpstreamRecord[]>} */ (res.json())
}

/**
 * Runs fn and returns what it returned with the generation requests the upstream received
 * meanwhile (sent: the last of them); asserts they were n, all of protocol at model.
 * @template T
 * @param {string} protocol
 * @param {string} model
 * @param {number} n
 * @param {() => Promise<T>} fn
 * @returns {Promise<{value: T, seen: UpstreamRecord[], sent: UpstreamRecord}>}
 */
async function expectUpstream(protocol, model, n, fn) {
  const before = (await upstreamRecords()).length
  const value = await fn()
  const seen = (await upstreamRecords()).slice(before).filter((r) => r.method === 'POST' && !isCountTokens(r))
  const shown = seen.map((r) => `${r.protocol} ${r.path} ${r.model}`).join('; ')
  assert.equal(seen.length, n, `the upstream got ${seen.length} requests (${shown}); want ${n} ${protocol} requests`)
  for (const r of seen) {
    assert.equal(r.protocol, protocol, `the upstream saw ${r.protocol} at ${r.path} (model ${r.model}); want ${protocol}`)
    assert.equal(r.model, model, `the upstream was asked for model ${r.model}; want ${model}`)
  }
  return { value, seen, sent: lastOf(seen, 'the upstream requests') }
}

/** @param {UpstreamRecord} r */
function isCountTokens(r) {
  return r.path.endsWith('/count_tokens') || r.path.endsWith(':countTokens')
}

/** The upstream protocol of each account kind, as GET /scripted/requests names it. */
const upstreamProtocol = { claude: 'anthropic', chat: 'openai-chat', responses: 'openai-responses', gemini: 'gemini' }

// ---------------------------------------------------------------------------------------------
// Assertions on replies

/**
 * The one element of list.
 * @template T
 * @param {readonly T[] | undefined} list
 * @param {string} what
 * @returns {T}
 */
function one(list, what) {
  assert.equal(list?.length, 1, `${what} = ${JSON.stringify(list)}; want exactly one`)
  return /** @type {T} */ (list?.[0])
}

/**
 * The last element of list, which must not be empty.
 * @template T
 * @param {readonly T[]} list
 * @param {string} what
 * @returns {T}
 */
function lastOf(list, what) {
  assert.ok(list.length > 0, `${what}: none`)
  return /** @type {T} */ (list[list.length - 1])
}

/**
 * The text blocks of a Messages reply, joined.
 * @param {import('@anthropic-ai/sdk').Anthropic.Message} m
 */
function messageText(m) {
  return m.content.map((b) => (b.type === 'text' ? b.text : '')).join('')
}

/**
 * @param {unknown} n
 * @param {string} what
 */
function positive(n, what) {
  assert.ok(typeof n === 'number' && n > 0, `${what} = ${JSON.stringify(n)}; want a number > 0`)
}

/**
 * Asserts every tool result in a Messages request answers a tool_use of the assistant message
 * before it, and returns the pairs.
 * @param {any} body
 */
function messagesToolPairs(body) {
  const pairs = []
  const msgs = /** @type {any[]} */ (body.messages)
  for (let i = 0; i < msgs.length; i++) {
    const content = Array.isArray(msgs[i].content) ? msgs[i].content : []
    for (const b of content) {
      if (b.type !== 'tool_result') continue
      const prev = i > 0 && Array.isArray(msgs[i - 1].content) ? msgs[i - 1].content : []
      const use = prev.find((/** @type {any} */ u) => u.type === 'tool_use' && u.id === b.tool_use_id)
      assert.ok(use, `tool_result ${b.tool_use_id} answers no tool_use of the message before it: ${JSON.stringify(msgs[i - 1])}`)
      pairs.push({ id: b.tool_use_id, name: use.name })
    }
  }
  return pairs
}

/**
 * The same for a Chat Completions request: every tool message answers a tool call of the
 * assistant messages before it.
 * @param {any} body
 */
function chatToolPairs(body) {
  const pairs = []
  /** @type {Map<string, string>} */
  const calls = new Map()
  for (const m of body.messages) {
    for (const c of m.tool_calls ?? []) calls.set(c.id, c.function.name)
    if (m.role === 'tool') {
      assert.ok(calls.has(m.tool_call_id), `tool message ${m.tool_call_id} answers no earlier tool call: ${JSON.stringify(body.messages)}`)
      pairs.push({ id: m.tool_call_id, name: calls.get(m.tool_call_id) })
    }
  }
  return pairs
}

/**
 * The tool pairs of whatever protocol the upstream spoke.
 * @param {UpstreamRecord} r
 */
function toolPairs(r) {
  return r.protocol === 'openai-chat' ? chatToolPairs(r.body) : messagesToolPairs(r.body)
}

// ---------------------------------------------------------------------------------------------
// The checks

/** @param {string} proxyURL */
async function openAIChatChecks(proxyURL) {
  const openai = new OpenAI({ apiKey: 'sk-e2e-client-key', baseURL: `${proxyURL}/v1`, maxRetries: 0 })
  /** @type {import('openai').OpenAI.ChatCompletionTool} */
  const weather = {
    type: 'function',
    function: {
      name: 'get_weather',
      description: 'The weather in a city.',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    },
  }

  for (const { label, model, protocol } of [
    { label: 'OpenAI upstream', model: GPT_CHAT, protocol: upstreamProtocol.chat },
    { label: 'Anthropic upstream', model: CLAUDE, protocol: upstreamProtocol.claude },
  ]) {
    await check(`openai chat.completions → ${label} (${model}): non-stream`, async () => {
      const { value: r } = await expectUpstream(protocol, model, 1, () =>
        openai.chat.completions.create({ model, max_tokens: 256, messages: [{ role: 'user', content: 'Say hello.' }] }),
      )
      assert.equal(r.object, 'chat.completion')
      const choice = one(r.choices, 'choices')
      const text = choice.message.content
      assert.ok(typeof text === 'string' && text.length > 0, `message.content = ${JSON.stringify(text)}; want text`)
      assert.equal(text, protocol === upstreamProtocol.claude ? ANTHROPIC_TEXT : CHAT_TEXT)
      assert.equal(choice.finish_reason, 'stop')
      positive(r.usage?.prompt_tokens, 'usage.prompt_tokens')
      positive(r.usage?.completion_tokens, 'usage.completion_tokens')
    })

    await check(`openai chat.completions → ${label} (${model}): stream with include_usage`, async () => {
      const { value: chunks } = await expectUpstream(protocol, model, 1, async () => {
        const stream = await openai.chat.completions.create({
          model,
          max_tokens: 256,
          stream: true,
          stream_options: { include_usage: true },
          messages: [{ role: 'user', content: 'Say hello.' }],
        })
        const all = []
        for await (const chunk of stream) all.push(chunk)
        return all
      })
      const pieces = chunks.map((c) => c.choices[0]?.delta?.content ?? '').filter((t) => t !== '')
      assert.ok(pieces.length >= 2, `${pieces.length} content deltas; want the text in several (it streams event by event)`)
      const text = pieces.join('')
      const want = protocol === upstreamProtocol.claude ? ANTHROPIC_TEXT : CHAT_TEXT
      assert.equal(text, want, 'the streamed text differs from what the upstream sent: an event was lost')
      const finishes = chunks.flatMap((c) => c.choices.filter((ch) => ch.finish_reason))
      assert.deepEqual(
        finishes.map((ch) => ch.finish_reason),
        ['stop'],
        'the finish reasons of the stream; want one "stop"',
      )
      const last = lastOf(chunks, 'chunks')
      assert.deepEqual(last.choices, [], `the last chunk's choices = ${JSON.stringify(last.choices)}; want [] (the usage chunk)`)
      positive(last.usage?.prompt_tokens, 'usage.prompt_tokens of the last chunk')
      positive(last.usage?.completion_tokens, 'usage.completion_tokens of the last chunk')
      const early = chunks.slice(0, -1).filter((c) => c.usage)
      assert.equal(early.length, 0, `usage on ${early.length} chunks before the last; want only the last (include_usage sends it once)`)
      const ids = new Set(chunks.map((c) => c.id))
      assert.equal(ids.size, 1, `chunk ids ${[...ids].join(', ')}; want one id for the whole stream`)
    })

    await check(`openai chat.completions → ${label} (${model}): tool call round trip`, async () => {
      /** @type {import('openai').OpenAI.ChatCompletionMessageParam[]} */
      const messages = [{ role: 'user', content: 'What is the weather in Paris?' }]
      const { value: first } = await expectUpstream(protocol, model, 1, () =>
        openai.chat.completions.create({ model, max_tokens: 256, messages, tools: [weather] }),
      )
      const choice = one(first.choices, 'choices')
      assert.equal(choice.finish_reason, 'tool_calls')
      const call = one(choice.message.tool_calls, 'tool_calls')
      if (call.type !== 'function') throw new Error(`tool call of type ${call.type}; want function`)
      assert.equal(call.function.name, 'get_weather')
      assert.ok(call.id, 'the tool call has no id')
      assert.deepEqual(JSON.parse(call.function.arguments), { city: 'e2e' })
      positive(first.usage?.prompt_tokens, 'usage.prompt_tokens')

      messages.push(choice.message, { role: 'tool', tool_call_id: call.id, content: 'Sunny, 21 °C.' })
      const { value: second, sent } = await expectUpstream(protocol, model, 1, () =>
        openai.chat.completions.create({ model, max_tokens: 256, messages, tools: [weather] }),
      )
      const answer = one(second.choices, 'choices')
      assert.equal(answer.finish_reason, 'stop')
      assert.equal(answer.message.content, agentDone(1))
      positive(second.usage?.completion_tokens, 'usage.completion_tokens')
      const pairs = toolPairs(sent)
      assert.deepEqual(
        pairs.map((p) => p.name),
        ['get_weather'],
        `the upstream's tool results answer ${JSON.stringify(pairs)}; want the one get_weather call`,
      )
    })

    await check(`openai chat.completions → ${label} (${model}): image as a data URL`, async () => {
      const { value: r, sent } = await expectUpstream(protocol, model, 1, () =>
        openai.chat.completions.create({
          model,
          max_tokens: 256,
          messages: [
            {
              role: 'user',
              content: [
                { type: 'text', text: 'What is in this image?' },
                { type: 'image_url', image_url: { url: PNG_DATA_URL } },
              ],
            },
          ],
        }),
      )
      const text = one(r.choices, 'choices').message.content
      assert.ok(typeof text === 'string' && text.length > 0, `message.content = ${JSON.stringify(text)}; want text`)
      const user = sent.body.messages.find((/** @type {any} */ m) => m.role === 'user')
      if (protocol === upstreamProtocol.claude) {
        const img = user.content.find((/** @type {any} */ b) => b.type === 'image')
        assert.deepEqual(
          img?.source,
          { type: 'base64', media_type: 'image/png', data: PNG_BASE64 },
          `the Anthropic upstream got ${JSON.stringify(user.content)}; want an image block with the PNG`,
        )
      } else {
        const img = user.content.find((/** @type {any} */ b) => b.type === 'image_url')
        assert.equal(img?.image_url?.url, PNG_DATA_URL, `the OpenAI upstream got ${JSON.stringify(user.content)}; want the data URL`)
      }
    })
  }
}

/** @param {string} proxyURL */
async function anthropicToOpenAIChecks(proxyURL) {
  const anthropic = new Anthropic({ apiKey: 'sk-e2e-client-key', baseURL: proxyURL, maxRetries: 0 })
  const model = GPT_CHAT
  const protocol = upstreamProtocol.chat
  await check(`anthropic messages → OpenAI upstream (${model}): non-stream`, async () => {
    const { value: r } = await expectUpstream(protocol, model, 1, () =>
      anthropic.messages.create({ model, max_tokens: 256, messages: [{ role: 'user', content: 'Say hello.' }] }),
    )
    assert.equal(r.type, 'message')
    assert.equal(r.role, 'assistant')
    const text = messageText(r)
    assert.equal(text, CHAT_TEXT, `content = ${JSON.stringify(r.content)}`)
    assert.equal(r.stop_reason, 'end_turn')
    positive(r.usage.input_tokens, 'usage.input_tokens')
    positive(r.usage.output_tokens, 'usage.output_tokens')
  })

  await check(`anthropic messages → OpenAI upstream (${model}): stream`, async () => {
    const { value } = await expectUpstream(protocol, model, 1, async () => {
      const stream = anthropic.messages.stream({ model, max_tokens: 256, messages: [{ role: 'user', content: 'Say hello.' }] })
      /** @type {string[]} */
      const events = []
      /** @type {string[]} */
      const deltas = []
      stream.on('streamEvent', (ev) => events.push(ev.type))
      stream.on('text', (t) => deltas.push(t))
      const final = await stream.finalMessage()
      return { events, deltas, final }
    })
    const { events, deltas, final } = value
    assert.equal(events[0], 'message_start', `events ${events.join(', ')}`)
    assert.equal(events[events.length - 1], 'message_stop', `events ${events.join(', ')}`)
    assert.ok(deltas.length >= 2, `${deltas.length} text deltas; want several`)
    assert.equal(deltas.join(''), CHAT_TEXT, 'the streamed text differs from what the upstream sent: an event was lost')
    assert.equal(messageText(final), deltas.join(''))
    assert.equal(final.stop_reason, 'end_turn')
    positive(final.usage.input_tokens, 'usage.input_tokens')
    positive(final.usage.output_tokens, 'usage.output_tokens')
  })

  await check(`anthropic messages → OpenAI upstream (${model}): tool use round trip`, async () => {
    /** @type {import('@anthropic-ai/sdk').Anthropic.Tool[]} */
    const tools = [
      {
        name: 'get_weather',
        description: 'The weather in a city.',
        input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      },
    ]
    /** @type {import('@anthropic-ai/sdk').Anthropic.MessageParam[]} */
    const messages = [{ role: 'user', content: 'What is the weather in Paris?' }]
    const { value: first } = await expectUpstream(protocol, model, 1, () =>
      anthropic.messages.create({ model, max_tokens: 256, messages, tools }),
    )
    assert.equal(first.stop_reason, 'tool_use')
    const use = one(
      first.content.flatMap((b) => (b.type === 'tool_use' ? [b] : [])),
      'tool_use blocks',
    )
    assert.equal(use.name, 'get_weather')
    assert.ok(use.id, 'the tool_use has no id')
    assert.deepEqual(use.input, { city: 'e2e' })

    messages.push(
      { role: 'assistant', content: first.content },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'Sunny, 21 °C.' }] },
    )
    const { value: second, sent } = await expectUpstream(protocol, model, 1, () =>
      anthropic.messages.create({ model, max_tokens: 256, messages, tools }),
    )
    assert.equal(second.stop_reason, 'end_turn')
    assert.equal(messageText(second), agentDone(1))
    positive(second.usage.output_tokens, 'usage.output_tokens')
    assert.deepEqual(
      toolPairs(sent).map((p) => p.name),
      ['get_weather'],
      'the upstream got the tool result paired with its call',
    )
  })
}

/** @param {string} proxyURL */
async function responsesChecks(proxyURL) {
  const openai = new OpenAI({ apiKey: 'sk-e2e-client-key', baseURL: `${proxyURL}/v1`, maxRetries: 0 })
  /** @type {import('openai').OpenAI.Responses.Tool[]} */
  const tools = [
    {
      type: 'function',
      name: 'lookup_order',
      description: 'Looks an order up.',
      parameters: { type: 'object', properties: { order_id: { type: 'string' } }, required: ['order_id'], additionalProperties: false },
      strict: true,
    },
    {
      type: 'function',
      name: 'refund_order',
      description: 'Refunds an order.',
      parameters: {
        type: 'object',
        properties: { order_id: { type: 'string' }, reason: { type: 'string', enum: ['damaged', 'late'] } },
        required: ['order_id', 'reason'],
        additionalProperties: false,
      },
      strict: true,
    },
  ]
  const ask = 'Order 42 arrived broken: look it up and refund it.'

  for (const { label, model, protocol } of [
    { label: 'Anthropic upstream', model: CLAUDE, protocol: upstreamProtocol.claude },
    { label: 'OpenAI Responses upstream', model: GPT_RESPONSES, protocol: upstreamProtocol.responses },
  ]) {
    for (const chained of [false, true]) {
      const how = chained ? 'previous_response_id' : 'full input'
      await check(`openai responses → ${label} (${model}): two function-call rounds, ${how}`, async () => {
        // Output items go back as input items, as the Responses docs show (typed loosely: the
        // SDK's output and input item unions differ in fields the API ignores).
        /** @type {any[]} */
        const input = [{ role: 'user', content: ask }]
        /** @type {string | undefined} */
        let previous
        /** @type {string[]} */
        const callIDs = []
        const request = () =>
          chained && previous !== undefined
            ? { model, tools, previous_response_id: previous, input: input.slice(-1) }
            : { model, tools, input }
        for (const want of ['lookup_order', 'refund_order']) {
          const { value: r } = await expectUpstream(protocol, model, 1, () => openai.responses.create(request()))
          assert.equal(r.status, 'completed')
          positive(r.usage?.input_tokens, 'usage.input_tokens')
          positive(r.usage?.output_tokens, 'usage.output_tokens')
          const call = one(
            r.output.flatMap((it) => (it.type === 'function_call' ? [it] : [])),
            'function_call items',
          )
          assert.equal(call.name, want)
          assert.ok(call.call_id, 'the function_call has no call_id')
          assert.ok(!callIDs.includes(call.call_id), `call_id ${call.call_id} repeats an earlier one`)
          assert.equal(JSON.parse(call.arguments).order_id, 'e2e', `arguments ${call.arguments}`)
          callIDs.push(call.call_id)
          if (!chained) input.push(...r.output)
          input.push({ type: 'function_call_output', call_id: call.call_id, output: JSON.stringify({ ok: true, tool: want }) })
          previous = r.id
        }
        const { value: last, sent } = await expectUpstream(protocol, model, 1, () => openai.responses.create(request()))
        assert.equal(last.status, 'completed')
        assert.equal(last.output_text, agentDone(2), `output = ${JSON.stringify(last.output)}`)
        positive(last.usage?.output_tokens, 'usage.output_tokens')
        // The upstream got the whole conversation, each output paired with its call.
        if (protocol === upstreamProtocol.claude) {
          assert.deepEqual(
            messagesToolPairs(sent.body).map((p) => p.name),
            ['lookup_order', 'refund_order'],
            `the Anthropic upstream got ${JSON.stringify(sent.body.messages)}`,
          )
        } else if (sent.body.previous_response_id !== undefined) {
          // Same protocol: the request went up as the client sent it, naming the upstream's
          // own response, whose id the client got unchanged.
          assert.ok(chained, `the upstream got previous_response_id ${sent.body.previous_response_id} the client never sent`)
          assert.equal(sent.body.previous_response_id, previous, 'the previous_response_id the upstream got')
          const items = /** @type {any[]} */ (sent.body.input)
          assert.deepEqual(
            items.map((it) => it.call_id),
            callIDs.slice(-1),
            `the Responses upstream's input ${JSON.stringify(items)}`,
          )
        } else {
          const items = /** @type {any[]} */ (sent.body.input)
          const calls = items.filter((it) => it.type === 'function_call').map((it) => it.call_id)
          const outputs = items.filter((it) => it.type === 'function_call_output').map((it) => it.call_id)
          assert.deepEqual(calls, callIDs, `the Responses upstream's function_call ids (input ${JSON.stringify(items)})`)
          assert.deepEqual(outputs, callIDs, "the Responses upstream's function_call_output ids")
        }
      })
    }
  }
}

/** @param {string} proxyURL */
async function geminiChecks(proxyURL) {
  const ai = new GoogleGenAI({
    apiKey: 'e2e-client-key',
    httpOptions: { baseUrl: proxyURL, retryOptions: { attempts: 1 } },
  })
  /** @type {import('@google/genai').Tool} */
  const weather = {
    functionDeclarations: [
      {
        name: 'get_weather',
        description: 'The weather in a city.',
        parameters: { type: Type.OBJECT, properties: { city: { type: Type.STRING } }, required: ['city'] },
      },
    ],
  }

  for (const { label, model, protocol, wantText } of [
    { label: 'Gemini upstream', model: GEMINI_FLASH, protocol: upstreamProtocol.gemini, wantText: GEMINI_TEXT },
    { label: 'Anthropic upstream', model: CLAUDE, protocol: upstreamProtocol.claude, wantText: ANTHROPIC_TEXT },
  ]) {
    await check(`genai generateContent → ${label} (${model})`, async () => {
      const { value: r } = await expectUpstream(protocol, model, 1, () => ai.models.generateContent({ model, contents: 'Say hello.' }))
      assert.equal(r.text, wantText)
      assert.equal(r.candidates?.[0]?.finishReason, 'STOP')
      positive(r.usageMetadata?.promptTokenCount, 'usageMetadata.promptTokenCount')
      positive(r.usageMetadata?.candidatesTokenCount, 'usageMetadata.candidatesTokenCount')
    })

    await check(`genai generateContentStream → ${label} (${model})`, async () => {
      const { value: chunks } = await expectUpstream(protocol, model, 1, async () => {
        const all = []
        for await (const chunk of await ai.models.generateContentStream({ model, contents: 'Say hello.' })) all.push(chunk)
        return all
      })
      const pieces = chunks.map((c) => c.text ?? '').filter((t) => t !== '')
      assert.ok(pieces.length >= 2, `${pieces.length} text chunks; want several (it streams)`)
      assert.equal(pieces.join(''), wantText, 'the streamed text differs from the reply: a chunk was lost')
      const last = lastOf(chunks, 'chunks')
      assert.equal(last.candidates?.[0]?.finishReason, 'STOP')
      positive(last.usageMetadata?.promptTokenCount, 'usageMetadata.promptTokenCount of the last chunk')
      positive(last.usageMetadata?.candidatesTokenCount, 'usageMetadata.candidatesTokenCount of the last chunk')
    })

    await check(`genai function call round trip → ${label} (${model})`, async () => {
      /** @type {import('@google/genai').Content[]} */
      const contents = [{ role: 'user', parts: [{ text: 'What is the weather in Paris?' }] }]
      const { value: first } = await expectUpstream(protocol, model, 1, () =>
        ai.models.generateContent({ model, contents, config: { tools: [weather] } }),
      )
      const call = one(first.functionCalls, 'functionCalls')
      assert.equal(call.name, 'get_weather')
      assert.deepEqual(call.args, { city: 'e2e' })
      const modelTurn = first.candidates?.[0]?.content
      assert.ok(modelTurn, 'no model content to send back')
      contents.push(modelTurn, {
        role: 'user',
        parts: [{ functionResponse: { id: call.id, name: 'get_weather', response: { output: 'Sunny, 21 °C.' } } }],
      })
      const { value: second, sent } = await expectUpstream(protocol, model, 1, () =>
        ai.models.generateContent({ model, contents, config: { tools: [weather] } }),
      )
      assert.equal(second.text, agentDone(1))
      positive(second.usageMetadata?.promptTokenCount, 'usageMetadata.promptTokenCount')
      if (protocol === upstreamProtocol.claude) {
        assert.deepEqual(
          messagesToolPairs(sent.body).map((p) => p.name),
          ['get_weather'],
        )
      } else {
        const turns = /** @type {any[]} */ (sent.body.contents)
        const back = turns[1]?.parts?.find((/** @type {any} */ p) => p.functionCall)
        assert.ok(back?.thoughtSignature, `the model turn went back without its thought signature: ${JSON.stringify(turns[1])}`)
        assert.equal(turns[2]?.parts?.[0]?.functionResponse?.name, 'get_weather')
      }
    })

    await check(`genai countTokens → ${label} (${model})`, async () => {
      const before = (await upstreamRecords()).length
      const r = await ai.models.countTokens({ model, contents: 'How many tokens is this sentence?' })
      positive(r.totalTokens, 'totalTokens')
      const seen = (await upstreamRecords()).slice(before)
      // Counting may be answered locally (an estimate) or asked of the upstream; either way it
      // must not reach another protocol's upstream.
      for (const s of seen) assert.equal(s.protocol, protocol, `countTokens reached ${s.protocol} ${s.path}`)
    })
  }
}

/** @param {string} proxyURL */
async function anthropicToGeminiChecks(proxyURL) {
  const anthropic = new Anthropic({ apiKey: 'sk-e2e-client-key', baseURL: proxyURL, maxRetries: 0 })
  const model = GEMINI_PRO
  /** @type {import('@anthropic-ai/sdk').Anthropic.Tool[]} */
  const tools = [
    {
      name: 'read_file',
      description: 'Reads a file.',
      input_schema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    },
    {
      name: 'write_file',
      description: 'Writes a file.',
      input_schema: { type: 'object', properties: { path: { type: 'string' }, content: { type: 'string' } }, required: ['path', 'content'] },
    },
  ]

  await check(`anthropic messages → Gemini upstream (${model}): tools and thinking, two rounds`, async () => {
    /** @type {import('@anthropic-ai/sdk').Anthropic.MessageParam[]} */
    const messages = [{ role: 'user', content: 'Fix the typo in README.md.' }]
    /** @type {import('@anthropic-ai/sdk').Anthropic.ThinkingConfigParam} */
    const thinking = { type: 'enabled', budget_tokens: 1024 }
    /** @returns {Promise<import('@anthropic-ai/sdk').Anthropic.Message>} */
    const send = () => anthropic.messages.create({ model, max_tokens: 4096, thinking, tools, messages })
    for (const want of ['read_file', 'write_file']) {
      const { value: r } = await expectUpstream(upstreamProtocol.gemini, model, 1, send)
      assert.equal(r.stop_reason, 'tool_use', `content ${JSON.stringify(r.content)}`)
      const use = one(
        r.content.flatMap((b) => (b.type === 'tool_use' ? [b] : [])),
        'tool_use blocks',
      )
      assert.equal(use.name, want)
      assert.ok(use.id, 'the tool_use has no id')
      const thought = r.content.find((b) => b.type === 'thinking')
      assert.ok(thought, `content = ${JSON.stringify(r.content)}; want the model's thought as a thinking block`)
      positive(r.usage.input_tokens, 'usage.input_tokens')
      positive(r.usage.output_tokens, 'usage.output_tokens')
      messages.push(
        { role: 'assistant', content: r.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: `${want} done` }] },
      )
    }
    const { value: last, sent } = await expectUpstream(upstreamProtocol.gemini, model, 1, send)
    assert.equal(last.stop_reason, 'end_turn')
    assert.equal(messageText(last), agentDone(2))
    // Both model turns went back to Gemini with the signatures it issued (it answers 400 otherwise).
    const turns = /** @type {any[]} */ (sent.body.contents)
    const calls = turns.flatMap((c) => c.parts.filter((/** @type {any} */ p) => p.functionCall))
    assert.deepEqual(
      calls.map((p) => p.functionCall.name),
      ['read_file', 'write_file'],
    )
    for (const p of calls) assert.ok(p.thoughtSignature, `functionCall ${p.functionCall.name} went back without a thoughtSignature`)
    const thinkingConfig = sent.body.generationConfig?.thinkingConfig
    assert.ok(thinkingConfig, `generationConfig = ${JSON.stringify(sent.body.generationConfig)}; want a thinkingConfig`)
  })
}

// ---------------------------------------------------------------------------------------------
// The run

let tmp = ''

const watchdog = setTimeout(() => {
  console.log(`FAIL whole run took longer than ${totalMs} ms; killing everything`)
  if (backend !== undefined) signal(backend, 'SIGKILL')
  if (upstream !== undefined) signal(upstream, 'SIGKILL')
  process.exit(1)
}, totalMs)
watchdog.unref()

for (const sig of /** @type {NodeJS.Signals[]} */ (['SIGINT', 'SIGTERM'])) {
  process.once(sig, () => {
    console.log(`\ninterrupted by ${sig}`)
    if (backend !== undefined) signal(backend, 'SIGKILL')
    if (upstream !== undefined) signal(upstream, 'SIGKILL')
    process.exit(130)
  })
}

async function main() {
  const ok = await check(
    'setup: scripted upstream, accounts added with the CLI, backend running',
    async () => {
      if (!bin) throw new Error('set LONGHAUL_BIN to the longhaul binary, e.g. LONGHAUL_BIN=../build/bin/longhaul-headless')
      if (!existsSync(bin)) throw new Error(`LONGHAUL_BIN=${bin} does not exist`)
      tmp = await mkdtemp(join(tmpdir(), 'longhaul-sdk-e2e-'))
      const dataDir = join(tmp, 'data')
      const home = join(tmp, 'home')
      await Promise.all([dataDir, home].map((d) => mkdir(d, { recursive: true })))
      const env = cleanEnv(home)

      const upPort = await freePort()
      const upAddr = `127.0.0.1:${upPort}`
      const upBin = process.env.SCRIPTED_UPSTREAM
      const [cmd, args] = upBin
        ? [resolve(upBin), ['-addr', upAddr, '-gap', '1ms', '-agent']]
        : ['go', ['run', './proxy/proxytest/cmd/scripted-upstream', '-addr', upAddr, '-gap', '1ms', '-agent']]
      const up = spawnAndWait({ label: 'upstream', cmd, args, env: { ...process.env }, cwd: repoRoot, pattern: /scripted upstream .* on (http:\/\/\S+)/, ms: upBin ? startupMs : 120_000, log })
      upstream = up.proc
      upstreamURL = (await up.ready)[1] ?? ''

      for (const a of accounts) {
        const out = cli(
          ['account', 'add', '--kind', a.kind, '--base-url', upstreamURL + a.path, '--key', '-', '--label', `e2e-${a.kind}`, '--models', a.models, '--data-dir', dataDir],
          env,
          'sk-e2e-upstream-key-0000\n',
        )
        assert.match(out, new RegExp(`added account \\d+ \\(${a.kind}, `), `account add --kind ${a.kind} printed ${JSON.stringify(out)}`)
        assert.ok(!out.includes('sk-e2e-upstream-key-0000'), 'account add printed the key')
      }
      const port = await freePort()
      cli(['settings', 'set', 'proxy.port', String(port), '--data-dir', dataDir], env)

      const b = spawnAndWait({ label: 'longhaul', cmd: bin, args: ['--headless', '--data-dir', dataDir, '--ui-addr', '127.0.0.1:0'], env, cwd: repoRoot, pattern: /Longhaul UI:\s*(\S+)/, ms: startupMs, log })
      backend = b.proc
      backendExit = b.exit
      await b.ready
      proxyURL = `http://127.0.0.1:${port}`
      const deadline = Date.now() + startupMs
      for (;;) {
        const res = await fetch(`${proxyURL}/healthz`).catch(() => undefined)
        if (res?.status === 200) break
        if (Date.now() > deadline) throw new Error(`${proxyURL}/healthz never answered 200`)
        await new Promise((r) => setTimeout(r, 100))
      }
      console.log(`     proxy ${proxyURL}, upstream ${upstreamURL}`)
    },
    { setup: true },
  )
  if (!ok) return

  await openAIChatChecks(proxyURL)
  await anthropicToOpenAIChecks(proxyURL)
  await responsesChecks(proxyURL)
  await geminiChecks(proxyURL)
  await anthropicToGeminiChecks(proxyURL)
}

let proxyURL = ''

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
console.log(`\n${passed} passed, ${failures.length + (crashed ? 1 : 0)} failed`)
if (failures.length > 0) console.log(`failed:\n${failures.map((f) => `  - ${f.name}`).join('\n')}`)
clearTimeout(watchdog)
process.exit(failures.length === 0 && !crashed && results.length > 0 ? 0 : 1)
