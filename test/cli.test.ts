/**
 * The command line of the real executable: keys, backup, and how bad settings
 * are refused. Servers run on 127.0.0.1 with --port 0, each on its own temp database.
 */

import { Database } from 'bun:sqlite'
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createHash, randomBytes } from 'node:crypto'
import {
  chmodSync,
  copyFileSync,
  existsSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { join } from 'node:path'
import {
  type CommandResult,
  keysIn,
  killAllChildren,
  PROJECT_ROOT,
  type RunningIntake,
  request,
  runIntake,
  startIntake,
  useBuiltBinary,
} from './e2e/binary.ts'

const STEP_TIMEOUT = 30_000

const intake = useBuiltBinary('intake-cli-')
const tempDir = () => intake.tempDir()

/** One line on stderr, nothing that looks like a stack trace, exit code 2. */
function expectUsageFailure(result: CommandResult) {
  const context = `stdout:\n${result.stdout}\nstderr:\n${result.stderr}`
  expect({ code: result.code, context }).toEqual({ code: 2, context })
  const stderr = result.stderr.trim()
  expect(stderr.length).toBeGreaterThan(0)
  expect(stderr.split('\n')).toHaveLength(1)
  expect(result.stderr).not.toMatch(/^\s+at\s/m)
  expect(result.stderr).not.toMatch(/\.(ts|tsx|js):\d+/)
  expect(result.stdout).not.toMatch(/^\s+at\s/m)
}

const forms = (url: string) => `${url}/api/v1/forms`

interface KeyJson {
  id: string
  account: string
  created_at: string
  last_used_at: string | null
  revoked_at: string | null
  [hint: string]: unknown
}

describe('keys', () => {
  let cwd: string
  let db: string
  let server: RunningIntake | undefined
  let defaultKey: string
  let researchKey: string
  let researchKeyId: string
  const allOutput: string[] = []

  beforeAll(async () => {
    cwd = tempDir()
    db = join(cwd, 'state', 'intake.db')
    server = await startIntake(intake.path, { cwd, args: ['serve', '--port', '0', '--db', db] })
    defaultKey = server.apiKey!
    expect(defaultKey).toMatch(/^svc_live_[0-9a-f]{48}$/)
  }, STEP_TIMEOUT)

  afterAll(async () => {
    if (server) await server.stop('SIGTERM').catch(() => undefined)
    await killAllChildren()
  })

  const run = async (args: string[]) => {
    const result = await runIntake(intake.path, [...args, '--db', db], { cwd })
    allOutput.push(result.stdout, result.stderr)
    return result
  }

  test(
    'keys create --account research prints a new key once, on a line containing "API key"',
    async () => {
      const result = await run(['keys', 'create', '--account', 'research'])
      expect(result.code).toBe(0)
      const printed = keysIn(result.stdout)
      expect(printed).toHaveLength(1)
      researchKey = printed[0]!
      expect(researchKey).not.toBe(defaultKey)
      const line = result.stdout.split('\n').find((l) => l.includes(researchKey))!
      expect(line).toContain('API key')
      expect(keysIn(result.stderr)).toEqual([])

      // Works while the server runs: the running server accepts the new key at once.
      const res = await request(forms(server!.url), { key: researchKey })
      expect(res.status).toBe(200)
      expect(res.body).toEqual([])
    },
    STEP_TIMEOUT,
  )

  test('keys list shows id, account, created, last used and revoked columns, never a plaintext key', async () => {
    expect((await request(forms(server!.url), { key: defaultKey })).status).toBe(200)
    const result = await run(['keys', 'list'])
    expect(result.code).toBe(0)
    const header = result.stdout.split('\n')[0]!.toUpperCase()
    for (const column of ['ID', 'ACCOUNT', 'CREATED', 'LAST USED', 'REVOKED']) expect(header).toContain(column)
    expect(result.stdout).toContain('research')
    expect(result.stdout).toContain('default')
    expect(keysIn(result.stdout)).toEqual([])
    for (const key of [defaultKey, researchKey]) {
      expect(result.stdout).not.toContain(key.slice('svc_live_'.length))
      expect(result.stdout).not.toContain(key.slice(-12))
    }
  })

  test('keys list --json gives objects with id, account, a key hint, created_at, last_used_at, revoked_at', async () => {
    const result = await run(['keys', 'list', '--json'])
    expect(result.code).toBe(0)
    const list = JSON.parse(result.stdout) as KeyJson[]
    expect(Array.isArray(list)).toBe(true)
    expect(list).toHaveLength(2)
    for (const entry of list) {
      for (const field of ['id', 'account', 'created_at', 'last_used_at', 'revoked_at'])
        expect(entry).toHaveProperty(field)
      expect(typeof entry.id).toBe('string')
      expect(entry.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?Z?$/)
      expect(entry.revoked_at).toBeNull()
    }
    expect(keysIn(result.stdout)).toEqual([])
    for (const [account, key] of [
      ['default', defaultKey],
      ['research', researchKey],
    ] as const) {
      const entry = list.find((e) => e.account === account)!
      expect(entry).toBeDefined()
      // Some field holds a hint: the last characters of the key, not the key.
      const hints = Object.entries(entry).filter(
        ([name, value]) => /key|hint/i.test(name) && typeof value === 'string' && value.endsWith(key.slice(-4)),
      )
      expect(hints.length).toBeGreaterThan(0)
      for (const [, value] of hints) expect(value).not.toContain(key.slice('svc_live_'.length))
      // Both keys have been used against the running server.
      expect(entry.last_used_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?Z?$/)
    }
    researchKeyId = list.find((e) => e.account === 'research')!.id
  })

  test(
    'keys revoke while the server runs: the very next request with that key is 401, the other key still works',
    async () => {
      const before = await request(forms(server!.url), { key: researchKey })
      expect(before.status).toBe(200)

      const result = await run(['keys', 'revoke', researchKeyId])
      expect(result.code).toBe(0)
      expect(result.stderr).toBe('')

      const after = await request(forms(server!.url), { key: researchKey })
      expect(after.status).toBe(401)
      expect(after.body).toEqual({ detail: 'Invalid API key' })
      expect(after.headers.get('www-authenticate')).toMatch(/^Bearer\b/)

      const other = await request(forms(server!.url), { key: defaultKey })
      expect(other.status).toBe(200)

      const list = JSON.parse((await run(['keys', 'list', '--json'])).stdout) as KeyJson[]
      expect(list.find((e) => e.id === researchKeyId)!.revoked_at).toMatch(/^\d{4}-\d{2}-\d{2}T/)
      expect(list.find((e) => e.account === 'default')!.revoked_at).toBeNull()
    },
    STEP_TIMEOUT,
  )

  test('keys revoke of an unknown id exits 2 with one line on stderr', async () => {
    const result = await run(['keys', 'revoke', '01J0000000000000000000UNKN'])
    expectUsageFailure(result)
    const again = await run(['keys', 'revoke', 'no-such-key'])
    expectUsageFailure(again)
  })

  test('no command output ever contained a plaintext key except keys create', () => {
    const found = allOutput.flatMap(keysIn)
    expect(found).toEqual([researchKey])
    expect(keysIn(server!.stderr())).toEqual([])
    // The first start shows it on its own line and in the ready command that follows.
    expect(keysIn(server!.stdout())).toEqual([defaultKey, defaultKey])
  })
})

describe('backup', () => {
  let cwd: string
  let db: string
  let server: RunningIntake | undefined
  let restored: RunningIntake | undefined
  let key: string
  let formId: string

  beforeAll(async () => {
    cwd = tempDir()
    db = join(cwd, 'live', 'intake.db')
    server = await startIntake(intake.path, { cwd, args: ['serve', '--port', '0', '--db', db] })
    key = server.apiKey!
    const created = await request(forms(server.url), {
      key,
      body: { title: 'Kept by the backup', fields: [{ key: 'name', type: 'text', label: 'Name' }] },
    })
    expect(created.status).toBe(201)
    formId = created.body.id
  }, STEP_TIMEOUT)

  afterAll(async () => {
    if (restored) await restored.stop('SIGTERM').catch(() => undefined)
    if (server) await server.stop('SIGTERM').catch(() => undefined)
    await killAllChildren()
  })

  test(
    'backup FILE while the server runs writes a SQLite file that a second intake serves with the form',
    async () => {
      const target = join(cwd, 'backup.db')
      const result = await runIntake(intake.path, ['backup', target, '--db', db], { cwd })
      expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' })
      expect(existsSync(target)).toBe(true)
      expect(readFileSync(target).subarray(0, 16).toString('latin1')).toBe('SQLite format 3\0')
      // As private as the database it copies: answers, files and webhook secrets are in it.
      expect(statSync(target).mode & 0o777).toBe(0o600)

      // The live server keeps working after the backup.
      expect((await request(`${forms(server!.url)}/${formId}`, { key })).status).toBe(200)

      restored = await startIntake(intake.path, { cwd, args: ['serve', '--port', '0', '--db', target] })
      expect(restored.apiKey).toBeUndefined()
      const form = await request(`${forms(restored.url)}/${formId}`, { key })
      expect(form.status).toBe(200)
      expect(form.body.title).toBe('Kept by the backup')
      expect(form.body.status).toBe('active')
      expect(await restored.stop('SIGTERM')).toBe(0)
    },
    STEP_TIMEOUT,
  )

  test('backup to an existing file exits 2 and leaves the file alone', async () => {
    const target = join(cwd, 'existing.db')
    writeFileSync(target, 'precious')
    const result = await runIntake(intake.path, ['backup', target, '--db', db], { cwd })
    expectUsageFailure(result)
    expect(result.stderr).toContain('already exists')
    expect(readFileSync(target, 'utf8')).toBe('precious')
  })
})

describe('bad settings stop the start: one line on stderr, no stack trace, exit code 2', () => {
  const cases: Array<{ name: string; args: string[]; env?: Record<string, string>; secret?: string }> = [
    { name: '--port abc', args: ['serve', '--port', 'abc'] },
    { name: 'SERVICE_PORT=70000', args: ['serve'], env: { SERVICE_PORT: '70000' } },
    { name: 'SERVICE_WEBHOOK_TIMEOUT=0', args: ['serve', '--port', '0'], env: { SERVICE_WEBHOOK_TIMEOUT: '0' } },
    { name: 'SERVICE_TRUST_PROXY=maybe', args: ['serve', '--port', '0'], env: { SERVICE_TRUST_PROXY: 'maybe' } },
    { name: 'SERVICE_API_KEY=nope', args: ['serve', '--port', '0'], env: { SERVICE_API_KEY: 'nope' }, secret: 'nope' },
    { name: 'SERVICE_BASE_URL=ftp://x', args: ['serve', '--port', '0'], env: { SERVICE_BASE_URL: 'ftp://x' } },
    // Links under a path would lead nowhere: intake serves from the root of its host.
    {
      name: '--base-url https://example.com/forms',
      args: ['serve', '--port', '0', '--base-url', 'https://example.com/forms'],
    },
    { name: 'an unknown flag', args: ['serve', '--port', '0', '--frobnicate'] },
    { name: 'an unknown command', args: ['frobnicate', '--port', '0'] },
  ]

  for (const c of cases) {
    test(c.name, async () => {
      const cwd = tempDir()
      const result = await runIntake(intake.path, [...c.args, '--db', join(cwd, 'data', 'intake.db')], {
        cwd,
        env: c.env,
      })
      expectUsageFailure(result)
      if (c.secret) {
        expect(result.stderr).not.toContain(c.secret)
        expect(result.stdout).not.toContain(c.secret)
      }
      // Refused before anything was written.
      expect(readdirSync(cwd)).toEqual([])
    })
  }

  test(
    'a port another intake already listens on: refused, never shared',
    async () => {
      const first = await startIntake(intake.path, { cwd: tempDir() })
      try {
        const cwd = tempDir()
        const result = await runIntake(
          intake.path,
          ['serve', '--port', String(first.port), '--db', join(cwd, 'intake.db')],
          { cwd },
        )
        expectUsageFailure(result)
        expect(result.stderr).toContain(String(first.port))
        // The first one still answers, alone.
        expect((await request(`${first.url}/healthz`)).status).toBe(200)
        // The failed start made no key it never showed: the next start on that database is a first start.
        const next = await startIntake(intake.path, {
          cwd,
          args: ['serve', '--port', '0', '--db', join(cwd, 'intake.db')],
        })
        expect(next.apiKey).toMatch(/^svc_live_/)
        expect(await next.stop()).toBe(0)
      } finally {
        await first.stop()
      }
    },
    STEP_TIMEOUT,
  )

  /**
   * A database file this user may read but not write (made by a command run as
   * root, say): SQLite would open it read-only without a word. As root, the
   * server runs as `nobody` (setpriv) on a root-owned file; otherwise the file
   * is made read-only with chmod.
   */
  test('a database this user may only read: refused at start with the reason, not served half-working', async () => {
    const cwd = tempDir()
    const dataDir = join(cwd, 'data')
    const dbPath = join(dataDir, 'intake.db')
    expect((await runIntake(intake.path, ['keys', 'create', '--db', dbPath], { cwd })).code).toBe(0)
    chmodSync(dbPath, 0o444)
    let result: CommandResult
    if (process.getuid?.() === 0) {
      // nobody may enter the folders and run a copy of the executable, and create -wal/-shm, but not write the file.
      chmodSync(cwd, 0o755)
      chmodSync(dataDir, 0o777)
      const binary = join(cwd, 'intake')
      copyFileSync(intake.path, binary)
      chmodSync(binary, 0o755)
      result = await runIntake(
        '/usr/bin/setpriv',
        ['--reuid=65534', '--regid=65534', '--clear-groups', binary, 'serve', '--port', '0', '--db', dbPath],
        { cwd },
      )
    } else {
      result = await runIntake(intake.path, ['serve', '--port', '0', '--db', dbPath], { cwd })
    }
    expectUsageFailure(result)
    expect(result.stderr).toContain(`The database at ${dbPath} cannot be written by this user`)
    expect(result.stderr).toMatch(/readonly/i)
  })

  test('an unwritable database path (--db /proc/intake/x.db)', async () => {
    const cwd = tempDir()
    const result = await runIntake(intake.path, ['serve', '--port', '0', '--db', '/proc/intake/x.db'], { cwd })
    expectUsageFailure(result)
    expect(result.stderr).toContain('/proc/intake/x.db')
  })
})

describe('settings come from the environment and flags only', () => {
  test(
    'a .env and a bunfig.toml in the working directory are not read',
    async () => {
      const cwd = tempDir()
      // Each would stop the start (a refused base URL) or change it (a preload that prints) if it were read.
      writeFileSync(join(cwd, '.env'), 'SERVICE_BASE_URL=ftp://not-an-origin\n')
      writeFileSync(join(cwd, 'preload.ts'), 'console.log("PRELOADED")\n')
      writeFileSync(join(cwd, 'bunfig.toml'), 'preload = ["./preload.ts"]\n')
      const server = await startIntake(intake.path, { cwd })
      try {
        expect(server.stdout()).not.toContain('PRELOADED')
        expect(server.stdout()).toContain('Forms  http://localhost:')
      } finally {
        expect(await server.stop()).toBe(0)
      }
    },
    STEP_TIMEOUT,
  )
})

/**
 * A source checkout as the README's quick start uses it: a directory holding
 * this project's package.json, bunfig.toml and code, where `bun run intake ...`
 * runs (linked, so the test writes nothing into the real checkout).
 */
function sourceCheckout(): string {
  const dir = tempDir()
  for (const entry of ['package.json', 'bunfig.toml', 'tsconfig.json', 'src', 'views', 'node_modules'])
    symlinkSync(join(PROJECT_ROOT, entry), join(dir, entry))
  return dir
}

/** `bun run intake ARGS` in `cwd`, as a person types it in a source checkout. */
const runFromSource = (cwd: string, args: string[]) => runIntake(process.execPath, ['run', 'intake', ...args], { cwd })

describe('from a source checkout: bun run intake', () => {
  test(
    'the first start names `bun run intake`, and the commands it shows run as shown',
    async () => {
      const cwd = sourceCheckout()
      const server = await startIntake(process.execPath, { cwd, args: ['run', 'intake', 'serve', '--port', '0'] })
      try {
        const shown = /copy it safely with: (.+) FILE\)/.exec(server.stdout())?.[1]
        expect(shown).toBe('bun run intake backup')
        const backup = await runFromSource(cwd, ['backup', './backup.db'])
        expect({ code: backup.code, stdout: backup.stdout }).toEqual({
          code: 0,
          stdout: `Backed up ${join(cwd, 'data', 'intake.db')} to ${join(cwd, 'backup.db')}.\n`,
        })
        const created = await runFromSource(cwd, ['keys', 'create', '--account', 'research'])
        expect(created.code).toBe(0)
        expect(keysIn(created.stdout)).toHaveLength(1)
      } finally {
        expect(await server.stop()).toBe(0)
      }
    },
    STEP_TIMEOUT,
  )

  test(
    'source and binary read the same settings: a .env in the working directory is read by neither',
    async () => {
      // Were it read, migrate would create ./from-dotenv.db instead of ./data/intake.db.
      const dotenv = 'SERVICE_DB_PATH=./from-dotenv.db\n'
      const source = sourceCheckout()
      const binary = tempDir()
      for (const dir of [source, binary]) writeFileSync(join(dir, '.env'), dotenv)
      const created = (dir: string) => `Created the database at ${join(dir, 'data', 'intake.db')}`
      const viaScript = await runFromSource(source, ['migrate'])
      expect({ code: viaScript.code, stdout: viaScript.stdout }).toEqual({
        code: 0,
        stdout: expect.stringContaining(created(source)),
      })
      // `bun src/main.ts` in the checkout reads the same bunfig.toml.
      const viaEntry = await runIntake(process.execPath, ['src/main.ts', 'migrate'], { cwd: source })
      expect({ code: viaEntry.code, stdout: viaEntry.stdout }).toEqual({
        code: 0,
        stdout: expect.stringContaining(join(source, 'data', 'intake.db')),
      })
      const viaBinary = await runIntake(intake.path, ['migrate'], { cwd: binary })
      expect({ code: viaBinary.code, stdout: viaBinary.stdout }).toEqual({
        code: 0,
        stdout: viaScript.stdout.replace(created(source), created(binary)),
      })
      for (const dir of [source, binary]) expect(existsSync(join(dir, 'from-dotenv.db'))).toBe(false)
    },
    STEP_TIMEOUT,
  )
})

