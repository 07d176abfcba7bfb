import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import { loadConfig } from '../config.ts'
import { copyDatabase, openDatabase } from '../db/sqlite/open.ts'
import { type Command, expectArguments, requireDatabase, UsageError } from './command.ts'
import { copyWithProgress } from './copy.ts'

export const backupCommand: Command = {
  name: 'backup',
  about: `write a consistent copy of the database to FILE, a new
SQLite file, safe while the server runs. Uploaded files live in the database,
so the copy holds everything. FILE must not exist yet; it is readable by its
owner only.`,
  usage: [{ line: 'backup FILE [--db PATH | --database-url URL]' }],
  summary: 'Write a consistent copy of the database to FILE, a new SQLite file (safe while serving).',
  details: `On SQLite the copy is made with VACUUM INTO. On PostgreSQL it is what
\`intake copy <url> FILE\` does: one consistent snapshot, every row, checked.

To restore SQLite: stop intake, put the copy in place of the database file (and
remove that file's -wal and -shm companions), start intake. To restore
PostgreSQL: \`intake copy FILE URL\` into an empty database.`,
  examples: ['intake backup ./intake-backup.db'],
  async run({ args, flags }) {
    expectArguments(args, 1, 'backup FILE')
    const target = args[0]!
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
  },
}
