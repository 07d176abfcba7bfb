import { writeSync } from 'node:fs'

/**
 * Structured logs: one JSON object per line. Callers pass only what is safe to
 * keep: never a key, a webhook secret, a form's context or submitted data.
 */

export type LogFields = Record<string, string | number | boolean | null | undefined>
export type LogSink = (line: string) => void

export interface Logger {
  info(msg: string, fields?: LogFields): void
  warn(msg: string, fields?: LogFields): void
  error(msg: string, fields?: LogFields): void
}

/**
 * Lines for stdout, written together once per turn of the event loop: under
 * load one write carries many requests' lines instead of one write each.
 * Whatever is still buffered is written before the process exits.
 */
function bufferedStdout(): LogSink {
  let pending: string[] = []
  const flush = () => {
    if (pending.length === 0) return
    const chunk = `${pending.join('\n')}\n`
    pending = []
    process.stdout.write(chunk)
  }
  process.on('exit', () => {
    if (pending.length > 0) writeSync(1, `${pending.join('\n')}\n`)
  })
  return (line) => {
    if (pending.push(line) === 1) setImmediate(flush)
  }
}

let stdoutSink: LogSink | undefined

/** A logger writing to `sink`, or to stdout (buffered per event-loop turn) when none is given. */
export function createLogger(sink: LogSink = (stdoutSink ??= bufferedStdout())): Logger {
  const write = (level: string, msg: string, fields?: LogFields) =>
    sink(JSON.stringify({ time: new Date().toISOString(), level, msg, ...fields }))
  return {
    info: (msg, fields) => write('info', msg, fields),
    warn: (msg, fields) => write('warn', msg, fields),
    error: (msg, fields) => write('error', msg, fields),
  }
}
