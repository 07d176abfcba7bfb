/**
 * Debian's nginx in front of intake instances, configured from
 * docs/operating.md as written: what test/e2e/nginx.test.ts needs.
 *
 * - `guideSite`: the site of docs/operating.md (`nginx-site`, two instances).
 *   Only what the test owns is changed: the instances' ports, the listening
 *   addresses (127.0.0.1 and ports of its own; the IPv6 wildcard listens are
 *   left out), the certificate (a self-signed one made here) and the access
 *   log's path.
 * - `startNginx`: nginx as a child process of the test (`daemon off`, as the
 *   current user), its pid file, logs and temporary files in a folder of its own.
 * - `startSourceInstance`: an intake instance run from source on a port,
 *   for a restart on the same port.
 * - `startProxiedLoad`: clients creating, reading, opening and answering
 *   forms, and clients long-polling, through nginx, with a ledger of every
 *   answer and failure; `findLostBehindNginx` reads back what was acknowledged.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import type { Subprocess } from 'bun'
import { operatingBlock } from '../doc-blocks.ts'
import { NGINX_PATH } from '../prerequisites.ts'
import { childEnv, PROJECT_ROOT, type RunningIntake, startIntake } from './binary.ts'
import { INSTANCE_SETTINGS } from './instances.ts'

/** Replaces `pattern` (global) in `text`, where it must match `times` times, or at least once: otherwise the guide changed. */
function replaceIn(
  text: string,
  pattern: RegExp,
  replacement: string | ((match: string, ...groups: string[]) => string),
  what: string,
  times?: number,
): string {
  const global = new RegExp(pattern.source, pattern.flags.includes('g') ? pattern.flags : `${pattern.flags}g`)
  const found = text.match(global)?.length ?? 0
  if (found === 0 || (times !== undefined && found !== times)) {
    throw new Error(`the nginx config of docs/operating.md: expected ${times ?? 'some'} ${what}, found ${found}`)
  }
  return text.replace(global, replacement as (match: string, ...groups: string[]) => string)
}

export interface SiteOptions {
  /** The instances' ports, in the order of the upstream's `server` lines. */
  instancePorts: number[]
  /** Where the HTTPS server listens (127.0.0.1), and the redirecting HTTP one. */
  httpsPort: number
  httpPort: number
  certificate: string
  certificateKey: string
  accessLog: string
}

/** The site of docs/operating.md, changed only where the test owns a port or a path. */
export function guideSite(options: SiteOptions): string {
  let site = operatingBlock('nginx-site')
  let n = 0
  site = replaceIn(
    site,
    /^([ \t]*server )127\.0\.0\.1:\d+/gm,
    (_, start: string) => {
      const port = options.instancePorts[n++]
      if (port === undefined)
        throw new Error(`the upstream lists more instances than the ${options.instancePorts.length} the test started`)
      return `${start}127.0.0.1:${port}`
    },
    'upstream servers',
    options.instancePorts.length,
  )
  site = replaceIn(site, /^[ \t]*listen \[::\]:\d+[^;]*;\n/gm, '', 'IPv6 listens')
  site = replaceIn(
    site,
    /^([ \t]*listen )443\b/gm,
    (_, start: string) => `${start}127.0.0.1:${options.httpsPort}`,
    'HTTPS listen',
    1,
  )
  site = replaceIn(
    site,
    /^([ \t]*listen )80;/gm,
    (_, start: string) => `${start}127.0.0.1:${options.httpPort};`,
    'HTTP listen',
    1,
  )
  site = replaceIn(
    site,
    /^([ \t]*ssl_certificate[ \t]+)\S+;/gm,
    (_, start: string) => `${start}${options.certificate};`,
    'certificate',
    1,
  )
  site = replaceIn(
    site,
    /^([ \t]*ssl_certificate_key[ \t]+)\S+;/gm,
    (_, start: string) => `${start}${options.certificateKey};`,
    'certificate key',
    1,
  )
  site = replaceIn(
    site,
    /^([ \t]*access_log[ \t]+)\S+/gm,
    (_, start: string) => `${start}${options.accessLog}`,
    'access log',
    1,
  )
  return site
}

/** A self-signed certificate for 127.0.0.1 (openssl), in `dir`: its paths and the PEM a client trusts. */
export function selfSignedCertificate(dir: string): { certificate: string; key: string; pem: string } {
  const certificate = join(dir, 'cert.pem')
  const key = join(dir, 'key.pem')
  const made = Bun.spawnSync(
    [
      'openssl',
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '2',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
      '-keyout',
      key,
      '-out',
      certificate,
    ],
    { stdout: 'pipe', stderr: 'pipe' },
  )
  if (made.exitCode !== 0) throw new Error(`openssl could not make a certificate: ${made.stderr.toString()}`)
  return { certificate, key, pem: readFileSync(certificate, 'utf8') }
}

/** A port nothing listens on now, on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })
}

export interface RunningNginx {
  /** https://127.0.0.1:<port> */
  url: string
  /** What nginx wrote to its error log so far. */
  errorLog(): string
  /** The site file nginx includes: what the rolling-restart recipe edits. */
  siteFile: string
  /** nginx pointed at this one's configuration: add `-t` or `-s reload`. */
  command: string[]
  stop(): Promise<void>
}

