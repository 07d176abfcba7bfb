#!/usr/bin/env bun
import { Database } from 'bun:sqlite'
import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import {
  API_KEY_PATTERN,
  type Config,
  ConfigError,
  type ConfigFlags,
  loadConfig,
  SETTINGS,
  settingName,
} from './config.ts'
import {
  DatabaseOpenError,
  DatabaseUnreachable,
  describeUpgrade,
  openStore,
  type Store,
  type Upgrade,
} from './db/index.ts'
import { copyDatabase, openDatabase, SCHEMA_VERSION, schemaVersion } from './db/sqlite/open.ts'
import { HttpError } from './lib/errors.ts'
import { printError } from './lib/log.ts'
import { formatApiTime, formatOptionalApiTime, systemClock } from './lib/time.ts'
import { type AuthService, createAuthService } from './modules/auth/service.ts'
import { MCP_PATH } from './modules/mcp/paths.ts'
import { FirstKeyNotShown, ListenError, startServer } from './server.ts'
import { VERSION } from './version.ts'

const SETTINGS_HELP = settingsHelp()

/** The settings part of the help, from config.ts's table: `SERVICE_PORT (--port)  port to bind  [8080]`. */
function settingsHelp(): string {
  const lines = Object.values(SETTINGS).map(
    (setting) =>
      `  ${settingName(setting).padEnd(36)} ${setting.help}${'shown' in setting ? ` [${setting.shown}]` : ''}`,
  )
  return `Settings (environment; flags override):\n${lines.join('\n')}`
}

const HELP = `intake ${VERSION}: put a typed form in front of a human and get the single answer back.

Usage:
  intake [serve] [--host HOST] [--port PORT] [--base-url URL] [--db PATH | --database-url URL]
      Start the server (the default command).
  intake keys create [--account NAME] [--db PATH | --database-url URL]
  intake keys list [--json] [--db PATH | --database-url URL]
  intake keys revoke KEY_ID [--db PATH | --database-url URL]
      Create, list and revoke API keys, also while the server runs.
  intake backup FILE [--db PATH | --database-url URL]
      Write a consistent copy of the database to FILE, a new SQLite file (safe while serving).
  intake copy FROM TO
      Copy everything from one database into another, empty one: SQLite files
      and PostgreSQL databases, either way.
  intake migrate [--db PATH | --database-url URL]
      Bring the database's schema up to date and exit.
  intake mcp --url URL [--key KEY]
      Serve the MCP tools over stdio, forwarding to a running intake
      (the key from INTAKE_API_KEY; --key, when given, wins).
  intake COMMAND --help     what a command does, its options, examples
  intake --version

${SETTINGS_HELP}

Examples:
  intake                                   # serve on http://127.0.0.1:8080, data in ./data
  intake keys create --account research
  intake backup ./intake-backup.db
  intake copy ./data/intake.db ./intake-copy.db
  intake migrate
`