describe('SERVICE_API_KEY', () => {
  let server: RunningIntake | undefined

  afterAll(async () => {
    if (server) await server.stop('SIGTERM').catch(() => undefined)
    await killAllChildren()
  })

  test(
    'a valid svc_live_ key: no generated key is printed, and that key works for the API',
    async () => {
      const cwd = tempDir()
      const key = `svc_live_${randomBytes(24).toString('hex')}`
      const db = join(cwd, 'data', 'intake.db')
      server = await startIntake(intake.path, {
        cwd,
        args: ['serve', '--port', '0', '--db', db],
        env: { SERVICE_API_KEY: key },
      })
      expect(server.apiKey).toBeUndefined()
      expect(server.stdout()).not.toMatch(/API key/)
      expect(keysIn(server.stdout())).toEqual([])

      const created = await request(forms(server.url), {
        key,
        body: { title: 'Configured key', fields: [{ key: 'ok', type: 'checkbox', label: 'OK' }] },
      })
      expect(created.status).toBe(201)
      const list = await request(forms(server.url), { key })
      expect(list.status).toBe(200)
      expect(list.body.map((f: { id: string }) => f.id)).toEqual([created.body.id])

      expect(await server.stop('SIGTERM')).toBe(0)
      expect(server.stdout()).not.toContain(key)
      expect(server.stderr()).not.toContain(key)

      // Stored as its hash only.
      const sqlite = new Database(db, { readonly: true })
      try {
        const hashes = (sqlite.query('SELECT key_hash FROM api_keys').all() as { key_hash: string }[]).map(
          (r) => r.key_hash,
        )
        expect(hashes).toEqual([createHash('sha256').update(key).digest('hex')])
      } finally {
        sqlite.close()
      }
      for (const name of readdirSync(join(cwd, 'data'))) {
        expect(readFileSync(join(cwd, 'data', name)).includes(Buffer.from(key.slice('svc_live_'.length)))).toBe(false)
      }
    },
    STEP_TIMEOUT,
  )
})

