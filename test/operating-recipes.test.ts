/**
 * Recipes of docs/backups.md run as written (test/doc-blocks.ts extracts
 * them): the nightly backup script.
 *
 * The script runs in a temp folder beside everything the guide tells an
 * operator to keep in the backup folder, with the real `intake backup` (from
 * source) and a `date` that says which night it is, so the names it gives and
 * the files it prunes are its own.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { operatingBlock } from './doc-blocks.ts'
import { childEnv, PROJECT_ROOT } from './e2e/binary.ts'

const NIGHTLY_SCRIPT = operatingBlock('nightly-backup')

let root = ''
let bin = ''
let database = ''

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'intake-recipes-'))
  bin = join(root, 'bin')
  mkdirSync(bin)
  // The real `intake` (from source), and a `date` that answers with the night the test says.
  writeFileSync(
    join(bin, 'intake'),
    `#!/bin/sh\nexec '${process.execPath}' '${join(PROJECT_ROOT, 'src', 'main.ts')}' "$@"\n`,
    { mode: 0o755 },
  )
  const realDate = Bun.which('date')
  if (!realDate) throw new Error('no date command on PATH')
  writeFileSync(join(bin, 'date'), `#!/bin/sh\nexec '${realDate}' -d "@$INTAKE_TEST_NOW" "$@"\n`, { mode: 0o755 })
  writeFileSync(join(root, 'intake-backup'), NIGHTLY_SCRIPT, { mode: 0o755 })
  const data = join(root, 'data')
  mkdirSync(data)
  database = join(data, 'intake.db')
  const made = Bun.spawnSync([join(bin, 'intake'), 'keys', 'create', '--db', database], {
    env: childEnv(),
    stdout: 'pipe',
    stderr: 'pipe',
  })
  if (made.exitCode !== 0) throw new Error(`intake keys create failed: ${made.stderr.toString()}`)
})

afterAll(() => {
  if (root) rmSync(root, { recursive: true, force: true })
})

/** 03:15 UTC on `day` (2026-11-DD), as seconds since the epoch. */
const night = (day: number) => Date.UTC(2026, 10, day, 3, 15) / 1000

/** Runs the script as the timer would (by its #! line), or with `shell`; throws unless it exits 0. */
function runNightly(options: { dir: string; keep: number; at: number; shell?: string }) {
  const script = join(root, 'intake-backup')
  const run = Bun.spawnSync(options.shell ? [options.shell, script] : [script], {
    env: childEnv({
      PATH: `${bin}:${process.env.PATH}`,
      INTAKE: join(bin, 'intake'),
      DB: database,
      DIR: options.dir,
      KEEP: String(options.keep),
      INTAKE_TEST_NOW: String(options.at),
    }),
    stdout: 'pipe',
    stderr: 'pipe',
  })
  if (run.exitCode !== 0) throw new Error(`the nightly script exited ${run.exitCode}\n${run.stdout}\n${run.stderr}`)
}

/** Runs the script once and returns the file it added to `dir`. */
function nightlyRun(options: { dir: string; keep: number; at: number; shell?: string }): string {
  const before = new Set(readdirSync(options.dir))
  runNightly(options)
  const added = readdirSync(options.dir).filter((name) => !before.has(name))
  // Pruning may have removed others, but this night's copy is new.
  expect(added).toHaveLength(1)
  const copy = readFileSync(join(options.dir, added[0]!))
  expect(copy.subarray(0, 16).toString('latin1')).toBe('SQLite format 3\0')
  return added[0]!
}

/** What the guide puts in the backup folder besides the nightly copies, with recognisable contents. */
const OTHERS: Record<string, string> = {
  // Section 6: a backup made by hand.
  'intake-manual.db': 'manual backup',
  // Section 6 says to give manual backups a new name each time, with the date in it.
  'intake-20261101T120000Z.db': 'manual backup with a date',
  'intake-manual copy.db': 'manual backup, a space in its name',
  // Section 9, step 3: the backup before an upgrade.
  'intake-before-upgrade-20261015T090000Z.db': 'backup before an upgrade',
  // The copies intake itself makes before a migration (src/db/sqlite/open.ts), should they be moved here.
  'intake.db.bak-1': 'copy made by an upgrade',
  'intake.db.bak-2-20261020T101010Z': 'copy made by a second upgrade',
  // Section 12: a pg_dump.
  'intake-20261110T031500Z.dump': 'pg_dump',
}

function folderWithOthers(name: string): string {
  const dir = join(root, name)
  mkdirSync(dir)
  for (const [file, contents] of Object.entries(OTHERS)) writeFileSync(join(dir, file), contents)
  return dir
}

function expectOthersUntouched(dir: string) {
  for (const [file, contents] of Object.entries(OTHERS)) expect(readFileSync(join(dir, file), 'utf8')).toBe(contents)
}

describe('the nightly backup script of docs/backups.md', () => {
  for (const shell of [undefined, 'bash']) {
    test(`keeps the newest KEEP copies it made and touches nothing else (${shell ?? 'run by its #! line'})`, () => {
      const dir = folderWithOthers(`backups-${shell ?? 'sh'}`)
      const made = [20, 21, 22, 23, 24].map((day) => nightlyRun({ dir, keep: 3, at: night(day), shell }))
      expectOthersUntouched(dir)
      expect(readdirSync(dir).sort()).toEqual([...Object.keys(OTHERS), ...made.slice(-3)].sort())
    })
  }

  test('works in a folder whose name has spaces, with fewer copies than KEEP', () => {
    const dir = folderWithOthers('backups with spaces')
    const made = [20, 21].map((day) => nightlyRun({ dir, keep: 14, at: night(day) }))
    expectOthersUntouched(dir)
    expect(readdirSync(dir).sort()).toEqual([...Object.keys(OTHERS), ...made].sort())
  })

  test('starts from an empty folder, and with KEEP=1 keeps only the newest', () => {
    const dir = join(root, 'empty')
    mkdirSync(dir)
    const first = nightlyRun({ dir, keep: 1, at: night(20) })
    expect(readdirSync(dir)).toEqual([first])
    const second = nightlyRun({ dir, keep: 1, at: night(21) })
    expect(second).not.toBe(first)
    expect(readdirSync(dir)).toEqual([second])
  })
})
