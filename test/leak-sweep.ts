/**
 * The leak sweep: preloaded into every `bun test` run (bunfig.toml, [test]
 * preload), so it covers the whole suite however it is started (the README's
 * `bun test`, .ci/run). The contract says a key or a webhook secret is in no
 * response, log line or error, ever; this checks it against everything the
 * suite made intake do.
 *
 * What it collects, as the tests run:
 * - secrets: every key a TestContext creates (t.key, t.createKey), every key
 *   intake prints from a child process (the start-up line, `intake keys create`),
 *   every bearer token a test sends (unknown and malformed ones too; those that
 *   are not random keys are matched by their full `svc_live_...` text), and
 *   every webhook secret derivable from the forms created: the hex HMAC-SHA256
 *   of a form id keyed with the key that created it, computed for every form id
 *   in a response to a request carrying that key, and for every form id in a
 *   context's log lines (their paths name forms) with each of that context's keys;
 * - what must never hold one: every log line a TestContext captured
 *   (`seen.contexts` in test/utils.ts), every response body `send` read
 *   (`seen.onResponse`), every JSON response a bearer-authenticated `fetch`
 *   read (the e2e helpers' requests to the real executable), and everything a
 *   child process started with `Bun.spawn` wrote: its JSON log lines and any
 *   other stdout line except the one that prints a new key ("API key: ..."),
 *   and all of its stderr. The first-start banner also puts that same key in
 *   its ready `curl` line; there the key it just printed is allowed, nothing else.
 *
 * A response body is checked when it is read, against the secrets known by
 * then (a secret always exists before anything can leak it: keys are created
 * before they are used, and a webhook secret is derived from the very response
 * that first names its form, before that response is checked). Log lines and
 * child output are checked in the global afterAll, against every secret the
 * run produced. Any hit fails the run with where it was and which secret
 * (shortened, so the report does not repeat it).
 *
 * A secret is found as its exact text: a key's 48 hex characters (with or
 * without `svc_live_`), a webhook secret's 64, in either case. Encodings other
 * than hex (base64 of the secret bytes, say) are not searched: intake never
 * produces them.
 */
import { afterAll } from 'bun:test'
import { createHmac } from 'node:crypto'
import { seen } from './utils.ts'

const KEY_SHAPE = /^svc_live_[0-9a-f]{48}$/
const KEY_PREFIX = 'svc_live_'
const ULIDS = /[0-7][0-9A-HJKMNP-TV-Z]{25}/g
const HEX_RUNS = /[0-9a-fA-F]{48,}/g

/** A key's 48 hex characters -> where the sweep learned of it. */
const keyBodies = new Map<string, string>()
/** Bearer tokens sent that are not keys intake made (unknown, malformed): searched with their prefix. */
const presentedTokens = new Set<string>()
/** A webhook secret (64 lowercase hex) -> the form it belongs to. */
const webhookSecrets = new Map<string, string>()
/** `${key} ${formId}` pairs already derived. */
const derived = new Set<string>()
/** Each problem found: where, and which secret (shortened). */
const findings: string[] = []
const counts = { bodies: 0, contextLines: 0, childOutputs: 0 }

const shorten = (secret: string) => `${secret.slice(0, 14)}…`

function learnKey(token: string, origin: string) {
  // A random key is found by its 48 hex characters alone; a made-up one (`svc_live_000...0`) only with its prefix.
  if (KEY_SHAPE.test(token) && !/^svc_live_(.)\1*$/.test(token)) {
    const body = token.slice(KEY_PREFIX.length)
    if (!keyBodies.has(body)) keyBodies.set(body, origin)
  } else if (token.startsWith(KEY_PREFIX) && token.length > KEY_PREFIX.length + 2) {
    presentedTokens.add(token)
  }
}

/** Webhook secrets of every form named in `text`, as created by `key`. */
function deriveSecrets(key: string, text: string) {
  if (!KEY_SHAPE.test(key)) return
  for (const [formId] of text.matchAll(ULIDS)) {
    const pair = `${key} ${formId}`
    if (derived.has(pair)) continue
    derived.add(pair)
    webhookSecrets.set(createHmac('sha256', key).update(formId).digest('hex'), `the webhook secret of form ${formId}`)
  }
}