/** `intake COMMAND --help`: each command complete, with examples that run as written. */
const COMMAND_HELP: Record<string, string> = {
  serve: `intake serve: start the server (also what plain \`intake\` does).

Usage:
  intake [serve] [--host HOST] [--port PORT] [--base-url URL] [--db PATH | --database-url URL]

The first start on an empty database creates the account "default" and one API
key, and prints it once with where everything is and a first command to try.
Later starts print one line. The server stops cleanly on SIGTERM or SIGINT.
A database from an older intake is copied to <file>.bak-<version> and then
upgraded; one from a newer intake is refused untouched.

${SETTINGS_HELP}

Examples:
  intake serve
  intake serve --port 9000 --db ./forms.db
  SERVICE_BASE_URL=https://forms.example.com SERVICE_TRUST_PROXY=true intake serve
`,
  keys: `intake keys: create, list and revoke API keys. Works while the server runs
(they share the database file); a revoked key is refused from the next request.

Usage:
  intake keys create [--account NAME] [--db PATH | --database-url URL]
      A new key for the account (created when new; default "default"),
      printed once: only its SHA-256 is stored.
  intake keys list [--json] [--db PATH | --database-url URL]
      Every key: id, account, last four characters, created, last used, revoked.
  intake keys revoke KEY_ID [--db PATH | --database-url URL]
      Refuse the key from now on (KEY_ID from keys list).

Examples:
  intake keys create
  intake keys create --account research
  intake keys list --json
`,
  backup: `intake backup: write a consistent copy of the database to FILE, a new
SQLite file, safe while the server runs. Uploaded files live in the database,
so the copy holds everything. FILE must not exist yet; it is readable by its
owner only.

Usage:
  intake backup FILE [--db PATH | --database-url URL]

On SQLite the copy is made with VACUUM INTO. On PostgreSQL it is what
\`intake copy <url> FILE\` does: one consistent snapshot, every row, checked.

To restore SQLite: stop intake, put the copy in place of the database file (and
remove that file's -wal and -shm companions), start intake. To restore
PostgreSQL: \`intake copy FILE URL\` into an empty database.

Example:
  intake backup ./intake-backup.db
`,
  copy: `intake copy: copy everything from one intake database into another, empty
one: accounts, keys (their hashes, revoked and last-used times), forms,
responses, files, deliveries (pending ones resume on TO) and idempotency
records, with their ids.

Usage:
  intake copy FROM TO

FROM and TO are each a SQLite file path or a PostgreSQL URL,
postgres://user@host:port/database (give the password in PGPASSWORD rather
than in the URL, where ps shows it). So to move to PostgreSQL:

  intake copy ./data/intake.db postgres://intake@db.example.com:5432/intake

then start intake with --database-url; and back, into a new SQLite file:

  intake copy postgres://intake@db.example.com:5432/intake ./intake.db

FROM must be at this intake's schema (\`intake migrate\` brings it there). It
is read as one consistent snapshot, so a server may go on using it; what it
writes after the copy starts stays in FROM. TO must hold no intake data: a file
that does not exist yet (it is created readable by its owner only), or an
empty database; anything else is refused and left untouched. TO is written in
one transaction: an interrupted copy leaves it empty. Success is reported only
after the row counts and every file's bytes have been checked. On a terminal,
progress is shown on stderr.

Example:
  intake copy ./data/intake.db ./intake-copy.db
`,
  migrate: `intake migrate: bring the database's schema up to date (the migrations this
intake has and the database lacks, in one transaction) and exit. intake serve
does the same at start; this does it on its own, for example before starting
several instances, or on a database to copy from (intake copy).

Usage:
  intake migrate [--db PATH | --database-url URL]

A SQLite file is copied to <file>.bak-<version> before it is upgraded. On
PostgreSQL, take a pg_dump first. A database from a newer intake is left as
it is.

Examples:
  intake migrate
  intake migrate --db ./data/intake.db
`,
  mcp: `intake mcp: serve intake's MCP tools over stdio, for desktop MCP clients that
start a command. Every call is forwarded to a running intake's /mcp with the
key, so the tools are exactly the server's. Stdout carries the protocol.

Usage:
  intake mcp --url URL [--key KEY]

  --url   the address of a running intake, e.g. http://127.0.0.1:8080
  --key   an API key (svc_live_ and 48 hex characters). Without it the key
          is read from the environment, INTAKE_API_KEY: prefer that, since
          every user of the machine can read a command's flags (ps). When
          both are given, --key wins.

Example (a client's configuration, the key in the command's environment):
  { "mcpServers": { "intake": { "command": "intake",
      "args": ["mcp", "--url", "http://127.0.0.1:8080"],
      "env": { "INTAKE_API_KEY": "svc_live_..." } } } }
`,
}

/** A mistake in how intake was invoked: one line on stderr, exit code 2. */
class UsageError extends Error {}

