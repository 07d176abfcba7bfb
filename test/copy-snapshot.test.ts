/**
 * `intake copy` while it runs: FROM is one snapshot while a server writes to
 * it (the copy holds the writes acknowledged before it began, none torn after),
 * and a copy killed with SIGKILL half-way leaves TO empty, taken as empty by
 * the next copy. SQLite always; PostgreSQL where INTAKE_TEST_DATABASE_URL
 * names a server.
 */

import { Database } from 'bun:sqlite'
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { copyData } from '../src/db/copy/index.ts'
import { BULK_KEY, bulkDatabase, countsOf, FILE_FIELD, noRows, STEP_TIMEOUT } from './copy-fixtures.ts'
import { childEnv, request, runIntake, startIntake, useBuiltBinary } from './e2e/binary.ts'
import { postgresFixtures } from './postgres.ts'
import { POSTGRES, skipWithout, TEST_DATABASE_URL } from './prerequisites.ts'
import { until } from './utils.ts'

const intake = useBuiltBinary('intake-copy-')
const skipPostgres = skipWithout(POSTGRES)
const pg = postgresFixtures(TEST_DATABASE_URL)

describe('FROM is one snapshot while a server writes to it', () => {
  const kinds = [
    { kind: 'sqlite', skip: false },
    { kind: 'postgres', skip: skipPostgres },
  ]
  for (const { kind, skip } of kinds) {
    test.skipIf(skip)(
      `${kind}: the copy holds the writes acknowledged before it began and none torn after`,
      async () => {
        const dir = intake.tempDir()
        const bulk = join(dir, 'bulk.db')
        bulkDatabase(bulk, 10_000, 30)
        let from = bulk
        let serveArgs = ['--db', bulk]
        if (kind === 'postgres') {
          from = (await pg.freshDatabase(false)).url
          await copyData(bulk, from)
          serveArgs = ['--database-url', from]
        }
        const server = await startIntake(intake.path, {
          cwd: dir,
          args: ['serve', '--port', '0', ...serveArgs],
          env: { SERVICE_RATE_LIMIT: '0', SERVICE_PUBLIC_RATE_LIMIT: '0' },
        })
        const created: Array<{ id: string; name: string }> = []
        let copying = true
        const writer = (async () => {
          for (let i = 0; copying; i++) {
            const form = await request(`${server.url}/api/v1/forms`, {
              key: BULK_KEY,
              body: { title: `Live ${i}`, fields: [{ key: 'name', type: 'text', label: 'Name' }, FILE_FIELD] },
            })
            expect(form.status).toBe(201)
            created.push({ id: form.body.id, name: `Ada ${i}` })
            const body = new FormData()
            body.set('name', `Ada ${i}`)
            body.set('doc', new File([randomBytes(600_000)], 'a.bin'))
            expect((await fetch(`${server.url}/f/${form.body.id}`, { method: 'POST', body })).status).toBeLessThan(400)
          }
        })()
        try {
          await until(() => created.length >= 3, 20_000, 'the first writes')
          const result = await runIntake(intake.path, ['copy', from, join(dir, 'snapshot.db')], {
            cwd: dir,
            timeoutMs: 120_000,
          })
          copying = false
          await writer
          expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' })
        } finally {
          copying = false
          await writer.catch(() => {})
          expect(await server.stop()).toBe(0)
        }
        const copy = new Database(join(dir, 'snapshot.db'), { strict: true })
        try {
          const ids = new Set(
            (copy.query(`SELECT id FROM forms WHERE title LIKE 'Live %'`).all() as Array<{ id: string }>).map(
              (r) => r.id,
            ),
          )
          // The live forms in the copy are the first k created, and FROM went on taking more.
          const k = ids.size
          expect(created.slice(0, k).every((form) => ids.has(form.id))).toBe(true)
          expect(k).toBeGreaterThanOrEqual(3)
          expect(created.length).toBeGreaterThan(k)
          // Each answered form has its whole answer: the response, its file row, every chunk; each answer its form completed.
          const answered = copy
            .query(
              `SELECT f.id, f.status, r.data, rf.size, (SELECT coalesce(sum(length(bytes)), 0) FROM file_chunks c WHERE c.file_id = rf.file_id) AS stored
             FROM forms f JOIN responses r ON r.form_id = f.id JOIN response_files rf ON rf.response_id = r.id WHERE f.title LIKE 'Live %'`,
            )
            .all() as Array<{ id: string; status: string; data: string; size: number; stored: number }>
          for (const row of answered) {
            expect(row).toMatchObject({ status: 'completed', size: 600_000, stored: 600_000 })
            expect(JSON.parse(row.data).name).toBe(created.find((form) => form.id === row.id)!.name)
          }
          const unanswered = copy
            .query(`SELECT id FROM forms WHERE title LIKE 'Live %' AND id NOT IN (SELECT form_id FROM responses)`)
            .all() as Array<{ id: string }>
          // Only the last form taken may be waiting for its answer: every earlier one was answered before the next was made.
          expect(unanswered.map((r) => r.id).filter((id) => id !== created[k - 1]!.id)).toEqual([])
          expect(
            (
              copy
                .query(
                  `SELECT count(*) AS n FROM forms WHERE status = 'completed' AND id NOT IN (SELECT form_id FROM responses)`,
                )
                .get() as { n: number }
            ).n,
          ).toBe(0)
        } finally {
          copy.close()
        }
      },
      180_000,
    )
  }
})

