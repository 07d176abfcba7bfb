#!/usr/bin/env bun
import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { API_KEY_PATTERN, ConfigError, loadConfig, type Config, type ConfigFlags } from './config.ts'
import { DatabaseOpenError, DatabaseUnreachable, describeUpgrade, openStore, type Store } from './db/index.ts'
import { copyDatabase, openDatabase } from './db/sqlite/open.ts'
import { HttpError } from './lib/errors.ts'
import { formatApiTime, formatOptionalApiTime, systemClock } from './lib/time.ts'
import { createAuthService, type AuthService } from './modules/auth/service.ts'
import { MCP_PATH } from './modules/mcp/paths.ts'
import { printError } from './lib/log.ts'
import { FirstKeyNotShown, ListenError, startServer } from './server.ts'
import { VERSION } from './version.ts'

const SETTINGS = `Settings (environment; flags override):
  SERVICE_HOST (--host)              address to bind                [127.0.0.1]
  SERVICE_PORT (--port)              port to bind, 0 = any free one [8080]
  SERVICE_BASE_URL (--base-url)      origin used in form URLs       [http://localhost:<port>]
  SERVICE_DB_PATH (--db)             SQLite file                    [./data/intake.db]
  SERVICE_DATABASE_URL (--database-url)  postgres://user@host:port/db: use PostgreSQL
                                     instead (password from PGPASSWORD)
  SERVICE_WEBHOOK_TIMEOUT            seconds per webhook attempt    [10]
  SERVICE_WEBHOOK_MAX_RETRIES        retries after the first        [3]
  SERVICE_API_KEY                    register this svc_live_ key at start
  SERVICE_TRUST_PROXY                client IP from X-Forwarded-For [false]
  SERVICE_RATE_LIMIT                 API requests/minute/key, 0 = off [600]
  SERVICE_PUBLIC_RATE_LIMIT          form posts/minute/IP, 0 = off  [60]
  SERVICE_WEBHOOK_BLOCK_PRIVATE      refuse private webhook targets [false]
  SERVICE_UPLOAD_BUDGET              body bytes held at once        [268435456]`

const HELP = `intake ${VERSION}: put a typed form in front of a human and get the single answer back.

Usage:
  intake [serve] [--host HOST] [--port PORT] [--base-url URL] [--db PATH]
      Start the server (the default command).
  intake keys create [--account NAME] [--db PATH]
  intake keys list [--json] [--db PATH]
  intake keys revoke KEY_ID [--db PATH]
      Create, list and revoke API keys, also while the server runs.
  intake backup FILE [--db PATH]
      Write a consistent copy of the database to FILE (safe while serving).
  intake mcp --url URL --key KEY
      Serve the MCP tools over stdio, forwarding to a running intake.
  intake COMMAND --help     what a command does, its options, examples
  intake --version

${SETTINGS}

Examples:
  intake                                   # serve on http://127.0.0.1:8080, data in ./data
  intake keys create --account research
  intake backup ./intake-backup.db
`

