/**
 * The real executable, run the way an operator runs it: by absolute path, from
 * a fresh empty directory with nothing beside it, over real loopback HTTP.
 */

import { Database } from 'bun:sqlite'
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createHash } from 'node:crypto'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import packageJson from '../../package.json' with { type: 'json' }
import { SUPPORTED_LOCALES, translator } from '../../src/i18n/index.ts'
import { decodeEntities } from '../html.ts'
import {
  childEnv,
  killAllChildren,
  type RunningIntake,
  request,
  runIntake,
  startIntake,
  useBuiltBinary,
} from './binary.ts'

const STEP_TIMEOUT = 30_000

const intake = useBuiltBinary('intake-e2e-')
const tempDir = () => intake.tempDir()

// --version: test/e2e/version.test.ts.
describe('intake --help', () => {
  test('--help exits 0 and lists serve, keys and backup', async () => {
    const cwd = tempDir()
    const result = await runIntake(intake.path, ['--help'], { cwd })
    expect(result.code).toBe(0)
    expect(result.stderr).toBe('')
    expect(result.stdout).toMatch(/\bserve\b/)
    expect(result.stdout).toMatch(/\bkeys\b/)
    expect(result.stdout).toMatch(/\bbackup\b/)
    expect(result.stdout).toMatch(/keys create/)
    expect(result.stdout).toMatch(/keys list/)
    expect(result.stdout).toMatch(/keys revoke/)
    expect(readdirSync(cwd)).toEqual([])
  })
})