/** Every known secret in `text`: its text (to redact) and what it is. */
function secretsIn(text: string): Array<[secret: string, description: string]> {
  const found = new Map<string, string>()
  for (const [match] of text.matchAll(HEX_RUNS)) {
    // A run of one repeated character (test padding) holds no random secret.
    if (/^(.)\1*$/.test(match)) continue
    const run = match.toLowerCase()
    for (let i = 0; i + 48 <= run.length; i++) {
      const key = keyBodies.get(run.slice(i, i + 48))
      if (key !== undefined)
        found.set(match.slice(i, i + 48), `the API key ${shorten(KEY_PREFIX + run.slice(i, i + 48))} (${key})`)
      if (i + 64 <= run.length) {
        const secret = webhookSecrets.get(run.slice(i, i + 64))
        if (secret !== undefined) found.set(match.slice(i, i + 64), `${secret} (${shorten(run.slice(i, i + 64))})`)
      }
    }
  }
  if (text.includes(KEY_PREFIX)) {
    for (const token of presentedTokens)
      if (text.includes(token)) found.set(token, `the bearer token ${shorten(token)} a test sent`)
  }
  return [...found]
}

/** `text` with every secret in it, and anything shaped like a key, shortened: a report must not repeat them. */
function redact(text: string, secrets: string[] = secretsIn(text).map(([secret]) => secret)): string {
  let redacted = text.replace(/svc_live_[0-9A-Za-z]{6,}/g, (token) => shorten(token))
  for (const secret of secrets) redacted = redacted.split(secret).join(shorten(secret))
  return redacted
}

function record(where: string, text: string) {
  const found = secretsIn(text)
  if (found.length === 0) return
  const excerpt = redact(
    text,
    found.map(([secret]) => secret),
  ).slice(0, 300)
  for (const [, description] of found) findings.push(`${redact(where)}: ${description}\n    in: ${excerpt}`)
}

/** How many of each context's keys the sweep has learned. */
const keysLearned = new WeakMap<string[], number>()
function learnContextKeys() {
  for (const [index, context] of seen.contexts.entries()) {
    const from = keysLearned.get(context.keys) ?? 0
    for (const key of context.keys.slice(from)) learnKey(key, `created by test context #${index + 1}`)
    keysLearned.set(context.keys, context.keys.length)
  }
}

const bearerOf = (authorization: string | null | undefined) => /^\s*Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1]

/** A response body a test read, with the Authorization its request carried. */
function observeResponse(where: string, authorization: string | null | undefined, body: string) {
  counts.bodies++
  learnContextKeys()
  const token = bearerOf(authorization)
  if (token !== undefined) {
    learnKey(token, `sent as a bearer token`)
    deriveSecrets(token, body)
  }
  record(where, body)
}

// ------------------------------------------------------------------ in-process: what `send` read

seen.onResponse = (authorization, body) => observeResponse('a response body read by send()', authorization, body)

// ------------------------------------------------------------------ e2e: API responses read over fetch

const originalFetch = globalThis.fetch
const recordingFetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
  const response = await originalFetch(input, init)
  try {
    const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined))
    const authorization = headers.get('authorization')
    const type = response.headers.get('content-type') ?? ''
    // Only API calls (a bearer key), only bodies that end (JSON, text): never a webhook attempt, never a stream.
    if (bearerOf(authorization)?.startsWith(KEY_PREFIX) && /json|^text\/(?!event-stream)/i.test(type)) {
      const url = input instanceof Request ? input.url : String(input)
      response
        .clone()
        .text()
        .then(
          (body) =>
            observeResponse(
              `a response body from ${url.replace(/^https?:\/\/[^/]+/, '').split('?')[0]} read over fetch`,
              authorization,
              body,
            ),
          () => undefined,
        )
    }
  } catch {
    // Recording must never change what the test sees.
  }
  return response
}
globalThis.fetch = Object.assign(recordingFetch, { preconnect: originalFetch.preconnect }) as typeof fetch

// ------------------------------------------------------------------ e2e: what child processes print

interface ChildOutput {
  command: string
  stdout: string
  stderr: string
}
const childOutputs: ChildOutput[] = []
const childReads: Array<Promise<void>> = []

