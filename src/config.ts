/**
 * Every setting intake reads, validated once at start: one table, from which
 * the Config type, loadConfig and the settings part of `intake --help` all
 * come. Flags override the environment. A bad value is a ConfigError: one
 * line on stderr, exit code 2.
 */

/** One setting: where it is read from, what --help says of it, and how its text becomes its value. */
interface Setting<T> {
  /** The environment variable. */
  variable: string
  /** The command-line flag (without --) that overrides the variable, if there is one. */
  flag?: string
  /** What it is, in a few words, for --help. */
  help: string
  /** The default as --help shows it, if there is one. */
  shown?: string
  /** The value of the trimmed text (undefined: not set); `name` is how a ConfigError names the setting. */
  read(text: string | undefined, name: string): T
}

/** The largest form post a form can allow (its files together are at most 100 MiB): the budget must hold one. */
const MIN_UPLOAD_BUDGET_BYTES = 104_857_600

export const API_KEY_PATTERN = /^svc_live_[0-9a-f]{48}$/

/** Every setting, in the order --help lists them. A new setting is one entry here (and a row in the docs). */
export const SETTINGS = {
  host: {
    variable: 'SERVICE_HOST',
    flag: 'host',
    help: 'address to bind',
    shown: '127.0.0.1',
    read: (text) => text ?? '127.0.0.1',
  },
  port: {
    variable: 'SERVICE_PORT',
    flag: 'port',
    help: 'port to bind, 0 = any free one',
    shown: '8080',
    read: (text, name) => integer(name, text, 8080, 0, 65535),
  },
  /** Origin used in form URLs; no trailing slash. Undefined means http://localhost:<listening port>. */
  baseUrl: {
    variable: 'SERVICE_BASE_URL',
    flag: 'base-url',
    help: 'origin used in form URLs',
    shown: 'http://localhost:<port>',
    read: (text, name) => baseUrl(name, text),
  },
  /** The SQLite file, used when databaseUrl is not set. */
  dbPath: {
    variable: 'SERVICE_DB_PATH',
    flag: 'db',
    help: 'SQLite file',
    shown: './data/intake.db',
    read: (text) => text ?? './data/intake.db',
  },
  /** A postgres:// URL: keep everything in that PostgreSQL database instead. */
  databaseUrl: {
    variable: 'SERVICE_DATABASE_URL',
    flag: 'database-url',
    help: 'postgres://user@host:port/db: use PostgreSQL instead (password from PGPASSWORD)',
    read: (text, name) => postgresUrl(name, text),
  },
  webhookTimeoutMs: {
    variable: 'SERVICE_WEBHOOK_TIMEOUT',
    help: 'seconds per webhook attempt',
    shown: '10',
    read: (text, name) => Math.round(seconds(name, text, 10) * 1000),
  },
  webhookMaxRetries: {
    variable: 'SERVICE_WEBHOOK_MAX_RETRIES',
    help: 'retries after the first',
    shown: '3',
    read: (text, name) => integer(name, text, 3, 0, 10),
  },
  webhookRetryScheduleMs: {
    variable: 'SERVICE_WEBHOOK_RETRY_SCHEDULE',
    help: 'delays before retries 1, 2, 3... (e.g. 5s,5m,30m,2h)',
    shown: '1s,5s,25s,...',
    read: (text) => retrySchedule(text),
  },
  databaseConnectTimeoutMs: {
    variable: 'SERVICE_DATABASE_CONNECT_TIMEOUT',
    help: 'seconds a start keeps trying to reach PostgreSQL',
    shown: '30',
    read: (text, name) => Math.round(seconds(name, text, 30) * 1000),
  },
  apiKey: {
    variable: 'SERVICE_API_KEY',
    help: 'register this svc_live_ key at start',
    read: (text, name) => apiKey(name, text),
  },
  trustProxy: {
    variable: 'SERVICE_TRUST_PROXY',
    help: 'client IP from X-Forwarded-For',
    shown: 'false',
    read: (text, name) => boolean(name, text, false),
  },
  rateLimitPerMinute: {
    variable: 'SERVICE_RATE_LIMIT',
    help: 'API requests/minute/key, 0 = off',
    shown: '600',
    read: (text, name) => integer(name, text, 600, 0, 1_000_000),
  },
  publicRateLimitPerMinute: {
    variable: 'SERVICE_PUBLIC_RATE_LIMIT',
    help: 'form posts/minute/IP, 0 = off',
    shown: '60',
    read: (text, name) => integer(name, text, 60, 0, 1_000_000),
  },
  webhookBlockPrivate: {
    variable: 'SERVICE_WEBHOOK_BLOCK_PRIVATE',
    help: 'refuse private webhook targets',
    shown: 'false',
    read: (text, name) => boolean(name, text, false),
  },
  /** The console at /console (CONTRACT 15); off, every /console path is 404. */
  console: {
    variable: 'SERVICE_CONSOLE',
    help: 'serve the console at /console',
    shown: 'true',
    read: (text, name) => boolean(name, text, true),
  },
  /** Request body bytes one process holds at once, all requests together. */
  uploadBudgetBytes: {
    variable: 'SERVICE_UPLOAD_BUDGET',
    help: 'body bytes held at once',
    shown: '268435456',
    read: (text, name) => integer(name, text, 268_435_456, MIN_UPLOAD_BUDGET_BYTES, Number.MAX_SAFE_INTEGER),
  },
} satisfies Record<string, Setting<unknown>>

