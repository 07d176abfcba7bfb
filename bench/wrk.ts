/**
 * Driving a server with wrk (the Debian package): the command, its Lua
 * scripts (written to a temp dir), and reading its `--latency` report.
 */
import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { type BenchState, track } from '../test/e2e/intake-child.ts'
import { BenchError } from './lib.ts'

export const WRK = '/usr/bin/wrk'

/** False (after telling the user how to get it) when wrk is missing. */
export function wrkPresent(): boolean {
  if (existsSync(WRK)) return true
  console.error(`${WRK} not found. Install it first:\n\n  apt-get install wrk\n`)
  return false
}

/** What one wrk run reported. */
export interface WrkResult {
  requestsPerSecond: number
  /** Completed requests, and over how many seconds. */
  requests: number
  seconds: number
  p50Ms: number
  p99Ms: number
  /** "Non-2xx or 3xx responses" (status > 399), 0 when wrk printed none. */
  badStatus: number
  socketErrors: { connect: number; read: number; write: number; timeout: number }
  /** Requests a per-form script sent with no form left to answer (0 for other scripts). */
  exhausted: number
  /** wrk's report as printed. */
  text: string
}

export interface WrkRun {
  /** The whole URL: scheme, host, port and path. */
  url: string
  threads: number
  connections: number
  seconds: number
  /** A Lua script (see the writers below). */
  script?: string
  /** Extra headers, as `-H "Name: value"`. */
  headers?: Record<string, string>
}

/**
 * Runs wrk to the end and reads its report; throws when wrk fails (e.g. cannot
 * connect). With `stopWhen`, asked every `pollMs` (one question at a time):
 * once it says true, wrk gets SIGINT, on which it stops early and reports as
 * usual.
 */
