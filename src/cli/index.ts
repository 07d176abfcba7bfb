import { parseArgs } from 'node:util'
import { ConfigError, type ConfigFlags, SETTINGS } from '../config.ts'
import { DatabaseOpenError, DatabaseUnreachable } from '../db/driver.ts'
import { HttpError } from '../lib/errors.ts'
import { printError } from '../lib/log.ts'
import { FirstKeyNotShown, ListenError } from '../server.ts'
import { VERSION } from '../version.ts'
import { backupCommand } from './backup.ts'
import { type Command, UsageError } from './command.ts'
import { copyCommand } from './copy.ts'
import { commandHelp, generalHelp } from './help.ts'
import { keysCommand } from './keys.ts'
import { mcpCommand } from './mcp.ts'
import { migrateCommand } from './migrate.ts'
import { serveCommand } from './serve.ts'
import { usersCommand } from './users.ts'

/** Every command, in the order `intake --help` lists them; serve is the default. */
const COMMANDS: readonly Command[] = [
  serveCommand,
  keysCommand,
  usersCommand,
  backupCommand,
  copyCommand,
  migrateCommand,
  mcpCommand,
]

/** Every flag is a setting's (from config.ts's table) or one command's own option. */
const OPTIONS = {
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'v' },
  account: { type: 'string' },
  operator: { type: 'boolean' },
  json: { type: 'boolean' },
  url: { type: 'string' },
  key: { type: 'string' },
} as const

const SETTING_FLAGS = Object.values(SETTINGS).flatMap((setting) => ('flag' in setting ? [setting.flag] : []))

function parse(argv: string[]) {
  try {
    return parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        ...OPTIONS,
        ...Object.fromEntries(SETTING_FLAGS.map((flag) => [flag, { type: 'string' as const }])),
      },
    })
  } catch (error) {
    throw new UsageError(`${error instanceof Error ? error.message : String(error)} (see intake --help)`)
  }
}

const findCommand = (name: string) => COMMANDS.find((command) => command.name === name)

async function run(argv: string[]): Promise<void> {
  const { values, positionals } = parse(argv)
  // `intake help keys` reads as well as `intake keys --help`.
  const helpFor = positionals[0] === 'help' ? (positionals[1] ?? '') : values.help ? (positionals[0] ?? '') : undefined
  if (helpFor !== undefined) {
    if (helpFor === '') return void process.stdout.write(generalHelp(COMMANDS))
    const command = findCommand(helpFor)
    if (!command) throw new UsageError(`Unknown command "${helpFor}" (see intake --help)`)
    return void process.stdout.write(commandHelp(command))
  }
  if (values.version) return void console.log(VERSION)
  const flags: ConfigFlags = Object.fromEntries(
    SETTING_FLAGS.map((flag) => [flag, (values as Record<string, unknown>)[flag] as string | undefined]),
  )
  const [name = 'serve', ...args] = positionals
  const command = findCommand(name)
  if (!command) throw new UsageError(`Unknown command "${name}" (see intake --help)`)
  await command.run({
    args,
    flags,
    options: {
      account: values.account,
      operator: values.operator,
      json: values.json,
      url: values.url,
      key: values.key,
    },
  })
}

/** Runs the command line; every failure is one line on stderr and an exit code: 2 for a mistake to fix, else 1. */
export function runCommandLine(argv: string[]): void {
  run(argv).catch((error) => {
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
}
