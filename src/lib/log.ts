import { fstatSync, statSync, writeSync } from 'node:fs'

/**
 * Structured logs: one JSON object per line. Callers pass only what is safe to
 * keep: never a key, a webhook secret, a form's context or submitted data.
 */

type LogFields = Record<string, string | number | boolean | null | undefined>
type LogLevel = 'info' | 'warn' | 'error'
/** Where log lines go: stdout (the default), or a test's list. */
export type LogSink = (line: string, level: LogLevel) => void

export interface Logger {
  info(msg: string, fields?: LogFields): void
  warn(msg: string, fields?: LogFields): void
  error(msg: string, fields?: LogFields): void
}

/** Characters waiting for stdout past which info lines (requests, webhook attempts) are dropped. */
const INFO_BACKLOG = 256 * 1024
/** Characters waiting for stdout past which every line is dropped: what a stdout nobody reads can cost. */
const BACKLOG = 1024 * 1024
/** Characters given to stdout in one write. */
const CHUNK = 64 * 1024
/** How soon a full stdout is tried again (nothing tells us when it empties). */
const RETRY_MS = 25
/** How often a write that must happen now (the first start's key) tries a full stdout again. */
const WAIT_STEP_MS = 10

/** What a write says when the reader has closed stdout, or there is none. */
const CLOSED = new Set(['EPIPE', 'EBADF'])

/** Stdout could not take what had to be written now. */
export class StdoutUnwritable extends Error {}

/**
 * Stdout for a server: lines are queued and written without ever blocking
 * the event loop, at most one write per turn of the event loop (under load
 * one write carries many requests' lines). What the kernel does not take
 * waits, bounded: when stdout cannot keep up (a pipe nobody reads), info
 * lines are dropped first, then every line, and once stdout takes lines
 * again a warning says how many were dropped. A stdout that is gone (the
 * reader closed it) drops everything. At exit, whatever stdout takes at once
 * is written; the exit never waits and never throws.
 */
export interface StdoutWriter {
  /** Queues one line (without its newline); `level` decides what is dropped first. */
  line(text: string, level: LogLevel): void
  /** Queues a line for people (a start-up message): kept like a warning. */
  print(text: string): void
  /**
   * Writes what is queued and then `text` before returning, waiting up to
   * `timeoutMs` for stdout to take it all; throws StdoutUnwritable when it
   * cannot (stdout closed, discarded, or not read in time), and then none of
   * `text` is left to be written later.
   */
  writeNow(text: string, timeoutMs: number): void
}

let processStdout: StdoutWriter | undefined

/** The process's stdout writer (one, since all share the one descriptor). */
export function stdoutWriter(): StdoutWriter {
  return (processStdout ??= createStdoutWriter(1))
}