describe("each command's --help", () => {
  const COMMANDS = ['serve', 'keys', 'backup', 'copy', 'migrate', 'mcp', 'healthcheck']

  for (const command of COMMANDS) {
    test(`intake ${command} --help and intake help ${command}: the same text, with its usage and examples, exit 0`, async () => {
      const cwd = tempDir()
      const viaFlag = await runIntake(intake.path, [command, '--help'], { cwd })
      const viaHelp = await runIntake(intake.path, ['help', command], { cwd })
      expect(viaFlag.code).toBe(0)
      expect(viaFlag.stderr).toBe('')
      expect(viaHelp.stdout).toBe(viaFlag.stdout)
      expect(viaFlag.stdout).toStartWith(`intake ${command}: `)
      expect(viaFlag.stdout).toContain(`Usage:\n  intake ${command === 'serve' ? '[serve]' : command}`)
      expect(viaFlag.stdout).toMatch(/^Examples?/m)
      expect(readdirSync(cwd)).toEqual([])
    })
  }

  test("intake --help points at the per-command help; an unknown command's help exits 2 with one line", async () => {
    const cwd = tempDir()
    expect((await runIntake(intake.path, ['--help'], { cwd })).stdout).toContain('intake COMMAND --help')
    const unknown = await runIntake(intake.path, ['frobnicate', '--help'], { cwd })
    expect(unknown.code).toBe(2)
    expect(unknown.stdout).toBe('')
    expect(unknown.stderr.trim().split('\n')).toHaveLength(1)
    expect(unknown.stderr).toContain('Unknown command "frobnicate"')
  })

  /**
   * Every `intake ...` example line of `intake --help` and the commands' help, run
   * as written in a fresh directory, in the order shown. Servers are started on
   * a free port (a fixed one may be taken here) and stopped once listening.
   */
  test(
    'every example runs as written',
    async () => {
      const cwd = tempDir()
      const texts = [(await runIntake(intake.path, ['--help'], { cwd })).stdout]
      for (const command of COMMANDS) texts.push((await runIntake(intake.path, [command, '--help'], { cwd })).stdout)
      // Each distinct example once (the general help repeats some).
      const examples = [
        ...new Set(
          texts.flatMap((text) =>
            (text.split(/^Examples?.*:$/m)[1] ?? '')
              .split('\n')
              .map((line) => line.replace(/#.*$/, '').trim())
              .filter((line) => /^([A-Z_]+=\S+ )*intake( |$)/.test(line)),
          ),
        ),
      ]
      expect(examples.length).toBeGreaterThanOrEqual(7)
      const ran: string[] = []
      for (const example of examples) {
        const words = example.split(/\s+/)
        const env: Record<string, string> = { SERVICE_PORT: '0' }
        while (/^[A-Z_]+=/.test(words[0]!)) {
          const [name, value] = words.shift()!.split('=') as [string, string]
          env[name] = value
        }
        const args = words.slice(1).map((word, i, all) => (all[i - 1] === '--port' ? '0' : word))
        if (args.length === 0 || args[0] === 'serve') {
          const server = await startIntake(intake.path, { cwd, args, env })
          expect(await server.stop()).toBe(0)
        } else {
          const result = await runIntake(intake.path, args, { cwd, env })
          expect({ example, code: result.code, stderr: result.stderr }).toEqual({ example, code: 0, stderr: '' })
        }
        ran.push(example)
      }
      expect(ran).toEqual(examples)
    },
    STEP_TIMEOUT,
  )
})

describe('intake serve from an empty directory', () => {
  let cwd: string
  let first: RunningIntake | undefined
  let second: RunningIntake | undefined
  let key: string
  let formId: string
  let winner: { id: string; form_id: string; submitted_at: string }
  let winnerData: Record<string, unknown>
  const captured: { stdout: string; stderr: string }[] = []

  const dbFiles = () =>
    ['intake.db', 'intake.db-wal', 'intake.db-shm']
      .map((name) => join(cwd, 'data', name))
      .filter((path) => existsSync(path))

  /** The plaintext key (and its random part on its own) must not be in any database file, as bytes. */
  const expectKeyNotInDatabaseFiles = () => {
    const files = dbFiles()
    expect(files.length).toBeGreaterThan(0)
    for (const file of files) {
      const bytes = readFileSync(file)
      expect({ file, found: bytes.includes(Buffer.from(key)) }).toEqual({ file, found: false })
      expect({ file, found: bytes.includes(Buffer.from(key.slice('svc_live_'.length))) }).toEqual({
        file,
        found: false,
      })
    }
  }

  beforeAll(async () => {
    cwd = tempDir()
  })

  afterAll(async () => {
    await killAllChildren()
  })

  test(
    'first start prints the listening URL and one line holding the new key and the words "API key"',
    async () => {
      first = await startIntake(intake.path, { cwd, args: ['serve', '--port', '0'] })
      expect(first.version).toBe(packageJson.version)
      expect(first.stdout()).toMatch(
        new RegExp(
          `^intake ${packageJson.version.replace(/\./g, '\\.')} listening on http://127\\.0\\.0\\.1:${first.port}(?: \\(.*\\))?\\s*$`,
          'm',
        ),
      )
      expect(first.port).toBeGreaterThan(0)

      // The key is on its own "API key:" line, and in the ready command that follows it.
      const keyLines = first
        .stdout()
        .split('\n')
        .filter((line) => /svc_live_/.test(line))
      expect(first.apiKey).toMatch(/^svc_live_[0-9a-f]{48}$/)
      key = first.apiKey!
      expect(keyLines).toEqual([`API key: ${key}`, expect.stringContaining(`Authorization: Bearer ${key}`)])
      // It says where the data lives, where the API and the forms are.
      expect(first.stdout()).toContain(join(cwd, 'data', 'intake.db'))
      expect(first.stdout()).toMatch(/\/api\/v1\b/)
      expect(first.stdout()).toMatch(/\/f\/<id>/)

      // The default database path is ./data/intake.db relative to the working directory.
      expect(existsSync(join(cwd, 'data', 'intake.db'))).toBe(true)
    },
    STEP_TIMEOUT,
  )

  test(
    'the next command the first start suggests runs as printed and creates a form',
    async () => {
      const lines = first!.stdout().split('\n')
      const start = lines.findIndex((line) => line.startsWith('Next, create a form'))
      expect(start).toBeGreaterThan(0)
      const command = lines
        .slice(start + 1)
        .join('\n')
        .split('\nthen ')[0]!
      expect(command).toContain('curl')
      const run = Bun.spawnSync(['bash', '-c', command], { cwd: tempDir() })
      expect(run.exitCode).toBe(0)
      const created = JSON.parse(run.stdout.toString())
      expect(created.status).toBe('active')
      expect(created.url).toMatch(/\/f\/[0-9A-Z]{26}$/)
    },
    STEP_TIMEOUT,
  )

  test(
    'the backup command the first start shows names the executable as it was started, and runs as printed',
    async () => {
      const shown = /copy it safely with: (.+) FILE\)/.exec(first!.stdout())?.[1]
      expect(shown).toBe(`${intake.path} backup`)
      const file = join(tempDir(), 'backup.db')
      const run = Bun.spawnSync(['bash', '-c', `${shown} ${file}`], { cwd, env: childEnv() })
      expect({ code: run.exitCode, stderr: run.stderr.toString() }).toEqual({ code: 0, stderr: '' })
      expect(existsSync(file)).toBe(true)
    },
    STEP_TIMEOUT,
  )

  test('GET /healthz answers 200 {"status":"ok"} without a key', async () => {
    const res = await request(`${first!.url}/healthz`)
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ status: 'ok' })
  })

  test('creates a form over real HTTP with the printed key', async () => {
    const res = await request(`${first!.url}/api/v1/forms`, {
      key,
      body: { title: 'Concurrency', fields: [{ key: 'name', type: 'text', label: 'Name', required: true }] },
    })
    expect(res.status).toBe(201)
    expect(res.body.id).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/)
    expect(res.body.status).toBe('active')
    formId = res.body.id
    expect(res.body.url).toBe(`http://localhost:${first!.port}/f/${formId}`)
  })

  test('the executable carries full ICU data: a date hint reads as this process writes it, in every language', async () => {
    const dates = { min: '2026-01-01', max: '2026-12-31' }
    const res = await request(`${first!.url}/api/v1/forms`, {
      key,
      body: {
        title: 'Dates',
        fields: [
          { key: 'day', type: 'date', label: 'Day', config: dates },
          { key: 'n', type: 'number', label: 'N', config: { min: 1000.5, max: 20000 } },
        ],
      },
    })
    expect(res.status).toBe(201)
    const hints: Record<string, string> = {}
    const expected: Record<string, string> = {}
    for (const locale of SUPPORTED_LOCALES) {
      const page = await request(`${first!.url}/f/${res.body.id}`, { headers: { 'accept-language': locale } })
      const hint = /<div id="field-day-hint" class="hint"><p class="hint-note">([^<]*)<\/p>/.exec(page.text)?.[1]
      hints[locale] = decodeEntities(hint ?? '(no hint)')
      const tr = translator(locale)
      expected[locale] = tr.t('hint.date_between', { min: { date: dates.min }, max: { date: dates.max } })
    }
    expect(hints).toEqual(expected)
    // Not English words under another language's sentence: the month names are the language's own.
    expect(hints.de).toContain('Dezember')
    expect(hints.ja).toContain('12月')
    expect(hints.ar).toContain('ديسمبر')
  })

  test(
    '20 concurrent JSON submissions: exactly one 201 and nineteen 409',
    async () => {
      const bodies = Array.from({ length: 20 }, (_, i) => ({ name: `Submitter ${i}` }))
      const results = await Promise.all(
        bodies.map((data) => request(`${first!.url}/f/${formId}`, { method: 'POST', body: data })),
      )
      const statuses = results.map((r) => r.status)
      expect(statuses.filter((s) => s === 201)).toHaveLength(1)
      expect(statuses.filter((s) => s === 409)).toHaveLength(19)
      const index = statuses.indexOf(201)
      winner = results[index]!.body
      winnerData = bodies[index]!
      expect(winner.form_id).toBe(formId)
      expect(typeof winner.id).toBe('string')
      expect(typeof winner.submitted_at).toBe('string')
      for (const r of results.filter((r) => r.status === 409)) expect(typeof r.body.detail).toBe('string')
    },
    STEP_TIMEOUT,
  )

  test('while serving, the plaintext key is in no database file (main, -wal, -shm)', () => {
    expectKeyNotInDatabaseFiles()
  })

  test(
    'SIGTERM stops the server with exit code 0',
    async () => {
      const code = await first!.stop('SIGTERM')
      captured.push({ stdout: first!.stdout(), stderr: first!.stderr() })
      expect(code).toBe(0)
    },
    STEP_TIMEOUT,
  )

  test('the database holds the SHA-256 hex of the key, and never the key itself', () => {
    expectKeyNotInDatabaseFiles()
    const db = new Database(join(cwd, 'data', 'intake.db'), { readonly: true })
    try {
      const hashes = (db.query('SELECT key_hash FROM api_keys').all() as { key_hash: string }[]).map((r) => r.key_hash)
      expect(hashes).toContain(createHash('sha256').update(key).digest('hex'))
    } finally {
      db.close()
    }
  })

  test(
    'a second start on the same database prints no key; the first key still reads the completed form and its response',
    async () => {
      second = await startIntake(intake.path, { cwd, args: ['serve', '--port', '0'] })
      expect(second.apiKey).toBeUndefined()
      expect(second.stdout()).not.toMatch(/API key/)
      expect(second.stdout()).not.toMatch(/svc_live_[0-9a-f]/)

      const form = await request(`${second.url}/api/v1/forms/${formId}`, { key })
      expect(form.status).toBe(200)
      expect(form.body.id).toBe(formId)
      expect(form.body.status).toBe('completed')

      const responses = await request(`${second.url}/api/v1/forms/${formId}/responses`, { key })
      expect(responses.status).toBe(200)
      expect(responses.body).toHaveLength(1)
      expect(responses.body[0].id).toBe(winner.id)
      expect(responses.body[0].form_id).toBe(formId)
      expect(responses.body[0].data).toEqual(winnerData)

      const health = await request(`${second.url}/healthz`)
      expect(health.status).toBe(200)
      expect(health.body).toEqual({ status: 'ok' })

      expect(await second.stop('SIGTERM')).toBe(0)
      captured.push({ stdout: second.stdout(), stderr: second.stderr() })
    },
    STEP_TIMEOUT,
  )

  test("the plaintext key appears in the captured output only in the first start's lines", () => {
    expect(captured).toHaveLength(2)
    const secret = key.slice('svc_live_'.length)
    const [run1, run2] = captured
    const linesWithKey = run1!.stdout.split('\n').filter((line) => line.includes(secret))
    // Its own line, and the ready command.
    expect(linesWithKey).toHaveLength(2)
    expect(linesWithKey[0]).toBe(`API key: ${key}`)
    expect(linesWithKey[1]).toContain(`Authorization: Bearer ${key}`)
    // Later starts say one line, without it.
    expect(
      run2!.stdout
        .trim()
        .split('\n')
        .filter((line) => !line.startsWith('{')),
    ).toHaveLength(1)
    expect(run1!.stderr.includes(secret)).toBe(false)
    expect(run2!.stdout.includes(secret)).toBe(false)
    expect(run2!.stderr.includes(secret)).toBe(false)
    expectKeyNotInDatabaseFiles()
  })
})