describe('a database from a newer intake', () => {
  const commands: Array<{ name: string; args: (cwd: string) => string[] }> = [
    { name: 'serve', args: () => ['serve', '--port', '0'] },
    { name: 'keys create', args: () => ['keys', 'create'] },
    { name: 'keys list', args: () => ['keys', 'list'] },
    { name: 'backup', args: (cwd) => ['backup', join(cwd, 'copy.db')] },
  ]

  for (const command of commands) {
    test(`${command.name}: exit 2, says it is from a newer intake, and the file is unchanged`, async () => {
      const cwd = tempDir()
      const db = join(cwd, 'future.db')
      const sqlite = new Database(db, { create: true })
      sqlite.exec('CREATE TABLE from_the_future (x TEXT)')
      sqlite.exec("INSERT INTO from_the_future VALUES ('hello')")
      sqlite.exec('PRAGMA user_version = 999')
      sqlite.close()
      const before = readFileSync(db)
      const listingBefore = readdirSync(cwd).sort()

      const result = await runIntake(intake.path, [...command.args(cwd), '--db', db], { cwd })
      expectUsageFailure(result)
      expect(result.stderr).toMatch(/newer/i)

      const after = readFileSync(db)
      expect({ unchanged: Buffer.compare(before, after) === 0, header: [after[18], after[19]] }).toEqual({
        unchanged: true,
        header: [before[18], before[19]],
      })
      expect(readdirSync(cwd).sort()).toEqual(listingBefore)
    })
  }
})