/** Runs the executable on a terminal of its own (progress shows there); the output as it arrives. */
function onTerminal(args: string[], cwd: string) {
  let output = ''
  const proc = Bun.spawn([intake.path, ...args], {
    cwd,
    env: childEnv(),
    terminal: { cols: 200, data: (_, data) => (output += new TextDecoder().decode(data)) },
  })
  return { proc, output: () => output }
}

describe('a copy killed with SIGKILL half-way leaves TO empty', () => {
  let dir: string
  let from: string
  const cleanups: Array<() => void> = []
  afterAll(() => cleanups.forEach((cleanup) => cleanup()))

  beforeAll(() => {
    dir = intake.tempDir()
    from = join(dir, 'bulk.db')
    bulkDatabase(from, 10_000, 100)
  }, STEP_TIMEOUT)

  const kinds = [
    { kind: 'sqlite', skip: false },
    { kind: 'postgres', skip: skipPostgres },
  ]
  for (const { kind, skip } of kinds) {
    test.skipIf(skip)(
      `${kind} TO: empty after the kill, and taken as empty by the next copy`,
      async () => {
        const to = kind === 'sqlite' ? join(dir, 'killed.db') : (await pg.freshDatabase(false)).url
        const copying = onTerminal(['copy', from, to], dir)
        cleanups.push(() => copying.proc.kill('SIGKILL'))
        // Files are copied after the forms: once some of their bytes are written, the copy is well under way.
        await until(
          () => /Copying: [\d,]+ of [\d,]+ rows, [\d.]+ [kMG]B of/.test(copying.output()),
          60_000,
          'file bytes being copied',
          () => copying.output().slice(-300),
        )
        expect(copying.proc.exitCode).toBeNull()
        copying.proc.kill('SIGKILL')
        await copying.proc.exited
        copying.proc.terminal?.close()
        expect(copying.output()).not.toContain('Copied')
        expect(copying.output()).toMatch(/rows\/s, .+ left/)
        expect(await countsOf(to)).toEqual(noRows)

        const small = join(intake.tempDir(), 'small.db')
        bulkDatabase(small, 3, 1)
        const again = await runIntake(intake.path, ['copy', small, to], { cwd: dir })
        expect({ code: again.code, stderr: again.stderr }).toEqual({ code: 0, stderr: '' })
        expect(await countsOf(to)).toEqual(await countsOf(small))
      },
      180_000,
    )
  }
})
