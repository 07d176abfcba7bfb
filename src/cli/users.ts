import { type Config, loadConfig, resolveBaseUrl } from '../config.ts'
import { describeUpgrade } from '../db/driver.ts'
import { formatOptionalApiTime, systemClock } from '../lib/time.ts'
import { type ConsoleService, createConsoleService } from '../modules/console/service.ts'
import { openStore } from '../stores.ts'
import { type Command, expectArguments, requireDatabase, UsageError } from './command.ts'
import { printTable } from './format.ts'

export const usersCommand: Command = {
  name: 'users',
  about: `add, reset, list and remove the people who sign in to the console
(/console). Works while the server runs (they share the database).`,
  usage: [
    {
      line: 'users add EMAIL (--account NAME | --operator) [--db PATH | --database-url URL]',
      does: `A member who sees one account, or an operator who sees them all.
Prints a one-time link where they set their password (valid 24 hours,
stored only as a hash).`,
    },
    {
      line: 'users reset EMAIL [--db PATH | --database-url URL]',
      does: `A new one-time link for a forgotten password; earlier links stop
working, and setting the password ends the user's sessions.`,
    },
    {
      line: 'users list [--json] [--db PATH | --database-url URL]',
      does: 'Every user: email, account (or every account), password set, last seen.',
    },
    {
      line: 'users remove EMAIL [--db PATH | --database-url URL]',
      does: 'Signs the user out everywhere and removes them; their account stays.',
    },
  ],
  summary: 'Add, reset, list and remove console users, also while the server runs.',
  details: 'Links start with SERVICE_BASE_URL (--base-url): set it as the server has it.',
  examples: [
    'intake users add ops@example.com --operator',
    'intake users add ada@example.com --account research',
    'intake users list --json',
  ],
  async run({ args, flags, options }) {
    const [action, ...rest] = args
    const config = loadConfig(process.env, flags)
    switch (action) {
      case 'add': {
        expectArguments(rest, 1, 'users add EMAIL (--account NAME | --operator)')
        if ((options.account === undefined) === (options.operator !== true))
          throw new UsageError('Give either --account NAME or --operator (see intake users --help)')
        const role = options.operator ? { operator: true as const } : { account: options.account! }
        const { user, link } = await withUsers(config, (users) => users.addUser(rest[0]!, role))
        console.log(
          user.accountId === null
            ? `Added operator ${user.email}.`
            : `Added ${user.email}, a member of account "${options.account}".`,
        )
        printLink(link)
        return
      }
      case 'reset': {
        expectArguments(rest, 1, 'users reset EMAIL')
        const link = await withUsers(config, (users) => users.resetUser(rest[0]!))
        if (link === undefined) throw new UsageError(`No user has the email "${rest[0]}" (see intake users list)`)
        printLink(link)
        return
      }
      case 'list': {
        expectArguments(rest, 0, 'users list')
        const listed = await withUsers(config, (users) => users.listUsers())
        const users = listed.map((user) => ({
          email: user.email,
          operator: user.accountId === null,
          account: user.account,
          password_set: user.passwordSet,
          last_seen_at: formatOptionalApiTime(user.lastSeenAt),
        }))
        if (options.json) return console.log(JSON.stringify(users, null, 2))
        if (users.length === 0) return console.log('No users.')
        printTable(
          ['EMAIL', 'SEES', 'PASSWORD SET', 'LAST SEEN'],
          users.map((u) => [
            u.email,
            u.operator ? 'every account' : `account ${u.account}`,
            u.password_set ? 'yes' : 'no',
            u.last_seen_at ?? '-',
          ]),
        )
        return
      }
      case 'remove': {
        expectArguments(rest, 1, 'users remove EMAIL')
        if (!(await withUsers(config, (users) => users.removeUser(rest[0]!))))
          throw new UsageError(`No user has the email "${rest[0]}" (see intake users list)`)
        console.log(`Removed ${rest[0]!.trim().toLowerCase()}; their sessions have ended.`)
        return
      }
      default:
        throw new UsageError(
          'Expected "users add", "users reset", "users list" or "users remove" (see intake users --help)',
        )
    }
  },
}

function printLink(link: string) {
  console.log(`Set-up link: ${link}`)
  console.log('It works once, for 24 hours, and is shown only now. Send it to the person it is for.')
}

/** Runs `work` with the console users of the store the settings name, closing it after. */
async function withUsers<T>(config: Config, work: (users: ConsoleService) => Promise<T>): Promise<T> {
  if (config.databaseUrl === undefined) requireDatabase(config.dbPath)
  // stdout is the command's answer (scripts read it): notices go to stderr.
  const store = await openStore(config, {
    onUpgrade: (upgrade) => console.error(describeUpgrade(upgrade)),
    log: (line) => console.error(line),
  })
  try {
    return await work(createConsoleService(store, systemClock, () => resolveBaseUrl(config, config.port)))
  } finally {
    await store.close()
  }
}