const originalSpawn = Bun.spawn
/**
 * Bun.spawn, with a copy of each piped stdout and stderr: the caller gets one
 * branch of a tee, the sweep reads the other to its end. Everything else on
 * the subprocess (kill, exited, pid, ...) is the real one. Only the
 * `Bun.spawn([command, ...args], options)` form the tests use is recorded:
 * node:child_process calls Bun.spawn({ cmd, ... }) underneath and needs the
 * bare subprocess, so that form passes straight through.
 */
function spawnRecorded(...args: unknown[]) {
  const proc = (originalSpawn as unknown as (...a: unknown[]) => object).apply(Bun, args)
  if (!Array.isArray(args[0])) return proc
  const argv = args[0].map(String)
  for (const arg of argv) if (arg.startsWith(KEY_PREFIX)) learnKey(arg, 'passed to a child process')
  const output: ChildOutput = { command: argv.join(' '), stdout: '', stderr: '' }
  childOutputs.push(output)
  const branches: Partial<Record<'stdout' | 'stderr', ReadableStream>> = {}
  return new Proxy(proc, {
    get(target, property) {
      if (property === 'stdout' || property === 'stderr') {
        const stream = Reflect.get(target, property, target)
        if (!(stream instanceof ReadableStream)) return stream
        if (!branches[property]) {
          const [mine, theirs] = stream.tee()
          branches[property] = theirs
          childReads.push(
            new Response(mine).text().then(
              (text) => void (output[property] = text),
              () => undefined,
            ),
          )
        }
        return branches[property]
      }
      const value = Reflect.get(target, property, target)
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
}
Bun.spawn = spawnRecorded as unknown as typeof Bun.spawn

// ------------------------------------------------------------------ the end of the run

/** Keys a child printed as new ("API key: svc_live_...", as `serve` and `keys create` print them). */
const PRINTED_KEY_LINE = /API key/
/** The first-start banner's ready command, which carries the key printed just above it. */
const READY_CURL_LINE = /^ {2}curl -s \S+\/api\/v1\/forms -H 'Authorization: Bearer (svc_live_[0-9a-f]{48})'/
const printedKeysIn = (stdout: string) =>
  new Set(
    stdout
      .split('\n')
      .flatMap((line) =>
        PRINTED_KEY_LINE.test(line) ? [...line.matchAll(/svc_live_[0-9a-f]{48}/g)].map(([key]) => key) : [],
      ),
  )

afterAll(async () => {
  const startedAt = performance.now()
  // Children are stopped by now (each e2e file kills its own); give their pipes a moment to drain, never hang.
  await Promise.race([Promise.all(childReads), Bun.sleep(5000)])

  learnContextKeys()
  for (const output of childOutputs) {
    for (const key of printedKeysIn(output.stdout)) learnKey(key, `printed by ${redact(output.command)}`)
  }

  for (const [index, context] of seen.contexts.entries()) {
    const text = context.lines.join('\n')
    for (const key of context.keys) deriveSecrets(key, text)
    for (const line of context.lines) {
      counts.contextLines++
      record(`a log line of test context #${index + 1}`, line)
    }
  }

  for (const output of childOutputs) {
    counts.childOutputs++
    const printedHere = printedKeysIn(output.stdout)
    for (const line of output.stdout.split('\n')) {
      if (PRINTED_KEY_LINE.test(line)) continue
      const readyKey = READY_CURL_LINE.exec(line)?.[1]
      // Only the key this same output printed as new; anything else on that line still counts.
      const checked = readyKey !== undefined && printedHere.has(readyKey) ? line.split(readyKey).join('') : line
      record(`stdout of \`${output.command}\``, checked)
    }
    for (const line of output.stderr.split('\n')) record(`stderr of \`${output.command}\``, line)
  }

  const summary =
    `leak sweep: ${seen.contexts.length} test contexts (${counts.contextLines} log lines), ${counts.bodies} response bodies, ` +
    `${counts.childOutputs} child processes, against ${keyBodies.size + presentedTokens.size} keys and ${webhookSecrets.size} webhook secrets ` +
    `(final pass ${Math.round(performance.now() - startedAt)} ms)`
  if (findings.length > 0) {
    const shown = findings.slice(0, 20).join('\n  ')
    throw new Error(
      `${summary}: ${findings.length} leak(s) found\n  ${shown}${findings.length > 20 ? `\n  ... and ${findings.length - 20} more` : ''}`,
    )
  }
  console.log(`${summary}: no leak`)
})