describe('two servers on one database file', () => {
  test(
    'each form still takes exactly one response when submissions race across processes',
    async () => {
      const cwd = tempDir()
      const args = ['serve', '--port', '0', '--db', join(cwd, 'shared.db')]
      // 200 submissions from one address: the per-address limit would refuse most of them.
      const env = { SERVICE_PUBLIC_RATE_LIMIT: '0' }
      const a = await startIntake(intake.path, { cwd, args, env })
      const b = await startIntake(intake.path, { cwd, args, env })
      try {
        expect(a.apiKey).toBeDefined()
        const key = a.apiKey!
        for (let round = 0; round < 10; round++) {
          const created = await request(`${a.url}/api/v1/forms`, {
            key,
            body: { title: `Race ${round}`, fields: [{ key: 'name', type: 'text', label: 'Name' }] },
          })
          expect(created.status).toBe(201)
          const id = created.body.id
          // Alternate servers so that both processes' transactions contend for the same form.
          const results = await Promise.all(
            Array.from({ length: 20 }, (_, i) =>
              request(`${(i % 2 === 0 ? a : b).url}/f/${id}`, { method: 'POST', body: { name: `Submitter ${i}` } }),
            ),
          )
          const statuses = results.map((r) => r.status)
          expect(statuses.filter((s) => s === 201)).toHaveLength(1)
          expect(statuses.filter((s) => s === 409)).toHaveLength(19)
          const responses = await request(`${b.url}/api/v1/forms/${id}/responses`, { key })
          expect(responses.body).toHaveLength(1)
          expect(responses.body[0].id).toBe(results[statuses.indexOf(201)]!.body.id)
        }
      } finally {
        expect(await a.stop()).toBe(0)
        expect(await b.stop()).toBe(0)
      }
    },
    STEP_TIMEOUT,
  )
})
