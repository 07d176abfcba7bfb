/**
 * The PostgreSQL databases of one bench run (BENCH_DATABASE_URL): created
 * fresh on the server that URL names (`CREATE DATABASE intake_bench_<random>`
 * for intake, `..._<role>` for the others: bench/pg-write-limit.ts's, the list
 * pages') and dropped on the way out,
 * whatever happens (an exit hook of the bench's state drops them
 * synchronously, by running this file: `bun bench/pg.ts drop URL NAME...`).
 */

import { randomBytes } from 'node:crypto'
import { SQL } from 'bun'
import type { BenchState } from '../test/e2e/intake-child.ts'
import { BenchError } from './lib.ts'

/** `url` with its password hidden, for printing. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url)
    if (u.password) u.password = '***'
    return u.toString()
  } catch {
    return '(a URL that does not parse)'
  }
}

/** The URL of database `name` on the server of `url` (same user, password, host, port and parameters). */
export function databaseUrl(url: string, name: string): string {
  const u = new URL(url)
  u.pathname = `/${name}`
  return u.toString()
}

export interface BenchDatabases {
  /** The server's URL as given (BENCH_DATABASE_URL). */
  server: string
  /** The first database's name, intake_bench_<random>; the others are named <that>_<role>. */
  name: string
  /** The URL of each database, by role (the first role's is `name`). */
  urls: Record<string, string>
  /** Drops them all (idempotent). */
  drop(): Promise<void>
}

const dropStatement = (name: string) => `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`

async function dropNow(server: string, names: string[]): Promise<void> {
  const admin = new SQL({ url: server, max: 1, connectionTimeout: 10 })
  try {
    for (const name of names) await admin.unsafe(dropStatement(name))
  } finally {
    await admin.close()
  }
}

/** A fresh database per role on the server of `server`: intake_bench_<random> for the first, intake_bench_<random>_<role> for the others. */
export async function createBenchDatabases(
  state: BenchState,
  server: string,
  roles: string[],
): Promise<BenchDatabases> {
  if (!/^postgres(ql)?:\/\//.test(server))
    throw new BenchError(`BENCH_DATABASE_URL must be a postgres:// URL, not ${redactUrl(server)}`)
  const name = `intake_bench_${randomBytes(5).toString('hex')}`
  const names = roles.map((role, i) => (i === 0 ? name : `${name}_${role}`))
  // Should the run end in any other way than through drop() below, drop them on the way out.
  const hook = () => {
    const out = Bun.spawnSync([process.execPath, import.meta.path, 'drop', server, ...names], {
      stdout: 'pipe',
      stderr: 'pipe',
      env: process.env,
    })
    if (out.exitCode !== 0)
      console.error(`could not drop ${names.join(', ')} on ${redactUrl(server)}: ${out.stderr.toString().trim()}`)
  }
  state.exitHooks.add(hook)
  const admin = new SQL({ url: server, max: 1, connectionTimeout: 10 })
  try {
    for (const n of names) await admin.unsafe(`CREATE DATABASE "${n}"`)
  } catch (error) {
    throw new BenchError(
      `CREATE DATABASE on ${redactUrl(server)} failed: ${error instanceof Error ? error.message : String(error)}`,
    )
  } finally {
    await admin.close()
  }
  let dropped = false
  return {
    server,
    name,
    urls: Object.fromEntries(roles.map((role, i) => [role, databaseUrl(server, names[i]!)])),
    async drop() {
      if (dropped) return
      await dropNow(server, names)
      dropped = true
      state.exitHooks.delete(hook)
    },
  }
}

if (import.meta.main) {
  const [command, server, ...names] = process.argv.slice(2)
  if (command !== 'drop' || !server || names.length === 0 || names.some((n) => !/^intake_bench_[0-9a-z_]+$/.test(n))) {
    console.error('usage: bun bench/pg.ts drop <postgres-url> intake_bench_<...>...')
    process.exit(2)
  }
  await dropNow(server, names)
}
