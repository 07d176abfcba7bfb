/**
 * Every setting intake reads, validated once at start. Flags override the
 * environment. A bad value is a ConfigError: one line on stderr, exit code 2.
 */

export interface Config {
  host: string
  port: number
  /** Origin used in form URLs; no trailing slash. Undefined means http://localhost:<listening port>. */
  baseUrl: string | undefined
  /** The SQLite file, used when databaseUrl is not set. */
  dbPath: string
  /** A postgres:// URL: keep everything in that PostgreSQL database instead. */
  databaseUrl: string | undefined
  webhookTimeoutMs: number
  webhookMaxRetries: number
  /** Delay before retry n of a round: entry n-1, the last entry for retries past the end. */
  webhookRetryScheduleMs: number[]
  /** How long a start keeps trying to reach PostgreSQL before it gives up (exit code 1). */
  databaseConnectTimeoutMs: number
  apiKey: string | undefined
  trustProxy: boolean
  rateLimitPerMinute: number
  publicRateLimitPerMinute: number
  webhookBlockPrivate: boolean
  /** Request body bytes one process holds at once, all requests together. */
  uploadBudgetBytes: number
}

export class ConfigError extends Error {}

/** Values given as command-line flags (`--host`, `--port`, `--base-url`, `--db`, `--database-url`). */
export interface ConfigFlags {
  host?: string
  port?: string
  baseUrl?: string
  db?: string
  databaseUrl?: string
}

/** The largest form post a form can allow (its files together are at most 100 MiB): the budget must hold one. */
const MIN_UPLOAD_BUDGET_BYTES = 104_857_600

export const API_KEY_PATTERN = /^svc_live_[0-9a-f]{48}$/

type Env = Record<string, string | undefined>

export function loadConfig(env: Env = process.env, flags: ConfigFlags = {}): Config {
  const setting = (name: string, flag?: string) => {
    const value = flag ?? env[name]
    return value === undefined || value.trim() === '' ? undefined : value.trim()
  }
  const port = integer('SERVICE_PORT (--port)', setting('SERVICE_PORT', flags.port), 8080, 0, 65535)
  const dbPath = setting('SERVICE_DB_PATH', flags.db)
  const databaseUrl = postgresUrl(setting('SERVICE_DATABASE_URL', flags.databaseUrl))
  if (databaseUrl !== undefined && dbPath !== undefined) {
    throw new ConfigError(
      'Set either SERVICE_DATABASE_URL (--database-url) for PostgreSQL or SERVICE_DB_PATH (--db) for SQLite, not both',
    )
  }
  return {
    host: setting('SERVICE_HOST', flags.host) ?? '127.0.0.1',
    port,
    baseUrl: baseUrl(setting('SERVICE_BASE_URL', flags.baseUrl)),
    dbPath: dbPath ?? './data/intake.db',
    databaseUrl,
    webhookTimeoutMs: Math.round(seconds('SERVICE_WEBHOOK_TIMEOUT', setting('SERVICE_WEBHOOK_TIMEOUT'), 10) * 1000),
    webhookMaxRetries: integer('SERVICE_WEBHOOK_MAX_RETRIES', setting('SERVICE_WEBHOOK_MAX_RETRIES'), 3, 0, 10),
    webhookRetryScheduleMs: retrySchedule(setting('SERVICE_WEBHOOK_RETRY_SCHEDULE')),
    databaseConnectTimeoutMs: Math.round(
      seconds('SERVICE_DATABASE_CONNECT_TIMEOUT', setting('SERVICE_DATABASE_CONNECT_TIMEOUT'), 30) * 1000,
    ),
    apiKey: apiKey(setting('SERVICE_API_KEY')),
    trustProxy: boolean('SERVICE_TRUST_PROXY', setting('SERVICE_TRUST_PROXY'), false),
    rateLimitPerMinute: integer('SERVICE_RATE_LIMIT', setting('SERVICE_RATE_LIMIT'), 600, 0, 1_000_000),
    publicRateLimitPerMinute: integer(
      'SERVICE_PUBLIC_RATE_LIMIT',
      setting('SERVICE_PUBLIC_RATE_LIMIT'),
      60,
      0,
      1_000_000,
    ),
    webhookBlockPrivate: boolean('SERVICE_WEBHOOK_BLOCK_PRIVATE', setting('SERVICE_WEBHOOK_BLOCK_PRIVATE'), false),
    uploadBudgetBytes: integer(
      'SERVICE_UPLOAD_BUDGET',
      setting('SERVICE_UPLOAD_BUDGET'),
      268_435_456,
      MIN_UPLOAD_BUDGET_BYTES,
      Number.MAX_SAFE_INTEGER,
    ),
  }
}

