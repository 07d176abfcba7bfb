/**
 * Patterns stored by an older version that RE2 cannot run as the browser does
 * (back-references, lookaround...) are still enforced, by the browser's own
 * engine: JavaScript's backtracking RegExp, which can take seconds on a
 * hostile value. So it runs in a worker thread, never on the event loop, one
 * match at a time (the checks of old patterns take at most one core), and an
 * answer not checked within LEGACY_MATCH_DEADLINE_MS is refused.
 *
 * The worker is made from a Blob URL of the source below, which needs no file
 * beside the executable. Terminating a worker stops it only once the RegExp
 * returns (JavaScriptCore gives up on a match after about half a second of
 * backtracking), so a new one starts only after the old one has exited.
 */

/** How long an answer may wait for, and take in, its check: an honest pattern takes well under a millisecond. */
const LEGACY_MATCH_DEADLINE_MS = 250
/** Checks waiting beyond this many are refused at once: the queue stays small whatever clients send. */
const MAX_WAITING = 1000
/** Compiled patterns the worker keeps. */
const WORKER_KEEPS = 100

const WORKER_SOURCE = `
const compiled = new Map()
self.onmessage = ({ data: { id, pattern, value } }) => {
  let regex = compiled.get(pattern)
  if (regex === undefined) {
    try {
      regex = new RegExp('^(?:' + pattern + ')$', 'v')
    } catch {
      regex = null
    }
    if (compiled.size >= ${WORKER_KEEPS}) compiled.delete(compiled.keys().next().value)
    compiled.set(pattern, regex)
  }
  self.postMessage({ id, matched: regex !== null && regex.test(value) })
}
`

/** `timeout`: the value could not be checked in time (it is refused). */
export type LegacyVerdict = 'match' | 'mismatch' | 'timeout'

interface Check {
  id: number
  pattern: string
  value: string
  settle(verdict: LegacyVerdict): void
}

let workerUrl: string | undefined
let worker: Worker | undefined
/** A terminated worker that has not exited yet: no other starts until it has. */
let exiting = false
let running: Check | undefined
const waiting: Check[] = []
let nextId = 0

/** Whether the whole `value` matches `pattern` as the browser reads it (v flag). */
export function matchLegacyPattern(pattern: string, value: string): Promise<LegacyVerdict> {
  if (waiting.length >= MAX_WAITING) return Promise.resolve('timeout')
  return new Promise((resolve) => {
    const check: Check = {
      id: nextId++,
      pattern,
      value,
      settle(verdict) {
        clearTimeout(deadline)
        resolve(verdict)
      },
    }
    const deadline = setTimeout(() => {
      if (running === check) {
        running = undefined
        stopWorker()
      } else {
        waiting.splice(waiting.indexOf(check), 1)
      }
      resolve('timeout')
    }, LEGACY_MATCH_DEADLINE_MS)
    waiting.push(check)
    runNext()
  })
}

function runNext() {
  if (running !== undefined || exiting || waiting.length === 0) return
  worker ??= startWorker()
  running = waiting.shift()!
  worker.postMessage({ id: running.id, pattern: running.pattern, value: running.value })
}

function startWorker(): Worker {
  workerUrl ??= URL.createObjectURL(new Blob([WORKER_SOURCE], { type: 'application/javascript' }))
  const started = new Worker(workerUrl)
  // Checks waiting for it must not keep a stopping server alive.
  started.unref()
  started.addEventListener('message', (event: MessageEvent<{ id: number; matched: boolean }>) => {
    if (started !== worker || running?.id !== event.data.id) return
    const done = running
    running = undefined
    done.settle(event.data.matched ? 'match' : 'mismatch')
    runNext()
  })
  started.addEventListener('close', () => {
    if (started === worker) {
      // It ended on its own (it should not): what it was checking cannot be answered.
      worker = undefined
      const lost = running
      running = undefined
      lost?.settle('timeout')
    } else {
      exiting = false
    }
    runNext()
  })
  return started
}

function stopWorker() {
  const stopping = worker
  worker = undefined
  if (stopping === undefined) return
  exiting = true
  stopping.terminate()
}
