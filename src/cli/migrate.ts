import { Database } from 'bun:sqlite'
import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import { loadConfig } from '../config.ts'
import type { Upgrade } from '../db/driver.ts'
import { openDatabase, SCHEMA_VERSION, schemaVersion } from '../db/sqlite/open.ts'
import { type Command, expectArguments } from './command.ts'

export const migrateCommand: Command = {
  name: 'migrate',
  about: `bring the database's schema up to date (the migrations this
intake has and the database lacks, in one transaction) and exit. intake serve
does the same at start; this does it on its own, for example before starting
several instances, or on a database to copy from (intake copy).`,
  usage: [{ line: 'migrate [--db PATH | --database-url URL]' }],
  summary: "Bring the database's schema up to date and exit.",
  details: `A SQLite file is copied to <file>.bak-<version> before it is upgraded. On
PostgreSQL, take a pg_dump first. A database from a newer intake is left as
it is.`,
  examples: ['intake migrate', 'intake migrate --db ./data/intake.db'],
  async run({ args, flags }) {
    expectArguments(args, 0, 'migrate')
    const config = loadConfig(process.env, flags)
    if (config.databaseUrl !== undefined) {
      const [{ migratePostgres }, { describeDatabaseUrl }, { POSTGRES_SCHEMA_VERSION }] = await Promise.all([
        import('../db/postgres/driver.ts'),
        import('../db/postgres/connect.ts'),
        import('../db/postgres/migrations.ts'),
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
  },
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