function createStdoutWriter(fd: number): StdoutWriter {
  // Bun makes a pipe or socket on stdout non-blocking once process.stdout exists: a write to a
  // full one then fails with EAGAIN instead of stalling the server (a terminal stays blocking).
  // Only writeSync writes here: process.stdout.write buffers without bound when stdout is
  // full, and console.log then waits for it forever.
  void process.stdout
  let queued: string[] = []
  let queuedChars = 0
  /** The part of the last chunk the kernel has not taken yet: it goes before anything else. */
  let unwritten: Buffer | undefined
  let dropped = 0
  let gone = false
  let flushing: 'no' | 'next turn' | 'after a pause' = 'no'

  const backlog = () => queuedChars + (unwritten?.length ?? 0)

  function enqueue(text: string, limit: number): boolean {
    if (gone) return false
    if (backlog() + text.length + 1 > limit) {
      dropped++
      return false
    }
    queued.push(text)
    queuedChars += text.length + 1
    if (flushing === 'no') {
      flushing = 'next turn'
      setImmediate(flush)
    }
    return true
  }

  function flush() {
    flushing = 'no'
    if (drain() === 'full') {
      flushing = 'after a pause'
      setTimeout(flush, RETRY_MS).unref()
    }
  }

  /** Gives stdout everything it takes now. */
  function drain(): 'done' | 'full' | 'gone' {
    if (gone) return 'gone'
    for (;;) {
      if (unwritten === undefined) {
        if (queued.length === 0) return 'done'
        unwritten = Buffer.from(nextChunk())
      }
      let written: number
      try {
        written = writeSync(fd, unwritten)
      } catch (error) {
        // Full (EAGAIN), or a disk full for now: try again later. Closed: nobody will ever read it.
        if (!CLOSED.has((error as { code?: string }).code ?? '')) return 'full'
        gone = true
        queued = []
        queuedChars = 0
        unwritten = undefined
        return 'gone'
      }
      unwritten = written < unwritten.length ? unwritten.subarray(written) : undefined
      if (written > 0 && dropped > 0) reportDropped()
    }
  }

  function nextChunk(): string {
    let count = 0
    let chars = 0
    while (count < queued.length && (count === 0 || chars + queued[count]!.length < CHUNK))
      chars += queued[count++]!.length + 1
    const lines = queued.splice(0, count)
    queuedChars -= chars
    return `${lines.join('\n')}\n`
  }

  /** Stdout takes lines again: say how many it missed (once there is room to say it). */
  function reportDropped() {
    const count = dropped
    dropped = 0
    if (!enqueue(logLine('warn', 'log lines dropped: stdout was not taking them', { dropped: count }), BACKLOG))
      dropped = count
  }

  process.on('exit', () => {
    try {
      drain()
    } catch {
      // Exiting: a log line that cannot be written is not worth a stack trace or another exit code.
    }
  })

  return {
    line(text, level) {
      enqueue(text, level === 'info' ? INFO_BACKLOG : BACKLOG)
    },
    print(text) {
      enqueue(text, BACKLOG)
    },
    writeNow(text, timeoutMs) {
      if (isDiscarded(fd)) throw new StdoutUnwritable('stdout is /dev/null (or was closed), so nobody could read it')
      const queuedBefore = queued.length
      const line = text.endsWith('\n') ? text.slice(0, -1) : text
      queued.push(line)
      queuedChars += line.length + 1
      const deadline = performance.now() + timeoutMs
      for (;;) {
        const outcome = drain()
        if (outcome === 'done') return
        if (outcome === 'gone') throw new StdoutUnwritable('stdout is closed')
        if (performance.now() >= deadline) {
          // Not written in time: it must not come out later either.
          if (queued.length > queuedBefore) {
            queued.pop()
            queuedChars -= line.length + 1
          } else {
            unwritten = undefined
          }
          throw new StdoutUnwritable(`nothing read stdout for ${Math.round(timeoutMs / 1000)} s`)
        }
        Bun.sleepSync(WAIT_STEP_MS)
      }
    },
  }
}

/** Whether `fd` is /dev/null, which is also what Bun puts in place of a closed stdout. */
function isDiscarded(fd: number): boolean {
  try {
    const target = fstatSync(fd)
    return target.isCharacterDevice() && target.rdev === statSync('/dev/null').rdev
  } catch {
    return false
  }
}

/** The time of a line, formatted once per millisecond: under load many lines share one. */
let lineTimeMs = Number.NaN
let lineTime = ''
function lineTimeNow(): string {
  const now = Date.now()
  if (now !== lineTimeMs) {
    lineTimeMs = now
    lineTime = new Date(now).toISOString()
  }
  return lineTime
}

const logLine = (level: LogLevel, msg: string, fields?: LogFields) =>
  JSON.stringify({ time: lineTimeNow(), level, msg, ...fields })

/** A logger writing to `sink`, or to stdout (see StdoutWriter) when none is given. */
export function createLogger(sink: LogSink = (line, level) => stdoutWriter().line(line, level)): Logger {
  return {
    info: (msg, fields) => sink(logLine('info', msg, fields), 'info'),
    warn: (msg, fields) => sink(logLine('warn', msg, fields), 'warn'),
    error: (msg, fields) => sink(logLine('error', msg, fields), 'error'),
  }
}

/**
 * One line on stderr for a failing start, written only if stderr takes it at
 * once: console.error would wait forever on a full pipe nobody reads.
 */
export function printError(text: string): void {
  try {
    // As for stdout: once process.stderr exists, a full pipe fails the write instead of blocking it.
    void process.stderr
    writeSync(2, `${text}\n`)
  } catch {
    // Nobody can be told; the exit code says it.
  }
}