function parse(argv: string[]) {
  try {
    return parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean', short: 'v' },
        host: { type: 'string' },
        port: { type: 'string' },
        'base-url': { type: 'string' },
        db: { type: 'string' },
        'database-url': { type: 'string' },
        account: { type: 'string' },
        json: { type: 'boolean' },
        url: { type: 'string' },
        key: { type: 'string' },
      },
    })
  } catch (error) {
    throw new UsageError(`${error instanceof Error ? error.message : String(error)} (see intake --help)`)
  }
}

async function run(argv: string[]): Promise<void> {
  const { values, positionals } = parse(argv)
  // `intake help keys` reads as well as `intake keys --help`.
  const helpFor = positionals[0] === 'help' ? (positionals[1] ?? '') : values.help ? (positionals[0] ?? '') : undefined
  if (helpFor !== undefined) {
    if (helpFor !== '' && !COMMAND_HELP[helpFor])
      throw new UsageError(`Unknown command "${helpFor}" (see intake --help)`)
    return void process.stdout.write(helpFor === '' ? HELP : COMMAND_HELP[helpFor]!)
  }
  if (values.version) return void console.log(VERSION)
  const flags: ConfigFlags = {
    host: values.host,
    port: values.port,
    'base-url': values['base-url'],
    db: values.db,
    'database-url': values['database-url'],
  }
  const [command = 'serve', ...rest] = positionals

  switch (command) {
    case 'serve': {
      expectArguments(rest, 0, 'serve')
      await startServer(loadConfig(process.env, flags))
      return
    }
    case 'keys':
      return keys(rest, flags, values)
    case 'backup': {
      expectArguments(rest, 1, 'backup FILE')
      return backup(rest[0]!, flags)
    }
    case 'copy': {
      expectArguments(rest, 2, 'copy FROM TO')
      // Both databases are named as arguments: a setting that names a third would be ignored.
      if (flags.db !== undefined || flags['database-url'] !== undefined)
        throw new UsageError(
          'intake copy takes FROM and TO as arguments, not --db or --database-url (see intake copy --help)',
        )
      return copy(rest[0]!, rest[1]!)
    }
    case 'migrate': {
      expectArguments(rest, 0, 'migrate')
      return migrate(flags)
    }
    case 'mcp': {
      expectArguments(rest, 0, 'mcp --url URL [--key KEY]')
      return mcp(values.url, mcpKey(values.key, process.env))
    }
    default:
      throw new UsageError(`Unknown command "${command}" (see intake --help)`)
  }
}

async function keys(args: string[], flags: ConfigFlags, values: { account?: string; json?: boolean }): Promise<void> {
  const [action, ...rest] = args
  const config = loadConfig(process.env, flags)
  switch (action) {
    case 'create': {
      expectArguments(rest, 0, 'keys create')
      const created = await withAuth(config, { mustExist: false }, (auth) => auth.createKey(values.account))
      console.log(`Created key ${created.id} for account "${created.account}".`)
      console.log(`API key: ${created.key}`)
      console.log('This key is shown once and stored only as a hash. Keep it somewhere safe.')
      return
    }
    case 'list': {
      expectArguments(rest, 0, 'keys list')
      const listed = await withAuth(config, { mustExist: true }, (auth) => auth.listKeys())
      const keys = listed.map((key) => ({
        id: key.id,
        account: key.account,
        key: `svc_live_…${key.hint}`,
        created_at: formatApiTime(key.createdAt),
        last_used_at: formatOptionalApiTime(key.lastUsedAt),
        revoked_at: formatOptionalApiTime(key.revokedAt),
      }))
      if (values.json) return console.log(JSON.stringify(keys, null, 2))
      if (keys.length === 0) return console.log('No keys.')
      printTable(
        ['ID', 'ACCOUNT', 'KEY', 'CREATED', 'LAST USED', 'REVOKED'],
        keys.map((k) => [k.id, k.account, k.key, k.created_at, k.last_used_at ?? '-', k.revoked_at ?? '-']),
      )
      return
    }
    case 'revoke': {
      expectArguments(rest, 1, 'keys revoke KEY_ID')
      const outcome = await withAuth(config, { mustExist: true }, (auth) => auth.revokeKey(rest[0]!))
      if (outcome === 'unknown') throw new UsageError(`No key with id "${rest[0]}" (see intake keys list)`)
      console.log(outcome === 'revoked' ? `Revoked key ${rest[0]}.` : `Key ${rest[0]} was already revoked.`)
      return
    }
    default:
      throw new UsageError('Expected "keys create", "keys list" or "keys revoke KEY_ID" (see intake --help)')
  }
}