/** The origin form URLs start with, once the listening port is known. */
export const resolveBaseUrl = (config: Config, listeningPort: number) =>
  config.baseUrl ?? `http://localhost:${listeningPort}`

function integer(name: string, value: string | undefined, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
    throw new ConfigError(`${name} must be a whole number from ${min} to ${max}, got "${value}"`)
  }
  return Number(value)
}

function seconds(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback
  const n = Number(value)
  if (!/^\d+(\.\d+)?$/.test(value) || n <= 0 || n > 600) {
    throw new ConfigError(`${name} must be a number of seconds above 0 and at most 600, got "${value}"`)
  }
  return n
}

/** Today's schedule (CONTRACT: 5^(n-1) s before retry n), one entry per retry SERVICE_WEBHOOK_MAX_RETRIES allows. */
const DEFAULT_RETRY_SCHEDULE_MS = Array.from({ length: 10 }, (_, i) => 5 ** i * 1000)

const DURATION_UNITS_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }
const MAX_RETRY_DELAY_MS = 30 * 86_400_000

/** As Svix's retry_schedule: delays separated by commas, each a number and a unit (ms, s, m, h, d), e.g. "5s,5m,30m,2h". */
function retrySchedule(value: string | undefined): number[] {
  if (value === undefined) return DEFAULT_RETRY_SCHEDULE_MS
  const delays = value.split(',').map((part) => {
    const match = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/.exec(part.trim())
    const ms = match ? Math.round(Number(match[1]) * DURATION_UNITS_MS[match[2]!]!) : Number.NaN
    return ms <= MAX_RETRY_DELAY_MS ? ms : Number.NaN
  })
  if (delays.some(Number.isNaN)) {
    throw new ConfigError(
      `SERVICE_WEBHOOK_RETRY_SCHEDULE must be delays separated by commas, each a number and a unit (ms, s, m, h, d) of at most 30 days, like "5s,5m,30m,2h", got "${value}"`,
    )
  }
  return delays
}

function boolean(name: string, value: string | undefined, fallback: boolean): boolean {
  if (value === undefined) return fallback
  const v = value.toLowerCase()
  if (['true', '1', 'yes', 'on'].includes(v)) return true
  if (['false', '0', 'no', 'off'].includes(v)) return false
  throw new ConfigError(`${name} must be true or false, got "${value}"`)
}

function baseUrl(value: string | undefined): string | undefined {
  if (value === undefined) return undefined
  let url: URL
  try {
    url = new URL(value)
  } catch {
    throw new ConfigError(`SERVICE_BASE_URL (--base-url) must be an absolute http(s) URL, got "${value}"`)
  }
  if (
    (url.protocol !== 'http:' && url.protocol !== 'https:') ||
    url.search ||
    url.hash ||
    url.username ||
    url.password
  ) {
    throw new ConfigError(
      `SERVICE_BASE_URL (--base-url) must be an http(s) origin like https://forms.example.com, got "${value}"`,
    )
  }
  // The pages, forms and files are served from the root: a path would give links that lead nowhere.
  if (url.pathname.replace(/\/+$/, '') !== '') {
    throw new ConfigError(
      `SERVICE_BASE_URL (--base-url) must be an origin without a path (intake serves from the root of its host; use a host of its own), got "${value}"`,
    )
  }
  return url.origin
}

/** A postgres:// or postgresql:// URL with a host. Never echoed: it may hold a password. */
function postgresUrl(value: string | undefined): string | undefined {
  if (value === undefined) return undefined
  const url = URL.parse(value)
  if (!url || (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') || url.hostname === '') {
    throw new ConfigError(
      'SERVICE_DATABASE_URL (--database-url) must be a postgres:// or postgresql:// URL such as postgres://intake@db.example.com:5432/intake',
    )
  }
  return value
}

function apiKey(value: string | undefined): string | undefined {
  if (value !== undefined && !API_KEY_PATTERN.test(value)) {
    // Never echo the value: it is meant to be a secret.
    throw new ConfigError('SERVICE_API_KEY must be "svc_live_" followed by 48 lowercase hex characters')
  }
  return value
}
