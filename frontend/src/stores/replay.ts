// Replays of a recorded request (issue 14: "re-send uncompacted", "replay elsewhere"): send one,
// wait for its record, and hold the original and the replay side by side.

import { defineStore } from 'pinia'
import { ref, shallowRef } from 'vue'
import { errorMessage } from '../api/errors'
import { history } from '../api/history'
import type { Exchange, ReplayOptions, ReplayResult } from '../api/models'

export interface PollOptions {
  /** Time between two reads of the detail. */
  intervalMs: number
  /** How long to wait for the record at most; then null. */
  deadlineMs: number
  /** Stops waiting early (a newer replay or comparison took over); then null. */
  cancelled?: () => boolean
}

// The recorder writes in batches (app/recorder: every ~200 ms, later under load): a replay that
// just returned is written within a second or two. Past the deadline the UI says so instead of
// waiting on.
export const defaultPoll: PollOptions = { intervalMs: 250, deadlineMs: 15_000 }

/**
 * waitRecorded reads the detail of exchange id until it is recorded finished, and returns it;
 * null when the deadline passed (or the wait was cancelled) first.
 */
export async function waitRecorded(id: string, o: PollOptions = defaultPoll): Promise<Exchange | null> {
  const deadline = Date.now() + o.deadlineMs
  for (;;) {
    if (o.cancelled?.()) return null
    try {
      const e = await history.detail(id)
      if (e.state === 'finished') return e
    } catch {
      // not written yet (404): read again until the deadline
    }
    if (Date.now() + o.intervalMs > deadline || o.cancelled?.()) return null
    await new Promise((r) => setTimeout(r, o.intervalMs))
  }
}

export const useReplayStore = defineStore('replay', () => {
  /** The request page the comparison belongs to (the original's or the replay's id). */
  const page = ref('')
  const original = shallowRef<Exchange | null>(null)
  const replay = shallowRef<Exchange | null>(null)
  /** The last replay sent from this page: its id and status, before its record is read. */
  const result = ref<ReplayResult | null>(null)
  const sending = ref(false)
  /** The replay was sent (or chosen) and its record is awaited. */
  const waiting = ref(false)
  /** The record did not show up before the deadline. */
  const timedOut = ref(false)
  const error = ref('')
  let seq = 0
  let poll: PollOptions = defaultPoll

  function reset(forPage = ''): void {
    seq++
    page.value = forPage
    original.value = replay.value = result.value = null
    sending.value = waiting.value = timedOut.value = false
    error.value = ''
  }

  async function awaitReplay(mine: number, id: string): Promise<void> {
    waiting.value = true
    timedOut.value = false
    const e = await waitRecorded(id, { ...poll, cancelled: () => mine !== seq })
    if (mine !== seq) return
    waiting.value = false
    if (e === null) timedOut.value = true
    else replay.value = e
  }

  /**
   * send re-sends from's request (app.History.Replay) from page from.id, then waits for the
   * replay's record to compare it with from. Resolves with the replay's record, or null.
   */
  async function send(from: Exchange, o: ReplayOptions): Promise<Exchange | null> {
    reset(from.id)
    const mine = seq
    original.value = from
    sending.value = true
    let r: ReplayResult
    try {
      r = await history.replay(from.id, o)
    } catch (err) {
      if (mine === seq) error.value = errorMessage(err)
      return null
    } finally {
      if (mine === seq) sending.value = false
    }
    if (mine !== seq) return null
    result.value = r
    await awaitReplay(mine, r.id)
    return mine === seq ? replay.value : null
  }

  /** compare shows a recorded replay beside its original, on page forPage (either of the two). */
  async function compare(originalID: string, replayID: string, forPage: string): Promise<void> {
    reset(forPage)
    const mine = seq
    try {
      const o = await history.detail(originalID)
      if (mine !== seq) return
      original.value = o
    } catch (err) {
      if (mine === seq) error.value = errorMessage(err)
      return
    }
    await awaitReplay(mine, replayID)
  }

  /** setPoll changes how the record is awaited (tests wait less). */
  function setPoll(o: PollOptions): void {
    poll = o
  }

  return { page, original, replay, result, sending, waiting, timedOut, error, reset, send, compare, setPoll }
})
