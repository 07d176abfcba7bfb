import { printError } from '../lib/log.ts'
import { type Command, expectArguments, UsageError } from './command.ts'
import { formatBytes, formatDuration, plural } from './format.ts'

export const copyCommand: Command = {
  name: 'copy',
  about: `copy everything from one intake database into another, empty
one: accounts, keys (their hashes, revoked and last-used times), forms,
responses, files, deliveries (pending ones resume on TO) and idempotency
records, with their ids.`,
  usage: [{ line: 'copy FROM TO' }],
  summary: `Copy everything from one database into another, empty one: SQLite files
and PostgreSQL databases, either way.`,
  details: `FROM and TO are each a SQLite file path or a PostgreSQL URL,
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
progress is shown on stderr.`,
  examples: ['intake copy ./data/intake.db ./intake-copy.db'],
  async run({ args, flags }) {
    expectArguments(args, 2, 'copy FROM TO')
    // Both databases are named as arguments: a setting that names a third would be ignored.
    if (flags.db !== undefined || flags['database-url'] !== undefined)
      throw new UsageError(
        'intake copy takes FROM and TO as arguments, not --db or --database-url (see intake copy --help)',
      )
    const summary = await copyWithProgress(args[0]!, args[1]!)
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
  },
}

/**
 * copyData with its progress on stderr when that is a terminal. A copy that
 * failed on the way (TO left empty) is exit code 1, with its reason.
 */
export async function copyWithProgress(from: string, to: string) {
  // Run only for these commands: the bundle carries the copy's code, but a server never evaluates it.
  const { copyData, CopyFailed } = await import('../db/copy/index.ts')
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