async function backup(target: string, flags: ConfigFlags): Promise<void> {
  const config = loadConfig(process.env, flags)
  if (config.databaseUrl !== undefined) {
    // Never over a file: a backup is a new file.
    if (existsSync(target)) throw new UsageError(`${target} already exists; choose a new file name`)
    const summary = await copyWithProgress(config.databaseUrl, target)
    console.log(`Backed up ${summary.from} to ${summary.to}.`)
    return
  }
  requireDatabase(config.dbPath)
  // A copy of the database as it is: an older one is not upgraded first.
  const db = openDatabase(config.dbPath, { upgrade: false })
  try {
    copyDatabase(db, resolve(target))
  } catch (error) {
    if ((error as { code?: string }).code === 'EEXIST')
      throw new UsageError(`${target} already exists; choose a new file name`)
    throw new UsageError(
      `Cannot write the backup to ${target}: ${error instanceof Error ? error.message : String(error)}`,
    )
  } finally {
    db.close()
  }
  console.log(`Backed up ${resolve(config.dbPath)} to ${resolve(target)}.`)
}

async function copy(from: string, to: string): Promise<void> {
  const summary = await copyWithProgress(from, to)
  const { rows } = summary
  const parts = [
    plural(rows.accounts, 'account'),
    plural(rows.api_keys, 'key'),
    plural(rows.forms, 'form'),
    plural(rows.responses, 'response'),
    `${plural(rows.response_files, 'file')} (${formatBytes(summary.bytes)})`,
    plural(rows.deliveries, 'delivery', 'deliveries'),
    plural(rows.idempotency_keys, 'idempotency record'),
    plural(rows.events, 'event'),
  ]
  console.log(
    `Copied ${parts.slice(0, -1).join(', ')} and ${parts.at(-1)} from ${summary.from} to ${summary.to}; the counts and every file's bytes were checked.`,
  )
}

/**
 * copyData with its progress on stderr when that is a terminal. A copy that
 * failed on the way (TO left empty) is exit code 1, with its reason.
 */
async function copyWithProgress(from: string, to: string) {
  // Run only for these commands: the bundle carries the copy's code, but a server never evaluates it.
  const { copyData, CopyFailed } = await import('./db/copy/index.ts')
  const progress = process.stderr.isTTY ? progressLine() : undefined
  try {
    return await copyData(from, to, { progress: progress?.update })
  } catch (error) {
    if (!(error instanceof CopyFailed)) throw error
    progress?.clear()
    printError(`intake: ${error.message}`)
    process.exit(1)
  } finally {
    progress?.clear()
  }
}