export async function runWrk(
  state: BenchState,
  run: WrkRun,
  stopWhen?: () => boolean | Promise<boolean>,
  pollMs = 100,
): Promise<WrkResult> {
  const args = [WRK, `-t${run.threads}`, `-c${run.connections}`, `-d${run.seconds}s`, '--latency']
  for (const [name, value] of Object.entries(run.headers ?? {})) args.push('-H', `${name}: ${value}`)
  if (run.script) args.push('-s', run.script)
  args.push(run.url)
  const proc = track(state, Bun.spawn(args, { stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' }))
  let asking = false
  const watch = stopWhen
    ? setInterval(() => {
        if (asking || proc.exitCode !== null) return
        asking = true
        Promise.resolve()
          .then(stopWhen)
          .then(
            (stop) => {
              if (stop && proc.exitCode === null) {
                proc.kill('SIGINT')
                clearInterval(watch)
              }
            },
            () => {}, // asked again next time
          )
          .finally(() => {
            asking = false
          })
      }, pollMs)
    : undefined
  try {
    const [text, err] = await Promise.all([
      new Response(proc.stdout).text(),
      new Response(proc.stderr).text(),
      proc.exited,
    ])
    if (proc.exitCode !== 0)
      throw new BenchError(
        `wrk ${run.url} exited with ${proc.exitCode ?? proc.signalCode}: ${(err + text).trim().slice(0, 500)}`,
      )
    return parseWrk(text)
  } finally {
    clearInterval(watch)
  }
}

const UNIT_MS: Record<string, number> = { us: 0.001, ms: 1, s: 1000, m: 60_000, h: 3_600_000 }

/** A wrk duration such as `714.00us`, `1.23ms`, `2.01s`, in ms. */
function durationMs(text: string): number {
  const match = /^([\d.]+)(us|ms|s|m|h)$/.exec(text)
  if (!match) throw new BenchError(`wrk printed a duration I cannot read: ${text}`)
  return Number(match[1]) * UNIT_MS[match[2]!]!
}

export function parseWrk(text: string): WrkResult {
  const need = (pattern: RegExp, what: string) => {
    const match = pattern.exec(text)
    if (!match) throw new BenchError(`no ${what} in wrk's report:\n${text}`)
    return match
  }
  const done = need(/^\s*(\d+) requests in ([\d.]+)(us|ms|s|m|h),/m, 'request count')
  const sockets = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(text)
  return {
    requestsPerSecond: Number(need(/^Requests\/sec:\s+([\d.]+)/m, 'Requests/sec')[1]),
    requests: Number(done[1]),
    seconds: durationMs(`${done[2]}${done[3]}`) / 1000,
    p50Ms: durationMs(need(/^\s+50%\s+(\S+)/m, 'p50 (was --latency given?)')[1]!),
    p99Ms: durationMs(need(/^\s+99%\s+(\S+)/m, 'p99')[1]!),
    badStatus: Number(/Non-2xx or 3xx responses: (\d+)/.exec(text)?.[1] ?? 0),
    socketErrors: {
      connect: Number(sockets?.[1] ?? 0),
      read: Number(sockets?.[2] ?? 0),
      write: Number(sockets?.[3] ?? 0),
      timeout: Number(sockets?.[4] ?? 0),
    },
    exhausted: Number(/^bench: (\d+) requests? found no form left/m.exec(text)?.[1] ?? 0),
    text,
  }
}

/**
 * Runs of one server as one result: the rate over all of them (requests over
 * seconds), the median of their p50s and the highest p99, every failure
 * counted, and the reports one after another.
 */
export function combineRounds(rounds: WrkResult[]): WrkResult {
  if (rounds.length === 0) throw new BenchError('no wrk run to combine')
  const requests = rounds.reduce((sum, r) => sum + r.requests, 0)
  const seconds = rounds.reduce((sum, r) => sum + r.seconds, 0)
  const p50s = rounds.map((r) => r.p50Ms).sort((a, b) => a - b)
  const sum = (pick: (r: WrkResult) => number) => rounds.reduce((total, r) => total + pick(r), 0)
  return {
    requestsPerSecond: requests / seconds,
    requests,
    seconds,
    p50Ms: p50s[Math.floor(p50s.length / 2)]!,
    p99Ms: Math.max(...rounds.map((r) => r.p99Ms)),
    badStatus: sum((r) => r.badStatus),
    socketErrors: {
      connect: sum((r) => r.socketErrors.connect),
      read: sum((r) => r.socketErrors.read),
      write: sum((r) => r.socketErrors.write),
      timeout: sum((r) => r.socketErrors.timeout),
    },
    exhausted: sum((r) => r.exhausted),
    text: rounds.map((r) => r.text).join('\n'),
  }
}

/** A Lua string literal (printable ASCII only: then the escapes JSON uses, \" and \\, are the same in Lua). */
/** A Lua string literal: JSON's escapes of CR and LF (for multipart bodies) are Lua's too. */
function lua(s: string): string {
  if (/[^\x20-\x7e\r\n]/.test(s))
    throw new BenchError(`not printable ASCII, cannot go into a wrk script as is: ${s.slice(0, 80)}`)
  return JSON.stringify(s)
}

const luaHeaders = (headers: Record<string, string>) =>
  `{ ${Object.entries(headers)
    .map(([name, value]) => `[${lua(name)}] = ${lua(value)}`)
    .join(', ')} }`

/** The same request every time (wrk builds it once): writes the script to `dir/name.lua`, returns its path. */
export function writeStaticScript(
  dir: string,
  name: string,
  method: string,
  headers: Record<string, string>,
  body: string,
): string {
  const path = join(dir, `${name}.lua`)
  writeFileSync(
    path,
    [
      `wrk.method = ${lua(method)}`,
      `wrk.body = ${lua(body)}`,
      ...Object.entries(headers).map(([n, v]) => `wrk.headers[${lua(n)}] = ${lua(v)}`),
      '',
    ].join('\n'),
  )
  return path
}

/**
 * One request per form: `POST /f/<id>` with `body`, each id of `idsFile` (one a
 * line) used once. The ids are dealt to wrk's threads in turn (line n goes to
 * thread n mod `threads`), so no two threads ever post to the same form. Each
 * thread builds its requests up front; one with no id left posts to
 * /f/no-form-left (a 404, counted by wrk) and is counted in done(), which
 * prints `bench: N requests found no form left`. With `wrap` (for a server
 * that answers no form, such as the bare one) a thread starts its ids over
 * instead: the same work for wrk, and no request without a form.
 */
export function writePerFormScript(
  dir: string,
  name: string,
  idsFile: string,
  threads: number,
  headers: Record<string, string>,
  body: string,
  wrap = false,
): string {
  const path = join(dir, `${name}.lua`)
  writeFileSync(
    path,
    `-- generated by bench/wrk.ts
local threads = {}
local counter = 0

function setup(thread)
  thread:set("tid", counter)
  counter = counter + 1
  table.insert(threads, thread)
end

local requests = {}
local next_request = 0
local headers = ${luaHeaders(headers)}
local body = ${lua(body)}
local no_form_left
exhausted = 0

function init(args)
  local n = 0
  for id in io.lines(${lua(idsFile)}) do
    if n % ${threads} == tid then
      requests[#requests + 1] = wrk.format("POST", "/f/" .. id, headers, body)
    end
    n = n + 1
  end
  no_form_left = wrk.format("POST", "/f/no-form-left", headers, body)
end

function request()
  next_request = next_request + 1
  local r = requests[next_request]
  if r == nil and ${wrap ? 'true' : 'false'} and #requests > 0 then
    next_request = 1
    r = requests[1]
  end
  if r == nil then
    exhausted = exhausted + 1
    return no_form_left
  end
  return r
end

function done(summary, latency, requests)
  local total = 0
  for _, thread in ipairs(threads) do
    total = total + (thread:get("exhausted") or 0)
  end
  io.write(string.format("bench: %d requests found no form left\\n", total))
end
`,
  )
  return path
}
