import { type Config, loadConfig } from '../config.ts'
import { describeUpgrade } from '../db/driver.ts'
import { formatApiTime, formatOptionalApiTime, systemClock } from '../lib/time.ts'
import { type AuthService, createAuthService } from '../modules/auth/service.ts'
import { openStore, type Store } from '../stores.ts'
import { type Command, expectArguments, requireDatabase, UsageError } from './command.ts'
import { printTable } from './format.ts'

export const keysCommand: Command = {
  name: 'keys',
  about: `create, list and revoke API keys. Works while the server runs
(they share the database file); a revoked key is refused from the next request.`,
  usage: [
    {
      line: 'keys create [--account NAME] [--db PATH | --database-url URL]',
      does: `A new key for the account (created when new; default "default"),
printed once: only its SHA-256 is stored.`,
    },
    {
      line: 'keys list [--json] [--db PATH | --database-url URL]',
      does: 'Every key: id, account, last four characters, created, last used, revoked.',
    },
    {
      line: 'keys revoke KEY_ID [--db PATH | --database-url URL]',
      does: 'Refuse the key from now on (KEY_ID from keys list).',
    },
  ],
  summary: 'Create, list and revoke API keys, also while the server runs.',
  examples: ['intake keys create --account research', 'intake keys create', 'intake keys list --json'],
  async run({ args, flags, options }) {
    const [action, ...rest] = args
    const config = loadConfig(process.env, flags)
    switch (action) {
      case 'create': {
        expectArguments(rest, 0, 'keys create')
        const created = await withAuth(config, { mustExist: false }, (auth) => auth.createKey(options.account))
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
        if (options.json) return console.log(JSON.stringify(keys, null, 2))
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
  },
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