/** `intake COMMAND --help`: each command complete, with examples that run as written. */
const COMMAND_HELP: Record<string, string> = {
  serve: `intake serve: start the server (also what plain \`intake\` does).

Usage:
  intake [serve] [--host HOST] [--port PORT] [--base-url URL] [--db PATH]

The first start on an empty database creates the account "default" and one API
key, and prints it once with where everything is and a first command to try.
Later starts print one line. The server stops cleanly on SIGTERM or SIGINT.
A database from an older intake is copied to <file>.bak-<version> and then
upgraded; one from a newer intake is refused untouched.

${SETTINGS}

Examples:
  intake serve
  intake serve --port 9000 --db ./forms.db
  SERVICE_BASE_URL=https://forms.example.com SERVICE_TRUST_PROXY=true intake serve
`,
  keys: `intake keys: create, list and revoke API keys. Works while the server runs
(they share the database file); a revoked key is refused from the next request.

Usage:
  intake keys create [--account NAME] [--db PATH]
      A new key for the account (created when new; default "default"),
      printed once: only its SHA-256 is stored.
  intake keys list [--json] [--db PATH]
      Every key: id, account, last four characters, created, last used, revoked.
  intake keys revoke KEY_ID [--db PATH]
      Refuse the key from now on (KEY_ID from keys list).

Examples:
  intake keys create
  intake keys create --account research
  intake keys list --json
`,
  backup: `intake backup: write a consistent copy of the database to FILE, safe while
the server runs (SQLite VACUUM INTO). FILE must not exist yet. Uploaded files
live in the database, so the copy holds everything.

Usage:
  intake backup FILE [--db PATH]

To restore: stop intake, put the copy in place of the database file (and remove
that file's -wal and -shm companions), start intake.

Example:
  intake backup ./intake-backup.db
`,
  mcp: `intake mcp: serve intake's MCP tools over stdio, for desktop MCP clients that
start a command. Every call is forwarded to a running intake's /mcp with the
key, so the tools are exactly the server's. Stdout carries the protocol.

Usage:
  intake mcp --url URL --key KEY

  --url   the address of a running intake, e.g. http://127.0.0.1:8080
  --key   an API key (svc_live_ and 48 hex characters)

Example (a client's configuration):
  { "mcpServers": { "intake": { "command": "intake",
      "args": ["mcp", "--url", "http://127.0.0.1:8080", "--key", "svc_live_..."] } } }
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
    if (helpFor !== '' && !COMMAND_HELP[helpFor]) throw new UsageError(`Unknown command "${helpFor}" (see intake --help)`)
    return void process.stdout.write(helpFor === '' ? HELP : COMMAND_HELP[helpFor]!)
  }
  if (values.version) return void console.log(VERSION)
  const flags: ConfigFlags = { host: values.host, port: values.port, baseUrl: values['base-url'], db: values.db, databaseUrl: values['database-url'] }
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
    case 'mcp': {
      expectArguments(rest, 0, 'mcp --url URL --key KEY')
      return mcp(values.url, values.key)
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
      printTable(['ID', 'ACCOUNT', 'KEY', 'CREATED', 'LAST USED', 'REVOKED'], keys.map((k) => [
        k.id, k.account, k.key, k.created_at, k.last_used_at ?? '-', k.revoked_at ?? '-',
      ]))
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

function backup(target: string, flags: ConfigFlags): void {
  const config = loadConfig(process.env, flags)
  requireDatabase(config.dbPath)
  // A copy of the database as it is: an older one is not upgraded first.
  const db = openDatabase(config.dbPath, { upgrade: false })
  try {
    copyDatabase(db, resolve(target))
  } catch (error) {
    if ((error as { code?: string }).code === 'EEXIST') throw new UsageError(`${target} already exists; choose a new file name`)
    throw new UsageError(`Cannot write the backup to ${target}: ${error instanceof Error ? error.message : String(error)}`)
  } finally {
    db.close()
  }
  console.log(`Backed up ${resolve(config.dbPath)} to ${resolve(target)}.`)
}

function mcp(url: string | undefined, key: string | undefined): void {
  if (!url || !/^https?:\/\/[^\s]+$/.test(url) || !URL.canParse(url)) {
    throw new UsageError('intake mcp needs --url, the http(s) address of a running intake (see intake --help)')
  }
  // Never echo a key, even a wrong one.
  if (!key || !API_KEY_PATTERN.test(key)) throw new UsageError('intake mcp needs --key, an API key: svc_live_ followed by 48 hex characters')
  // Loaded only for this command: serving never carries the MCP client and stdio code.
  import('./modules/mcp/stdio.ts')
    .then(({ serveMcpOverStdio }) => serveMcpOverStdio(url, key))
    .catch((error) => {
      console.error(`intake: cannot reach ${url}${MCP_PATH}: ${error instanceof Error ? error.message : String(error)}`)
      process.exit(2)
    })
}

/** Runs `work` with the keys of the store the settings name, closing it after. */
async function withAuth<T>(config: Config, { mustExist }: { mustExist: boolean }, work: (auth: AuthService) => Promise<T>): Promise<T> {
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

function printTable(headers: string[], rows: string[][]) {
  const widths = headers.map((header, i) => Math.max(header.length, ...rows.map((row) => row[i]!.length)))
  for (const row of [headers, ...rows]) console.log(row.map((cell, i) => cell.padEnd(widths[i]!)).join('  ').trimEnd())
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
  throw error
})