/** One line on a terminal, redrawn in place at most five times a second: done of the total, the rate, the time left. */
function progressLine() {
  const started = performance.now()
  let drawnAt = -Infinity
  let drawn = false
  return {
    update(p: { phase: 'copy' | 'check'; rows: number; totalRows: number; bytes: number; totalBytes: number }) {
      const now = performance.now()
      if (now - drawnAt < 200) return
      drawnAt = now
      const seconds = (now - started) / 1000
      let line: string
      if (p.phase === 'copy') {
        // A row counts as a kilobyte: forms and answers are about that, file chunks are counted by their bytes.
        const done = (p.rows * 1024 + p.bytes) / Math.max(1, p.totalRows * 1024 + p.totalBytes)
        const left = seconds >= 1 && done > 0 ? formatDuration((seconds * (1 - done)) / done) : '…'
        const rate = seconds > 0 ? `${Math.round(p.rows / seconds).toLocaleString('en-US')} rows/s` : ''
        const files = p.totalBytes > 0 ? `, ${formatBytes(p.bytes)} of ${formatBytes(p.totalBytes)}` : ''
        line = `Copying: ${p.rows.toLocaleString('en-US')} of ${p.totalRows.toLocaleString('en-US')} rows${files}, ${rate}, ${left} left`
      } else {
        line = `Checking the copy: ${formatBytes(p.bytes)} of ${formatBytes(p.totalBytes)} of files compared`
      }
      process.stderr.write(`\r${line}\x1b[K`)
      drawn = true
    },
    clear() {
      if (drawn) process.stderr.write('\r\x1b[K')
      drawn = false
    },
  }
}

async function migrate(flags: ConfigFlags): Promise<void> {
  const config = loadConfig(process.env, flags)
  if (config.databaseUrl !== undefined) {
    const [{ describeDatabaseUrl, migratePostgres }, { POSTGRES_SCHEMA_VERSION }] = await Promise.all([
      import('./db/postgres/store.ts'),
      import('./db/postgres/migrations.ts'),
    ])
    const { from, to } = await migratePostgres(config.databaseUrl, { log: (line) => console.error(line) })
    return console.log(
      describeMigration(describeDatabaseUrl(config.databaseUrl), { from, to, current: POSTGRES_SCHEMA_VERSION }),
    )
  }
  const path = resolve(config.dbPath)
  const from = existsSync(path) ? readSchemaVersion(path) : undefined
  let upgrade: Upgrade | undefined
  const db = openDatabase(path, { onUpgrade: (done) => (upgrade = done) })
  const to = schemaVersion(db)
  db.close()
  if (from === undefined) return console.log(`Created the database at ${path} (schema ${to}).`)
  const kept = upgrade?.backupPath ? ` The database as it was is kept at ${upgrade.backupPath}.` : ''
  console.log(`${describeMigration(path, { from: upgrade?.from ?? from, to, current: SCHEMA_VERSION })}${kept}`)
}

/** The schema of the SQLite file at `path` as it is, read without writing; 0 for an empty file. */
function readSchemaVersion(path: string): number {
  let db: Database | undefined
  try {
    db = new Database(path, { readwrite: true, create: false })
    db.exec('PRAGMA query_only = ON')
    return schemaVersion(db)
  } catch {
    // Not a database: opening it says so.
    return 0
  } finally {
    db?.close()
  }
}

/** What `intake migrate` did, in one line. */
function describeMigration(
  location: string,
  { from, to, current }: { from: number; to: number; current: number },
): string {
  if (from === 0) return `Created intake's schema in ${location} (schema ${to}).`
  if (from < to) return `Migrated ${location} from schema ${from} to ${to}.`
  if (to > current)
    return `${location} is at schema ${to}, from a newer intake that this one may still run on; nothing to do.`
  return `${location} is up to date (schema ${to}).`
}

/** Where `intake mcp` reads its key when --key is not given: a flag is visible to everyone on the machine (ps). */
const MCP_KEY_VARIABLE = 'INTAKE_API_KEY'

/** The key `intake mcp` uses and where it came from: --key when given, else the environment. */
function mcpKey(
  flag: string | undefined,
  env: Record<string, string | undefined>,
): { key: string | undefined; from: string } {
  if (flag !== undefined) return { key: flag, from: '--key' }
  const fromEnv = env[MCP_KEY_VARIABLE]?.trim()
  return { key: fromEnv === '' ? undefined : fromEnv, from: MCP_KEY_VARIABLE }
}