/**
 * Runs nginx in the foreground with `site` inside an `http` block like
 * Debian's, everything it writes in `dir`. Resolves once it accepts connections.
 */
export async function startNginx(dir: string, site: string, httpsPort: number): Promise<RunningNginx> {
  for (const temp of ['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'])
    mkdirSync(join(dir, 'temp', temp), { recursive: true })
  const errorLog = join(dir, 'error.log')
  const conf = join(dir, 'nginx.conf')
  writeFileSync(join(dir, 'site.conf'), site)
  writeFileSync(
    conf,
    [
      // As root, nginx's workers would be "nobody", who cannot enter the test's folder: stay who we are.
      ...(process.getuid?.() === 0 ? ['user root;'] : []),
      'worker_processes auto;',
      `pid ${join(dir, 'nginx.pid')};`,
      `error_log ${errorLog} notice;`,
      'events { worker_connections 768; }',
      'http {',
      '    sendfile on;',
      '    tcp_nopush on;',
      '    types_hash_max_size 2048;',
      '    default_type application/octet-stream;',
      ...['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map(
        (temp) => `    ${temp === 'body' ? 'client_body' : temp}_temp_path ${join(dir, 'temp', temp)};`,
      ),
      `    access_log ${join(dir, 'access.log')};`,
      `    include ${join(dir, 'site.conf')};`,
      '}',
      '',
    ].join('\n'),
  )
  const proc: Subprocess = Bun.spawn([NGINX_PATH, '-p', dir, '-c', conf, '-g', 'daemon off;'], {
    cwd: dir,
    env: childEnv(),
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const readLog = () => (existsSync(errorLog) ? readFileSync(errorLog, 'utf8') : '')
  const stop = async () => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGQUIT')
    const exited = await Promise.race([proc.exited, Bun.sleep(10_000).then(() => 'timeout' as const)])
    if (exited === 'timeout') {
      proc.kill('SIGKILL')
      await proc.exited
    }
  }
  process.once('exit', () => proc.kill('SIGKILL'))
  const deadline = Date.now() + 10_000
  for (;;) {
    if (proc.exitCode !== null) {
      throw new Error(
        `nginx exited with ${proc.exitCode}\n${await new Response(proc.stderr as ReadableStream).text()}\n${readLog()}`,
      )
    }
    try {
      const socket = await Bun.connect({ hostname: '127.0.0.1', port: httpsPort, socket: { data() {} } })
      socket.end()
      break
    } catch {
      if (Date.now() > deadline) {
        await stop()
        throw new Error(`nginx did not listen on 127.0.0.1:${httpsPort} within 10 s\n${readLog()}`)
      }
      await Bun.sleep(50)
    }
  }
  return {
    url: `https://127.0.0.1:${httpsPort}`,
    errorLog: readLog,
    siteFile: join(dir, 'site.conf'),
    command: [NGINX_PATH, '-p', dir, '-c', conf],
    stop,
  }
}

/** An intake instance from source (`bun src/main.ts serve`) on `port`, on PostgreSQL; an undefined setting is unset. */
export function startSourceInstance(options: {
  databaseUrl: string
  cwd: string
  port: number
  env?: Record<string, string | undefined>
}): Promise<RunningIntake> {
  return startIntake(process.execPath, {
    cwd: options.cwd,
    args: [join(PROJECT_ROOT, 'src', 'main.ts'), 'serve'],
    env: {
      ...INSTANCE_SETTINGS,
      SERVICE_DATABASE_URL: options.databaseUrl,
      SERVICE_PORT: String(options.port),
      SERVICE_BASE_URL: 'https://forms.example.com',
      SERVICE_TRUST_PROXY: 'true',
      ...options.env,
    },
  })
}

/** One request of the load that was not answered with a status below 500. */
export interface Failure {
  what: 'create' | 'get' | 'page' | 'answer' | 'wait'
  /** The status nginx answered, or undefined when no answer came. */
  status?: number
  /** What came back: the status and the start of the body, or the error. */
  outcome: string
  /** A create's Idempotency-Key; an answer's form. */
  idempotencyKey?: string
  formId?: string
}

/** What the load sent, and what was acknowledged. */
export interface ProxiedLedger {
  /** Answers by request kind and status: `{ create: { 201: 120 }, … }`. */
  statuses: Record<string, Record<number, number>>
  failures: Failure[]
  /** Forms whose create was answered 201. */
  creates: string[]
  /** Answers answered 201: the form and the response id of the receipt. */
  answers: Array<{ formId: string; responseId: string }>
}

const PROXIED_FORM = { title: 'Behind nginx', fields: [{ key: 'name', type: 'text', label: 'Name' }] }

/**
 * Sends one request through nginx, trusting only its test certificate. A
 * new connection each time: what is tested is what nginx and intake do, and
 * a client's own idle keep-alive connection that nginx closes at a reload is
 * the client's race (docs/instances.md, "Restarting them one at a time", says what it means).
 */
async function throughNginx(
  url: string,
  ca: string,
  path: string,
  init: RequestInit = {},
): Promise<{ status: number; headers: Headers; body: any; text: string }> {
  const res = await fetch(`${url}${path}`, { ...init, keepalive: false, tls: { ca } } as RequestInit)
  const text = await res.text()
  let body: unknown = text
  try {
    body = JSON.parse(text)
  } catch {}
  return { status: res.status, headers: res.headers, body, text }
}

/** How long each long-poll of the load waits for an answer that never comes. */
const LONG_POLL_SECONDS = 5

/**
 * `workers` loops through nginx, each: create a form (with an
 * Idempotency-Key), read it through the API, open its page, answer it; and
 * `waiters` loops, each: create a form and long-poll its responses (no one
 * answers: the normal answer is 200 `[]`). Every answer and every failure
 * goes into the ledger.
 */
export function startProxiedLoad(options: {
  url: string
  ca: string
  key: string
  workers?: number
  waiters?: number
}) {
  const ledger: ProxiedLedger = { statuses: {}, failures: [], creates: [], answers: [] }
  const auth = { authorization: `Bearer ${options.key}` }
  const send = async (
    what: Failure['what'],
    path: string,
    init: RequestInit,
    about: Pick<Failure, 'idempotencyKey' | 'formId'>,
  ) => {
    try {
      const res = await throughNginx(options.url, options.ca, path, init)
      const byStatus = (ledger.statuses[what] ??= {})
      byStatus[res.status] = (byStatus[res.status] ?? 0) + 1
      if (res.status < 500) return res
      ledger.failures.push({
        what,
        status: res.status,
        outcome: `${res.status} ${res.text.slice(0, 80).replace(/\s+/g, ' ')}`,
        ...about,
      })
    } catch (error) {
      ledger.failures.push({ what, outcome: String(error), ...about })
    }
    // Not in a tight loop while nothing answers.
    await Bun.sleep(20)
    return undefined
  }
  let stopped = false
  const create = async () => {
    const idempotencyKey = crypto.randomUUID()
    const created = await send(
      'create',
      '/api/v1/forms',
      {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json', 'idempotency-key': idempotencyKey },
        body: JSON.stringify(PROXIED_FORM),
      },
      { idempotencyKey },
    )
    if (created?.status !== 201) return undefined
    ledger.creates.push(created.body.id)
    return created.body.id as string
  }
  const worker = async (w: number) => {
    for (let n = 0; !stopped; n++) {
      const formId = await create()
      if (!formId) continue
      await send('get', `/api/v1/forms/${formId}`, { headers: auth }, { formId })
      await send('page', `/f/${formId}`, {}, { formId })
      const answered = await send(
        'answer',
        `/f/${formId}`,
        {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ name: `worker ${w} answer ${n}` }),
        },
        { formId },
      )
      if (answered?.status === 201) ledger.answers.push({ formId, responseId: answered.body.id })
    }
  }
  const waiter = async () => {
    while (!stopped) {
      const formId = await create()
      if (!formId) continue
      const waited = await send(
        'wait',
        `/api/v1/forms/${formId}/responses?wait=${LONG_POLL_SECONDS}`,
        { headers: auth },
        { formId },
      )
      if (waited && (waited.status !== 200 || waited.text !== '[]'))
        ledger.failures.push({ what: 'wait', status: waited.status, outcome: waited.text.slice(0, 80), formId })
    }
  }
  const running = Promise.all([
    ...Array.from({ length: options.workers ?? 4 }, (_, w) => worker(w)),
    ...Array.from({ length: options.waiters ?? 0 }, waiter),
  ])
  return {
    ledger,
    /** Stops the workers after the requests they have in flight. */
    async stop() {
      stopped = true
      await running
    },
  }
}

/**
 * Acknowledged operations not found when read back from `instanceUrl`
 * (directly, not through nginx): forms created (201) that do not exist, and
 * answers (201) whose response the form does not list. One line each.
 */
export async function findLostBehindNginx(instanceUrl: string, key: string, ledger: ProxiedLedger): Promise<string[]> {
  const lost: string[] = []
  const auth = { authorization: `Bearer ${key}` }
  const answered = new Map(ledger.answers.map((a) => [a.formId, a.responseId]))
  for (const formId of ledger.creates) {
    const form = await fetch(`${instanceUrl}/api/v1/forms/${formId}`, { headers: auth })
    if (form.status !== 200) {
      lost.push(`form ${formId} was created (201) but reads ${form.status}`)
      continue
    }
    await form.arrayBuffer()
    const responseId = answered.get(formId)
    if (!responseId) continue
    const responses = (await (
      await fetch(`${instanceUrl}/api/v1/forms/${formId}/responses`, { headers: auth })
    ).json()) as Array<{ id: string }>
    if (!responses.some((r) => r.id === responseId))
      lost.push(`answer ${responseId} to form ${formId} was acknowledged (201) but is not among its responses`)
  }
  return lost
}
