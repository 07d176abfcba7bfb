/**
 * `intake --version` says what runs: the version, the commit it was built
 * from, the schema each store is written with and Bun's version. From source
 * (`bun src/main.ts`) and from the executable (`bun run build`), each run from
 * a fresh empty directory.
 */
import { Database } from 'bun:sqlite'
import { describe, expect, test } from 'bun:test'
import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import packageJson from '../../package.json' with { type: 'json' }
import { POSTGRES_SCHEMA_VERSION } from '../../src/db/postgres/migrations.ts'
import { PROJECT_ROOT, runIntake, useBuiltBinary } from './binary.ts'

const intake = useBuiltBinary('intake-version-')
const SOURCE_ENTRY = join(PROJECT_ROOT, 'src', 'main.ts')

/** What `git rev-parse --short HEAD` says of this checkout, or "unknown" when it is not one (a `git archive` export). */
function checkoutCommit(): string {
  if (!existsSync(join(PROJECT_ROOT, '.git'))) return 'unknown'
  const git = Bun.spawnSync(['git', 'rev-parse', '--short', 'HEAD'], { cwd: PROJECT_ROOT, stderr: 'ignore' })
  return git.exitCode === 0 ? git.stdout.toString().trim() : 'unknown'
}

/** `intake --version`'s lines, by name; its first line apart. */
function parseVersion(stdout: string) {
  const [first = '', ...rest] = stdout.trimEnd().split('\n')
  const fields = Object.fromEntries(rest.map((line) => /^([^:]+): (.*)$/.exec(line)?.slice(1) ?? ['?', line]))
  return { first, fields }
}

/** The schema `intake migrate` writes a new SQLite database with, read back with sqlite. */
async function schemaWritten(command: string[], cwd: string): Promise<number> {
  const result = await runIntake(command[0]!, [...command.slice(1), 'migrate', '--db', 'fresh.db'], { cwd })
  expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' })
  const db = new Database(join(cwd, 'fresh.db'), { readonly: true })
  try {
    return db.query<{ user_version: number }, []>('PRAGMA user_version').get()!.user_version
  } finally {
    db.close()
  }
}

const ways = [
  { name: 'the executable', command: () => [intake.path] },
  { name: 'source', command: () => [process.execPath, SOURCE_ENTRY] },
]

for (const way of ways) {
  describe(`intake --version, from ${way.name}`, () => {
    test('version, commit, the schemas this build writes and Bun, exit 0, nothing written', async () => {
      const cwd = intake.tempDir()
      const [binary, ...args] = way.command()
      const result = await runIntake(binary!, [...args, '--version'], { cwd })
      expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' })
      expect(readdirSync(cwd)).toEqual([])

      const { first, fields } = parseVersion(result.stdout)
      expect(first).toBe(`intake ${packageJson.version}`)
      expect(fields).toEqual({
        commit: checkoutCommit(),
        'sqlite schema': String(await schemaWritten(way.command(), cwd)),
        'postgresql schema': String(POSTGRES_SCHEMA_VERSION),
        bun: Bun.version,
      })
      // -v says the same.
      expect((await runIntake(binary!, [...args, '-v'], { cwd })).stdout).toBe(result.stdout)
    })
  })
}

test('from source without git on the PATH: the commit is "unknown", and nothing is said of git', async () => {
  const cwd = intake.tempDir()
  const result = await runIntake(process.execPath, [SOURCE_ENTRY, '--version'], { cwd, env: { PATH: cwd } })
  expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' })
  expect(parseVersion(result.stdout).fields.commit).toBe('unknown')
})