function mcp(url: string | undefined, { key, from }: { key: string | undefined; from: string }): void {
  if (!url || !/^https?:\/\/[^\s]+$/.test(url) || !URL.canParse(url)) {
    throw new UsageError('intake mcp needs --url, the http(s) address of a running intake (see intake --help)')
  }
  if (!key)
    throw new UsageError(
      `intake mcp needs an API key: set ${MCP_KEY_VARIABLE} (or give --key) to svc_live_ followed by 48 hex characters`,
    )
  // Never echo a key, even a wrong one.
  if (!API_KEY_PATTERN.test(key))
    throw new UsageError(`intake mcp needs an API key, and ${from} is not one: svc_live_ followed by 48 hex characters`)
  // Loaded only for this command: serving never carries the MCP client and stdio code.
  import('./modules/mcp/stdio.ts')
    .then(({ serveMcpOverStdio }) => serveMcpOverStdio(url, key))
    .catch((error) => {
      console.error(`intake: cannot reach ${url}${MCP_PATH}: ${error instanceof Error ? error.message : String(error)}`)
      process.exit(2)
    })
}

/** Runs `work` with the keys of the store the settings name, closing it after. */
async function withAuth<T>(
  config: Config,
  { mustExist }: { mustExist: boolean },
  work: (auth: AuthService) => Promise<T>,
): Promise<T> {
  if (mustExist && config.databaseUrl === undefined) requireDatabase(config.dbPath)
  const store = await openCommandStore(config)
  try {
    return await work(createAuthService(store, systemClock))
  } finally {
    await store.close()
  }
}

/** The store for a command: stdout is the command's answer (scripts read it), so notices go to stderr. */
function openCommandStore(config: Config): Promise<Store> {
  return openStore(config, {
    onUpgrade: (upgrade) => console.error(describeUpgrade(upgrade)),
    log: (line) => console.error(line),
  })
}

function requireDatabase(dbPath: string) {
  if (!existsSync(dbPath)) throw new UsageError(`No database at ${resolve(dbPath)} (set --db or SERVICE_DB_PATH)`)
}

function expectArguments(args: string[], count: number, usage: string) {
  if (args.length !== count) throw new UsageError(`Usage: intake ${usage} (see intake --help)`)
}

const plural = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`

/** 1.2 MB, 340 kB, 12 bytes (decimal units, as disks are sold). */
function formatBytes(bytes: number): string {
  if (bytes < 1000) return plural(bytes, 'byte')
  const units = ['kB', 'MB', 'GB', 'TB']
  let value = bytes / 1000
  let unit = 0
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000
    unit++
  }
  return `${value < 10 ? value.toFixed(1) : Math.round(value)} ${units[unit]}`
}

/** 45s, 3m 07s, 2h 05m. */
function formatDuration(seconds: number): string {
  const s = Math.round(seconds)
  if (s < 60) return `${s}s`
  if (s < 3600) return `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s`
  return `${Math.floor(s / 3600)}h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`
}

function printTable(headers: string[], rows: string[][]) {
  const widths = headers.map((header, i) => Math.max(header.length, ...rows.map((row) => row[i]!.length)))
  for (const row of [headers, ...rows])
    console.log(
      row
        .map((cell, i) => cell.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    )
}

run(process.argv.slice(2)).catch((error) => {
  if (error instanceof DatabaseUnreachable) {
    printError(`intake: ${error.message}`)
    process.exit(1)
  }
  if (
    error instanceof UsageError ||
    error instanceof ConfigError ||
    error instanceof DatabaseOpenError ||
    error instanceof ListenError ||
    error instanceof HttpError
  ) {
    printError(`intake: ${error.message}`)
    process.exit(2)
  }
  if (error instanceof FirstKeyNotShown) {
    printError(`intake: ${error.message}`)
    process.exit(1)
  }
  // Anything else (a database that fails mid-start, a fault of intake's): one line, exit 1.
  printError(`intake: ${error instanceof Error ? error.message : String(error)}`)
  process.exit(1)
})