type Settings = typeof SETTINGS

export type Config = { [K in keyof Settings]: ReturnType<Settings[K]['read']> }

export class ConfigError extends Error {}

/** Values given as command-line flags, by flag name (`host`, `port`, `base-url`, `db`, `database-url`). */
export type ConfigFlags = Record<string, string | undefined>

type Env = Record<string, string | undefined>

export function loadConfig(env: Env = process.env, flags: ConfigFlags = {}): Config {
  const text = (setting: Setting<unknown>) => {
    const value = (setting.flag === undefined ? undefined : flags[setting.flag]) ?? env[setting.variable]
    return value === undefined || value.trim() === '' ? undefined : value.trim()
  }
  if (text(SETTINGS.dbPath) !== undefined && text(SETTINGS.databaseUrl) !== undefined) {
    throw new ConfigError(
      `Set either ${settingName(SETTINGS.databaseUrl)} for PostgreSQL or ${settingName(SETTINGS.dbPath)} for SQLite, not both`,
    )
  }
  const config: Record<string, unknown> = {}
  for (const [key, setting] of Object.entries(SETTINGS) as Array<[keyof Settings, Setting<unknown>]>)
    config[key] = setting.read(text(setting), settingName(setting))
  return config as Config
}

/** How messages and --help name a setting: `SERVICE_PORT (--port)`, or the variable alone. */
export const settingName = (setting: Setting<unknown>) =>
  setting.flag === undefined ? setting.variable : `${setting.variable} (--${setting.flag})`

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

function baseUrl(name: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined
  let url: URL
  try {
    url = new URL(value)
  } catch {
    throw new ConfigError(`${name} must be an absolute http(s) URL, got "${value}"`)
  }
  if (
    (url.protocol !== 'http:' && url.protocol !== 'https:') ||
    url.search ||
    url.hash ||
    url.username ||
    url.password
  ) {
    throw new ConfigError(`${name} must be an http(s) origin like https://forms.example.com, got "${value}"`)
  }
  // The pages, forms and files are served from the root: a path would give links that lead nowhere.
  if (url.pathname.replace(/\/+$/, '') !== '') {
    throw new ConfigError(
      `${name} must be an origin without a path (intake serves from the root of its host; use a host of its own), got "${value}"`,
    )
  }
  return url.origin
}

/** A postgres:// or postgresql:// URL with a host. Never echoed: it may hold a password. */
function postgresUrl(name: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined
  const url = URL.parse(value)
  if (!url || (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') || url.hostname === '') {
    throw new ConfigError(
      `${name} must be a postgres:// or postgresql:// URL such as postgres://intake@db.example.com:5432/intake`,
    )
  }
  return value
}

function apiKey(name: string, value: string | undefined): string | undefined {
  if (value !== undefined && !API_KEY_PATTERN.test(value)) {
    // Never echo the value: it is meant to be a secret.
    throw new ConfigError(`${name} must be "svc_live_" followed by 48 lowercase hex characters`)
  }
  return value
}
