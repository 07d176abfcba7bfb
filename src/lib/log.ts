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

export const stdoutSink: LogSink = (line) => process.stdout.write(`${line}\n`)

export function createLogger(sink: LogSink = stdoutSink): Logger {
  const write = (level: string, msg: string, fields?: LogFields) =>
    sink(JSON.stringify({ time: new Date().toISOString(), level, msg, ...fields }))
  return {
    info: (msg, fields) => write('info', msg, fields),
    warn: (msg, fields) => write('warn', msg, fields),
    error: (msg, fields) => write('error', msg, fields),
  }
}
