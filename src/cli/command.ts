import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import type { ConfigFlags } from '../config.ts'

/** One sub-command: its help (generated from these fields, see help.ts) and what it does. */
export interface Command {
  /** The word after `intake`. */
  name: string
  /** What it does, after `intake NAME: ` at the top of its help. */
  about: string
  /** Its usage lines, each after `intake `, with what that form does when the command has several. */
  usage: Array<{ line: string; does?: string }>
  /** What `intake --help` says of it, under its usage lines. */
  summary: string
  /** The rest of its help, between the usage and the examples. */
  details?: string
  /** Whether its help lists the settings (those it reads are all of them). */
  listsSettings?: boolean
  /** Command lines that run as written (a test runs each); the first also appears in `intake --help`. */
  examples: string[]
  /** Replaces "Example:" as the examples' heading, for an example that is not a command line. */
  examplesHeading?: string
  run(input: CommandInput): Promise<void> | void
}

/** What the command line gave a command: its arguments after its name, the settings' flags, and its own options. */
interface CommandInput {
  args: string[]
  flags: ConfigFlags
  options: { account?: string; operator?: boolean; json?: boolean; url?: string; key?: string }
}

/** A mistake in how intake was invoked: one line on stderr, exit code 2. */
export class UsageError extends Error {}

export function expectArguments(args: string[], count: number, usage: string) {
  if (args.length !== count) throw new UsageError(`Usage: intake ${usage} (see intake --help)`)
}

export function requireDatabase(dbPath: string) {
  if (!existsSync(dbPath)) throw new UsageError(`No database at ${resolve(dbPath)} (set --db or SERVICE_DB_PATH)`)
}
