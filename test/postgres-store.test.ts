/**
 * The PostgreSQL store through the seam (src/stores.ts): what SQLite's
 * store answers, the races PostgreSQL decides with row locks (one response,
 * one form per Idempotency-Key, one account per name, claims that skip each
 * other), and the plans of the list queries. Each group of tests has a
 * database of its own. (The pool under load, migrations and a server that
 * goes away: postgres-availability.test.ts.)
 */
import { beforeAll, describe, expect, test } from 'bun:test'
import { randomBytes } from 'node:crypto'
import type { SQL } from 'bun'
import { describeDatabaseUrl, SESSION_SETTINGS } from '../src/db/postgres/connect.ts'
import type { Query } from '../src/db/postgres/driver.ts'
import { POSTGRES_SCHEMA_VERSION } from '../src/db/postgres/migrations.ts'
import { newId } from '../src/lib/ids.ts'
import type { NewForm } from '../src/modules/forms/store/index.ts'
import { createPostgresFormStore } from '../src/modules/forms/store/postgres.ts'
import { FILE_CHUNK_BYTES } from '../src/modules/responses/store/index.ts'
import type { DuePosition } from '../src/modules/webhooks/store/index.ts'
import type { PostgresStore } from '../src/stores.ts'
import { reportFigure } from './figures.ts'
import { formRecord, postgresFixtures, settle, T0, within } from './postgres.ts'

/** Only a hang takes this long: how soon the store hears of a change is reported for bench/check-bounds.ts. */
const HANG_MS = 10_000

import { POSTGRES, skipWithout, TEST_DATABASE_URL } from './prerequisites.ts'

const skipPostgres = skipWithout(POSTGRES)
const { freshDatabase, groupStore, inspect } = postgresFixtures(TEST_DATABASE_URL)

describe.skipIf(skipPostgres)('the PostgreSQL store', () => {
  const group = groupStore()
  let store: PostgresStore
  let sql: SQL
  let account: string

  beforeAll(async () => {
    if (skipPostgres) return
    store = group.store
    sql = inspect(group.url)
    account = await store.transaction((tx) => tx.keys.ensureAccount(newId(), 'default', T0))
  })

  test("is at this build's schema, and says where it is without a password", async () => {
    expect(store.kind).toBe('postgres')
    expect(store.schemaVersion).toBe(POSTGRES_SCHEMA_VERSION)
    expect(store.location).toMatch(/^postgres:\/\/[^:@/]+@127\.0\.0\.1:\d+\/intake_pool_[0-9a-f]+_[0-9a-f]+$/)
    expect(
      describeDatabaseUrl('postgresql://alice:s3cret@db.example.com:6543/forms?sslmode=require&password=other'),
    ).toBe('postgres://alice@db.example.com:6543/forms')
    expect(describeDatabaseUrl('postgres://db.example.com/forms')).toBe('postgres://db.example.com/forms')
    expect(describeDatabaseUrl('postgres://al%40ice:p%40ss@[::1]:5432/x')).toBe('postgres://al%40ice@[::1]:5432/x')
    expect(describeDatabaseUrl('not a url:s3cret@')).not.toContain('s3cret')
  })

  test('a form comes back as it went in: free-form JSON byte for byte, fields parsed, times as numbers', async () => {
    const context = '{"b" : 1,\n "a":"é \\u0000 \\ud83d\\ude00", "n": 1.50}'
    const created = formRecord(account, {
      context,
      callbackMetadata: '{"x":[1,2]}',
      settings: '{ }',
      description: 'Two\nlines',
      expiresAt: T0 + 60_000,
    })
    await store.transaction((tx) => tx.forms.insert(created))
    const found = await store.forms.find(created.id, T0)
    expect(found).toEqual({ ...created, status: 'active' })
    expect(found!.context).toBe(context)
    expect(typeof found!.createdAt).toBe('number')
    const [row] = await sql`SELECT pg_typeof(created_at)::text AS type, context FROM forms WHERE id = ${created.id}`
    expect(row).toEqual({ type: 'bigint', context })
    expect(await store.forms.findForAccount(account, created.id, T0)).toEqual(found)
    expect(await store.forms.findForAccount(newId(), created.id, T0)).toBeUndefined()
    expect(await store.forms.find(newId(), T0)).toBeUndefined()
  })

  test('expiry is computed in every read: expired (without context) from expires_at on, whatever the sweep wrote', async () => {
    const f = formRecord(account, { context: '{"secret":1}', expiresAt: T0 + 1000 })
    await store.transaction((tx) => tx.forms.insert(f))
    const before = T0 + 999
    const at = T0 + 1000
    expect((await store.forms.find(f.id, before))!.status).toBe('active')
    expect(await store.forms.find(f.id, at)).toMatchObject({ status: 'expired', context: null })
    expect(await store.forms.findPublicState(f.id, at)).toEqual({
      id: f.id,
      title: f.title,
      status: 'expired',
      page: f.page,
    })
    expect(await store.forms.findStateForAccount(account, f.id, at)).toEqual({
      id: f.id,
      status: 'expired',
      expiresAt: T0 + 1000,
      context: null,
    })
    expect(await store.forms.findStateForAccount(account, f.id, before)).toEqual({
      id: f.id,
      status: 'active',
      expiresAt: T0 + 1000,
      context: '{"secret":1}',
    })
    expect(await store.transaction((tx) => tx.forms.complete(f.id, at))).toBe(false)
    // The sweep writes it for good: once, whichever sweep gets there.
    const expired = await Promise.all([0, 1, 2].map(() => store.transaction((tx) => tx.forms.expireDue(at, 500))))
    expect(expired.flat().filter((form) => form.id === f.id)).toEqual([
      {
        id: f.id,
        accountId: account,
        callbackUrl: null,
        callbackEvents: ['form.completed'],
        callbackMetadata: '{}',
        context: '{"secret":1}',
        expiresAt: T0 + 1000,
      },
    ])
    const [row] = await sql`SELECT status, context FROM forms WHERE id = ${f.id}`
    expect(row).toEqual({ status: 'expired', context: null })
  })

  test("lists walk an account's forms newest first, page by page, with every status filter", async () => {
    const owner = await store.transaction((tx) => tx.keys.ensureAccount(newId(), 'lists', T0))
    const made: NewForm[] = []
    for (let i = 0; i < 25; i++)
      made.push(formRecord(owner, { title: `form ${i}`, expiresAt: i % 5 === 0 ? T0 + 10 : null }))
    await store.transaction(async (tx) => {
      for (const f of made) await tx.forms.insert(f)
      await tx.forms.setStatus(made[1]!.id, 'cancelled', T0)
      await tx.forms.setStatus(made[2]!.id, 'expired', T0)
    })
    const now = T0 + 100
    const page = (status: Parameters<typeof store.forms.list>[0]['status'], before?: string, limit = 10) =>
      store.forms.list({ accountId: owner, status, before, limit, now })
    const newestFirst = made.map((f) => f.id).reverse()
    const first = await page(undefined)
    expect(first.map((f) => f.id)).toEqual(newestFirst.slice(0, 10))
    const second = await page(undefined, first.at(-1)!.id)
    expect(second.map((f) => f.id)).toEqual(newestFirst.slice(10, 20))
    expect((await page(undefined, second.at(-1)!.id)).map((f) => f.id)).toEqual(newestFirst.slice(20))
    expect(first[0]).toEqual({
      id: made[24]!.id,
      title: 'form 24',
      description: null,
      fieldsCount: 1,
      status: 'active',
      expiresAt: null,
      createdAt: T0,
    })

    const pastTime = new Set(made.filter((f) => f.expiresAt !== null).map((f) => f.id))
    const expired = (await page('expired', undefined, 50)).map((f) => f.id)
    expect(expired).toEqual(newestFirst.filter((id) => pastTime.has(id) || id === made[2]!.id))
    expect((await page('expired', expired[1], 50)).map((f) => f.id)).toEqual(expired.slice(2))
    expect((await page('expired', undefined, 2)).map((f) => f.id)).toEqual(expired.slice(0, 2))
    const active = (await page('active', undefined, 50)).map((f) => f.id)
    expect(active).toEqual(newestFirst.filter((id) => !pastTime.has(id) && id !== made[1]!.id && id !== made[2]!.id))
    expect((await page('cancelled')).map((f) => f.id)).toEqual([made[1]!.id])
    expect(await page('completed')).toEqual([])
    expect(await store.forms.nextExpiryAt()).toBeNumber()
  })

  test('the one-response race: of 50 concurrent submissions, exactly one completes the form', async () => {
    const f = formRecord(account)
    await store.transaction((tx) => tx.forms.insert(f))
    const outcomes = await within(
      20_000,
      Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          store.transaction(async (tx) => {
            if (!(await tx.forms.complete(f.id, T0 + i))) return false
            await tx.responses.insert(
              {
                id: newId(),
                formId: f.id,
                data: { name: `person ${i}` },
                ip: null,
                userAgent: null,
                submittedAt: T0 + i,
              },
              [],
            )
            return true
          }),
        ),
      ),
    )
    expect(outcomes.filter(Boolean)).toHaveLength(1)
    expect(await store.responses.listForForm(f.id)).toHaveLength(1)
    expect((await store.forms.find(f.id, T0))!.status).toBe('completed')
  })

  test('units sent together: each answers for itself', async () => {
    const made = Array.from({ length: 40 }, (_, i) => formRecord(account, { title: `together ${i}` }))
    const shared = await within(20_000, Promise.all(made.map((f) => store.transaction((tx) => tx.forms.insert(f)))))
    expect(shared).toHaveLength(40)

    // A unit that throws (its own error, or the database's) takes back exactly its own writes.
    const existing = made[0]!
    const kept: NewForm[] = []
    const outcomes = await within(
      20_000,
      Promise.all(
        Array.from({ length: 30 }, (_, i) => {
          const f = formRecord(account, { title: `mixed ${i}` })
          if (i % 10 === 3) {
            return settle(
              store.transaction(async (tx) => {
                await tx.forms.insert(f)
                throw new Error(`unit ${i} refuses`)
              }),
            )
          }
          if (i % 10 === 7) return settle(store.transaction((tx) => tx.forms.insert({ ...f, id: existing.id })))
          kept.push(f)
          return settle(
            store.transaction(async (tx) => {
              await tx.forms.insert(f)
              return i
            }),
          )
        }),
      ),
    )
    outcomes.forEach((outcome, i) => {
      const error = outcome.ok ? undefined : (outcome.error as { errno?: string })
      if (i % 10 === 3) expect({ i, error: String(error) }).toEqual({ i, error: `Error: unit ${i} refuses` })
      else if (i % 10 === 7) expect({ i, code: error?.errno }).toEqual({ i, code: '23505' })
      else expect({ i, value: outcome.ok && outcome.value }).toEqual({ i, value: i })
    })
    const written = await sql`SELECT title FROM forms WHERE title LIKE 'mixed %' ORDER BY title`
    expect(written.map((r: { title: string }) => r.title)).toEqual(kept.map((f) => f.title).sort())
  })

  test('units sent together: each form answered once, by one of the units that ask for it; every response and delivery written', async () => {
    const forms = Array.from({ length: 30 }, (_, i) =>
      formRecord(account, { title: `answered ${i}`, expiresAt: i === 29 ? T0 + 5 : null }),
    )
    await Promise.all(forms.map((f) => store.transaction((tx) => tx.forms.insert(f))))
    // Two answers to each form, all sent at once; half of the forms queue a delivery with their answer.
    const asked = forms.flatMap((f, i) =>
      [0, 1].map((k) => ({ form: f, k, withDelivery: i % 2 === 0, responseId: newId(), at: T0 + 10 + k })),
    )
    const outcomes = await within(
      20_000,
      Promise.all(
        asked.map(({ form, k, withDelivery, responseId, at }) =>
          store.transaction(async (tx) => {
            if (!(await tx.forms.complete(form.id, at))) return false
            await tx.responses.insert(
              {
                id: responseId,
                formId: form.id,
                data: { k },
                ip: k === 0 ? '127.0.0.1' : null,
                userAgent: null,
                submittedAt: at,
              },
              [],
            )
            if (withDelivery) {
              await tx.deliveries.enqueue({
                id: newId(),
                formId: form.id,
                responseId,
                event: 'form.completed',
                url: 'http://127.0.0.1:9/hook',
                payload: `{"k":${k}}`,
                createdAt: at,
              })
            }
            return true
          }),
        ),
      ),
    )
    // The form past its time is answered by neither; every other form by exactly one of its two.
    const winner = new Map<string, number>()
    for (const [i, f] of forms.entries()) {
      const won = outcomes.filter((_, j) => asked[j]!.form.id === f.id)
      if (i === 29) expect({ i, won }).toEqual({ i, won: [false, false] })
      else expect({ i, wins: won.filter(Boolean).length }).toEqual({ i, wins: 1 })
      winner.set(f.id, won.indexOf(true))
    }
    const responses =
      await sql`SELECT form_id, data, ip, submitted_at::float8 AS at FROM responses WHERE form_id IN ${sql(forms.map((f) => f.id))}`
    expect(responses).toHaveLength(29)
    for (const row of responses) {
      const k = winner.get(row.form_id)!
      expect(row).toMatchObject({ data: `{"k":${k}}`, ip: k === 0 ? '127.0.0.1' : null, at: T0 + 10 + k })
    }
    const deliveries =
      await sql`SELECT form_id, status, payload, next_attempt_at::float8 AS due FROM deliveries WHERE form_id IN ${sql(forms.map((f) => f.id))}`
    expect(deliveries).toHaveLength(15)
    for (const row of deliveries) {
      const k = winner.get(row.form_id)!
      expect(row).toMatchObject({ status: 'pending', payload: `{"k":${k}}`, due: T0 + 10 + k })
    }
    const statuses =
      await sql`SELECT status, count(*)::int AS n FROM forms WHERE id IN ${sql(forms.map((f) => f.id))} GROUP BY status ORDER BY status`
    expect(statuses).toEqual([
      { status: 'active', n: 1 },
      { status: 'completed', n: 29 },
    ])
  })

  test('creates sent together: every column as given, absent ones null; one that fails fails alone', async () => {
    const existing = formRecord(account, { title: 'taken' })
    await store.transaction((tx) => tx.forms.insert(existing))
    const made = Array.from({ length: 24 }, (_, i) =>
      formRecord(account, {
        title: `made ${i}`,
        description: i % 2 ? `about ${i}` : null,
        callbackUrl: i % 3 ? null : 'http://127.0.0.1:9/hook',
        webhookSecret: i % 3 ? null : 'ab'.repeat(32),
        context: i % 4 ? null : `{"i":${i}}`,
        expiresAt: i % 5 ? null : T0 + 60_000 + i,
        createdAt: T0 + i,
      }),
    )
    const outcomes = await within(
      20_000,
      Promise.all([
        ...made.map((f) => settle(store.transaction((tx) => tx.forms.insert(f)))),
        settle(store.transaction((tx) => tx.forms.insert({ ...formRecord(account), id: existing.id }))),
      ]),
    )
    expect(outcomes.slice(0, -1).every((outcome) => outcome.ok)).toBe(true)
    const failed = outcomes.at(-1)!
    expect(failed.ok ? 'written' : (failed.error as { errno?: string }).errno).toBe('23505')
    for (const f of made) {
      const { fields: _, ...expected } = f
      expect(await store.forms.find(f.id, T0)).toMatchObject({ ...expected, status: 'active' })
    }
  })

  test('a row another transaction holds delays only the unit that wants it, not the units it was sent with', async () => {
    const held = formRecord(account)
    const free = Array.from({ length: 5 }, () => formRecord(account))
    await store.transaction(async (tx) => {
      await tx.forms.insert(held)
      for (const f of free) await tx.forms.insert(f)
    })
    const holder = await sql.reserve()
    try {
      await holder`BEGIN`
      await holder`SELECT id FROM forms WHERE id = ${held.id} FOR UPDATE`
      const complete = (id: string) => store.transaction((tx) => tx.forms.complete(id, T0 + 1))
      // Sent together, the held form's unit first.
      const waiting = complete(held.id)
      const others = await within(5_000, Promise.all(free.map((f) => complete(f.id))))
      expect(others).toEqual(free.map(() => true))
      expect(await Promise.race([waiting.then(() => 'done'), Bun.sleep(200).then(() => 'still waiting')])).toBe(
        'still waiting',
      )
      await holder`COMMIT`
      expect(await within(5_000, waiting)).toBe(true)
    } finally {
      holder.release()
    }
  })

  test("a unit that catches a failed statement fails with that statement's error, alone or sent with others: PostgreSQL rolled it back", async () => {
    const existing = formRecord(account)
    await store.transaction((tx) => tx.forms.insert(existing))
    const fresh = formRecord(account)
    const caught = (alongside: NewForm[]) =>
      Promise.all([
        settle(
          store.transaction(async (tx) => {
            await tx.forms.insert(fresh)
            // A duplicate id: the statement fails, and this unit looks away.
            await tx.forms.insert({ ...existing, title: 'again' }).catch(() => {})
            return 'written'
          }),
        ),
        ...alongside.map((f) => settle(store.transaction((tx) => tx.forms.insert(f)))),
      ])
    // Alone, and sent with others (which are written all the same).
    const others = [formRecord(account), formRecord(account)]
    for (const outcomes of [await caught([]), await caught(others)]) {
      expect(outcomes[0]!.ok).toBe(false)
      expect((outcomes[0] as { error: { errno?: string } }).error.errno).toBe('23505')
      expect(await store.forms.find(fresh.id, T0)).toBeUndefined()
    }
    for (const f of others) expect((await store.forms.find(f.id, T0))?.id).toBe(f.id)
  })

  test("a unit chosen as a deadlock's victim runs again and succeeds: neither caller sees the deadlock", async () => {
    const [x, y] = [formRecord(account), formRecord(account)]
    await store.transaction(async (tx) => {
      await tx.forms.insert(x)
      await tx.forms.insert(y)
    })
    // Each unit locks one form, waits until the other has locked its own, then
    // wants the other's: a deadlock, which PostgreSQL breaks by failing one.
    // (Tests may wait inside a unit; intake's own units never do.)
    const locked = { x: Promise.withResolvers<void>(), y: Promise.withResolvers<void>() }
    const crossing = (
      first: NewForm,
      second: NewForm,
      mine: PromiseWithResolvers<void>,
      theirs: PromiseWithResolvers<void>,
    ) => {
      let runs = 0
      const done = store.transaction(async (tx) => {
        runs++
        await tx.forms.findForAccountForUpdate(account, first.id, T0)
        mine.resolve()
        await theirs.promise
        await tx.forms.setStatus(second.id, 'cancelled', T0 + runs)
        return runs
      })
      return { done, runs: () => runs }
    }
    const a = crossing(x, y, locked.x, locked.y)
    await locked.x.promise
    const b = crossing(y, x, locked.y, locked.x)
    const outcomes = await within(10_000, Promise.all([settle(a.done), settle(b.done)]))
    expect(outcomes.map((o) => o.ok)).toEqual([true, true])
    // The winner ran once; the victim again (on a loaded machine it may be chosen more than once).
    const [winner, victim] = [a.runs(), b.runs()].sort()
    expect(winner).toBe(1)
    expect(victim).toBeGreaterThanOrEqual(2)
  })

  test('a plain read in a transaction locks nothing: only a ...ForUpdate read holds the row', async () => {
    const f = formRecord(account)
    await store.transaction((tx) => tx.forms.insert(f))
    const read = Promise.withResolvers<void>()
    const changed = Promise.withResolvers<void>()
    const reading = store.transaction(async (tx) => {
      await tx.forms.findForAccount(account, f.id, T0)
      read.resolve()
      await changed.promise
    })
    await read.promise
    // Were the row locked, this would wait for the unit above, which waits for this.
    await within(
      10_000,
      store.transaction((tx) => tx.forms.setExpiry(f.id, T0 + 1000, T0)),
    )
    changed.resolve()
    await reading
  })

  test('reads made together are answered together, each for its own form, account and time', async () => {
    const other = await store.transaction((tx) => tx.keys.ensureAccount(newId(), 'another', T0))
    const forms = [
      formRecord(account, { context: '{"n":0}' }),
      formRecord(account, { context: '{"n":1}', expiresAt: T0 + 500 }),
      formRecord(other, { context: '{"n":2}' }),
    ]
    await store.transaction(async (tx) => {
      for (const f of forms) await tx.forms.insert(f)
    })
    const [mine, expiring, theirs] = forms as [NewForm, NewForm, NewForm]
    const missing = newId()
    const answers = await Promise.all([
      store.forms.findStateForAccount(account, mine.id, T0),
      store.forms.findStateForAccount(account, theirs.id, T0),
      store.forms.findStateForAccount(other, theirs.id, T0),
      store.forms.findStateForAccount(account, expiring.id, T0 + 499.5),
      store.forms.findStateForAccount(account, expiring.id, T0 + 500),
      store.forms.findStateForAccount(account, missing, T0),
      store.forms.findPublicState(expiring.id, T0 + 499),
      store.forms.findPublicState(expiring.id, T0 + 500),
      store.forms.findPublicState(missing, T0),
      store.forms.find(expiring.id, T0 + 500),
      store.forms.find(theirs.id, T0),
      store.forms.find(missing, T0),
    ])
    expect(answers).toEqual([
      { id: mine.id, status: 'active', expiresAt: null, context: '{"n":0}' },
      undefined,
      { id: theirs.id, status: 'active', expiresAt: null, context: '{"n":2}' },
      { id: expiring.id, status: 'active', expiresAt: T0 + 500, context: '{"n":1}' },
      { id: expiring.id, status: 'expired', expiresAt: T0 + 500, context: null },
      undefined,
      { id: expiring.id, title: expiring.title, status: 'active', page: expiring.page },
      { id: expiring.id, title: expiring.title, status: 'expired', page: expiring.page },
      undefined,
      { ...expiring, status: 'expired', context: null },
      { ...theirs, status: 'active' },
      undefined,
    ])
  })

  test('one Idempotency-Key sent 20 times at once makes one form', async () => {
    const key = `key-${randomBytes(4).toString('hex')}`
    const create = (i: number) =>
      store.transaction(async (tx) => {
        const earlier = await tx.forms.idempotencyKeyForUpdate(account, key)
        if (earlier) return earlier.formId
        const f = formRecord(account, { title: `attempt ${i}` })
        await tx.forms.insert(f)
        await tx.forms.rememberIdempotencyKey({
          accountId: account,
          key,
          requestHash: 'h',
          formId: f.id,
          createdAt: T0,
        })
        return f.id
      })
    const ids = await within(20_000, Promise.all(Array.from({ length: 20 }, (_, i) => create(i))))
    expect(new Set(ids).size).toBe(1)
    const [row] = await sql`SELECT count(*)::int AS n FROM forms WHERE title LIKE 'attempt %'`
    expect(row.n).toBe(1)
    expect(await store.forms.idempotencyKey(account, key)).toEqual({ requestHash: 'h', formId: ids[0]!, createdAt: T0 })
    // A record past its window is replaced.
    const later = formRecord(account)
    await store.transaction(async (tx) => {
      await tx.forms.insert(later)
      await tx.forms.rememberIdempotencyKey({
        accountId: account,
        key,
        requestHash: 'h2',
        formId: later.id,
        createdAt: T0 + 1,
      })
    })
    expect(await store.forms.idempotencyKey(account, key)).toEqual({
      requestHash: 'h2',
      formId: later.id,
      createdAt: T0 + 1,
    })
    expect(await store.transaction((tx) => tx.forms.forgetIdempotencyKeysBefore(T0 + 2))).toBeGreaterThanOrEqual(1)
    expect(await store.forms.idempotencyKey(account, key)).toBeUndefined()
  })

  test("a file's 512 KiB chunks come back byte for byte; unclaimed until an answer holds them, again once it is deleted", async () => {
    const fileId = newId()
    const chunks = [randomBytes(FILE_CHUNK_BYTES), randomBytes(FILE_CHUNK_BYTES), randomBytes(1234)]
    for (const [seq, bytes] of chunks.entries()) {
      await store.stagedTransaction((tx) => tx.responses.writeChunk(fileId, seq, new Uint8Array(bytes), T0 + 5))
    }
    for (const [seq, bytes] of chunks.entries()) {
      const back = await store.responses.chunk(fileId, seq)
      expect(back).toBeInstanceOf(Uint8Array)
      expect(Buffer.from(back!).equals(bytes)).toBe(true)
    }
    expect(await store.responses.chunk(fileId, 3)).toBeUndefined()
    const size = chunks.reduce((total, bytes) => total + bytes.length, 0)
    expect(await store.responses.incompleteFiles([{ fileId, size }])).toEqual([])
    expect(
      await store.responses.incompleteFiles([
        { fileId, size: size - 1 },
        { fileId: newId(), size: 0 },
      ]),
    ).toEqual([fileId])
    // Written at T0 + 5: not idle since T0 + 4.
    expect(await store.stagedTransaction((tx) => tx.responses.removeIdleChunks(T0 + 4, 2))).toBe(false)

    const f = formRecord(account)
    const responseId = newId()
    await store.transaction(async (tx) => {
      await tx.forms.insert(f)
      expect(await tx.forms.complete(f.id, T0)).toBe(true)
      await tx.responses.insert(
        { id: responseId, formId: f.id, data: { doc: 'a.bin' }, ip: '127.0.0.1', userAgent: 'test', submittedAt: T0 },
        [{ fieldKey: 'doc', name: 'a.bin', contentType: 'application/octet-stream', size, fileId }],
      )
    })
    // Claimed: never removed, however long ago it was written.
    expect(await store.stagedTransaction((tx) => tx.responses.removeIdleChunks(T0 + 5, 2))).toBe(false)
    expect(await store.responses.file(f.id, responseId, 'doc')).toEqual({
      name: 'a.bin',
      contentType: 'application/octet-stream',
      size,
      fileId,
    })
    expect(await store.responses.find(f.id, responseId)).toEqual({
      id: responseId,
      formId: f.id,
      data: { doc: 'a.bin' },
      ip: '127.0.0.1',
      userAgent: 'test',
      submittedAt: T0,
    })

    // Deleting the form takes the response and its file row; the trigger unclaims the chunks (since 0: at once).
    expect(await store.transaction((tx) => tx.forms.delete(account, f.id))).toBe(true)
    expect(await store.stagedTransaction((tx) => tx.responses.removeIdleChunks(0, 2))).toBe(true)
    expect(await store.responses.chunk(fileId, 1)).toBeUndefined()
    expect(await store.stagedTransaction((tx) => tx.responses.removeIdleChunks(0, 2))).toBe(true)
    expect(await store.responses.chunk(fileId, 2)).toBeUndefined()
    expect(await store.stagedTransaction((tx) => tx.responses.removeIdleChunks(0, 2))).toBe(false)

    // Unclaimed at once (since 0) stays so, whatever chunk still lands; then it is forgotten.
    await store.transaction((tx) => tx.responses.unclaimFiles([fileId, fileId]))
    await store.stagedTransaction((tx) => tx.responses.writeChunk(fileId, 0, new Uint8Array(3), T0 + 9))
    expect(await store.stagedTransaction((tx) => tx.responses.removeIdleChunks(0, 2))).toBe(true)
    expect(await store.responses.chunk(fileId, 0)).toBeUndefined()
    expect(await store.stagedTransaction((tx) => tx.responses.removeIdleChunks(0, 2))).toBe(false)
  })

  test('the sweep leaves whole a file whose chunk is being written meanwhile, and one stamped since it looked', async () => {
    const fileId = newId()
    const chunkOf = async () =>
      (await sql`SELECT count(*)::int AS n FROM file_chunks WHERE file_id = ${fileId}`)[0].n as number
    await store.stagedTransaction((tx) => tx.responses.writeChunk(fileId, 0, new Uint8Array(10), T0 + 50))
    // A chunk arriving: its write holds the file's row, uncommitted, until told to commit.
    let commit!: () => void
    const committed = new Promise<void>((resolve) => (commit = resolve))
    let writing!: () => void
    const begun = new Promise<void>((resolve) => (writing = resolve))
    const write = sql.begin(async (tx) => {
      await tx`INSERT INTO file_chunks (file_id, seq, bytes) VALUES (${fileId}, 1, ${new Uint8Array(10)})`
      await tx`UPDATE unclaimed_files SET since = ${T0 + 70} WHERE file_id = ${fileId}`
      writing()
      await committed
    })
    await begun
    // The file looked idle since T0 + 50, but it is being written: the sweep passes it by without waiting.
    for (let i = 0; i < 5; i++)
      await within(
        5_000,
        store.stagedTransaction((tx) => tx.responses.removeIdleChunks(T0 + 60, 4)),
      )
    expect(await chunkOf()).toBe(1)
    commit()
    await write
    for (let i = 0; i < 5; i++) await store.stagedTransaction((tx) => tx.responses.removeIdleChunks(T0 + 60, 4))
    expect(await chunkOf()).toBe(2)
    // Idle since its last chunk: then it goes.
    while (await store.stagedTransaction((tx) => tx.responses.removeIdleChunks(T0 + 70, 4))) {}
    expect(await chunkOf()).toBe(0)
  })

  test('webhook targets of many forms in one query; accounts are made once however many ask at once', async () => {
    const withHook = formRecord(account, { callbackUrl: 'https://example.com/hook', webhookSecret: 'a'.repeat(64) })
    const without = formRecord(account)
    await store.transaction(async (tx) => {
      await tx.forms.insert(withHook)
      await tx.forms.insert(without)
    })
    const targets = await store.forms.webhookTargets([withHook.id, without.id, withHook.id, newId()])
    expect([...targets]).toEqual([[withHook.id, { accountId: account, secret: 'a'.repeat(64) }]])
    expect((await store.forms.webhookTargets([])).size).toBe(0)

    const ids = await Promise.all(
      Array.from({ length: 20 }, () => store.transaction((tx) => tx.keys.ensureAccount(newId(), 'raced', T0))),
    )
    expect(new Set(ids).size).toBe(1)
  })

  test('keys: found by hash, listed, touched, revoked once; keysVersion holds while its channel is heard and no key changes', async () => {
    const id = newId()
    await store.transaction((tx) =>
      tx.keys.insertKey({ id, accountId: account, hash: 'f'.repeat(64), hint: 'wxyz', createdAt: T0 }),
    )
    expect(await store.keys.keyByHash('f'.repeat(64))).toEqual({
      id,
      accountId: account,
      lastUsedAt: null,
      revokedAt: null,
    })
    expect(await store.keys.usableKeyExists()).toBe(true)
    await store.transaction((tx) => tx.keys.touch(id, T0 + 7))
    expect(await store.keys.listKeys()).toContainEqual({
      id,
      account: 'default',
      hint: 'wxyz',
      createdAt: T0,
      lastUsedAt: T0 + 7,
      revokedAt: null,
    })
    expect(await store.transaction((tx) => tx.keys.revoke(id, T0 + 8))).toBe(true)
    expect(await store.transaction((tx) => tx.keys.revoke(id, T0 + 9))).toBe(false)
    expect((await store.keys.keyByHash('f'.repeat(64)))!.revokedAt).toBe(T0 + 8)
    expect(await store.keys.keyExists(id)).toBe(true)
    expect(await store.keys.keyExists(newId())).toBe(false)
    // Until the store hears its notification channel, nothing may be remembered: a new value every call.
    expect(await store.keys.keysVersion()).not.toBe(await store.keys.keysVersion())
    const heldFor = async (ms: number) => {
      const version = await store.keys.keysVersion()
      await Bun.sleep(ms)
      return (await store.keys.keysVersion()) === version
    }
    const startedAt = performance.now()
    while (!(await heldFor(50))) expect(performance.now() - startedAt).toBeLessThan(HANG_MS)
    reportFigure('keys version held once listening (ms)', 'the first heartbeat', performance.now() - startedAt)
    // Held across heartbeats (every 250 ms) while no key changes; a key written (here, by this store) changes it.
    expect(await heldFor(600)).toBe(true)
    const before = await store.keys.keysVersion()
    await store.transaction((tx) =>
      tx.keys.insertKey({ id: newId(), accountId: account, hash: 'e'.repeat(64), hint: 'abcd', createdAt: T0 }),
    )
    const changedAt = performance.now()
    while ((await store.keys.keysVersion()) === before) {
      expect(performance.now() - changedAt).toBeLessThan(HANG_MS)
      await Bun.sleep(5)
    }
    reportFigure('keys version changed, heard after (ms)', 'a key written', performance.now() - changedAt)
  })
})

describe.skipIf(skipPostgres)('deliveries on PostgreSQL', () => {
  const group = groupStore()
  let store: PostgresStore
  let account: string

  beforeAll(async () => {
    if (skipPostgres) return
    store = group.store
    account = await store.transaction((tx) => tx.keys.ensureAccount(newId(), 'default', T0))
  })

  /** A completed form with a response and `count` deliveries due at `dueAt`. */
  async function queue(count: number, dueAt = T0): Promise<string[]> {
    const f = formRecord(account, { callbackUrl: 'https://example.com/hook', webhookSecret: 'b'.repeat(64) })
    const responseId = newId()
    const ids = Array.from({ length: count }, () => newId())
    await store.transaction(async (tx) => {
      await tx.forms.insert(f)
      await tx.forms.complete(f.id, T0)
      await tx.responses.insert(
        { id: responseId, formId: f.id, data: {}, ip: null, userAgent: null, submittedAt: T0 },
        [],
      )
      for (const id of ids)
        await tx.deliveries.enqueue({
          id,
          formId: f.id,
          responseId,
          event: 'form.completed',
          url: 'https://example.com/hook',
          payload: `{"id":"${id}"}`,
          createdAt: dueAt,
        })
    })
    return ids
  }

  test('two concurrent claims never take the same delivery: rows one is taking, the other skips without waiting', async () => {
    const ids = await queue(30)
    const now = T0 + 10
    let release!: () => void
    const held = new Promise<void>((resolve) => (release = resolve))
    let tookFirst!: (ids: string[]) => void
    const firstTook = new Promise<string[]>((resolve) => (tookFirst = resolve))
    // The first claim takes the 10 newest and holds them, uncommitted, until told to commit.
    const first = store.transaction(async (tx) => {
      const due = await tx.deliveries.dueNewest(now, 10)
      const leased = await tx.deliveries.lease(
        due.map((d) => d.id),
        30_000,
        now,
      )
      tookFirst(leased.map((d) => d.id))
      await held
      return leased
    })
    const firstIds = await firstTook
    expect(firstIds).toEqual(ids.slice(-10).reverse())
    // A second claim of every due delivery meanwhile takes the other 20, at once.
    const second = await within(
      5000,
      store.transaction(async (tx) => {
        const due = await tx.deliveries.dueNewest(now, 100)
        return (
          await tx.deliveries.lease(
            due.map((d) => d.id),
            30_000,
            now,
          )
        ).map((d) => d.id)
      }),
    )
    expect(second.toSorted()).toEqual(ids.slice(0, 20).toSorted())
    release()
    const leased = await first
    expect(leased[0]).toMatchObject({ roundAttempts: 1, payload: `{"id":"${firstIds[0]}"}` })
    // The lease runs on the database's clock (this machine's here): 30 s from the claim.
    expect(Math.abs(leased[0]!.leaseUntil - (Date.now() + 30_000))).toBeLessThan(5000)
    // Once both committed, a claim of them all takes none until the leases run out, however far
    // ahead the claimer's own clock is: the database's clock decides (CONTRACT 10).
    expect(await store.transaction((tx) => tx.deliveries.lease(ids, 30_000, now))).toEqual([])
    expect(await store.transaction((tx) => tx.deliveries.lease(ids, 30_000, now + 3_600_000))).toEqual([])
    expect((await store.transaction((tx) => tx.deliveries.dueNewest(now + 3_600_000, 100))).length).toBe(0)
  })

  test("a lease runs out on the database's clock: the delivery can then be claimed again", async () => {
    const [id] = await queue(1)
    const now = T0 + 20
    const first = await store.transaction((tx) => tx.deliveries.lease([id!], 200, now))
    expect(first.map((d) => d.roundAttempts)).toEqual([1])
    expect(await store.transaction((tx) => tx.deliveries.lease([id!], 200, now))).toEqual([])
    await Bun.sleep(300)
    const again = await store.transaction((tx) => tx.deliveries.lease([id!], 200, now))
    expect(again.map((d) => d.roundAttempts)).toEqual([2])
    expect(again[0]!.leaseUntil).toBeGreaterThan(first[0]!.leaseUntil)
  })

  test('the scan goes through deliveries due at the same moment by id, a page at a time', async () => {
    const ids = await queue(7, T0 - 1_000_000)
    const now = T0 - 1_000_000
    const seen: string[] = []
    let from: DuePosition | null = null
    for (;;) {
      const due = await store.transaction((tx) => tx.deliveries.dueAfter(now, from, 3))
      seen.push(...due.map((d) => d.id))
      if (due.length < 3) break
      from = due.at(-1)!.position
    }
    expect(seen).toEqual(ids)
    expect(await store.deliveries.earliestDueAfter(-Infinity)).toBe(now)
    expect(await store.deliveries.earliestDueAfter(now)).toBe(T0)
  })

  test('attempts are recorded while their claim holds; a failed round can be redelivered', async () => {
    const queued = await queue(3)
    const [a, b, c] = queued
    const now = T0 + 50
    const leased = await store.transaction((tx) => tx.deliveries.lease([a!, b!, c!], 1000, now))
    expect(leased.map((d) => d.id)).toEqual(queued)
    const lease = leased[0]!.leaseUntil
    await store.transaction((tx) =>
      tx.deliveries.recordAttempts([
        {
          id: a!,
          lease,
          roundAttempt: 1,
          now: now + 10,
          delivered: true,
          statusCode: 200,
          error: null,
          attemptsPerRound: 2,
          retryDelayMs: 1000,
        },
        {
          id: b!,
          lease,
          roundAttempt: 1,
          now: now + 10,
          delivered: false,
          statusCode: 500,
          error: 'HTTP 500',
          attemptsPerRound: 2,
          retryDelayMs: 1000,
        },
        {
          id: c!,
          lease: lease - 1,
          roundAttempt: 1,
          now: now + 10,
          delivered: true,
          statusCode: 200,
          error: null,
          attemptsPerRound: 2,
          retryDelayMs: 1000,
        },
      ]),
    )
    const formId = leased[0]!.formId
    const records = new Map((await store.deliveries.listForForm(formId)).map((d) => [d.id, d]))
    expect(records.get(a!)).toMatchObject({
      status: 'delivered',
      attempts: 1,
      lastStatusCode: 200,
      deliveredAt: now + 10,
      nextAttemptAt: null,
    })
    expect(records.get(b!)).toMatchObject({
      status: 'pending',
      attempts: 1,
      lastStatusCode: 500,
      lastError: 'HTTP 500',
      nextAttemptAt: now + 10 + 1000,
    })
    // Its claim was not this one: nothing recorded, the lease stays.
    expect(records.get(c!)).toMatchObject({ status: 'pending', attempts: 1, lastStatusCode: null, nextAttemptAt: T0 })

    // b is due again 1 s after its failed attempt.
    expect(await store.transaction((tx) => tx.deliveries.lease([b!], 5000, now + 500))).toEqual([])
    const [retried] = await store.transaction((tx) => tx.deliveries.lease([b!], 5000, now + 1010))
    await store.transaction((tx) =>
      tx.deliveries.recordAttempts([
        {
          id: b!,
          lease: retried!.leaseUntil,
          roundAttempt: 2,
          now: now + 2000,
          delivered: false,
          statusCode: null,
          error: 'timeout',
          attemptsPerRound: 2,
          retryDelayMs: 1000,
        },
      ]),
    )
    expect((await store.deliveries.listForForm(formId)).find((d) => d.id === b)).toMatchObject({
      status: 'failed',
      attempts: 2,
      nextAttemptAt: null,
    })
    expect(await store.transaction((tx) => tx.deliveries.redeliver(formId, b!, now + 3000))).toBe(true)
    expect(await store.transaction((tx) => tx.deliveries.redeliver(formId, b!, now + 3000))).toBe(false)
    expect((await store.deliveries.listForForm(formId)).find((d) => d.id === b)).toMatchObject({
      status: 'pending',
      nextAttemptAt: now + 3000,
    })
    expect(await store.transaction((tx) => tx.deliveries.lease([], now, now))).toEqual([])
  })
})

describe.skipIf(skipPostgres)('query plans', () => {
  /** Every statement a call makes, with its parameters, without running it. */
  async function statementsOf(call: (query: Query) => Promise<unknown>): Promise<Array<[string, unknown[]]>> {
    const seen: Array<[string, unknown[]]> = []
    const query = (async (text: string, params: unknown[] = []) => {
      seen.push([text, params])
      return Object.assign([], { count: 0 })
    }) as Query
    await call(query).catch(() => {})
    return seen
  }

  test("form lists walk an account's index, never the table nor every form by id, beside 20,000 forms of another account", async () => {
    const database = await freshDatabase()
    // One connection set up as the store's are; each statement prepared as Bun prepares it, and run as it is the sixth time.
    const sql = inspect(database.url, { max: 1, connection: SESSION_SETTINGS })
    await sql.unsafe(`INSERT INTO accounts (id, name, created_at) VALUES ('A', 'big', 0), ('B', 'small', 0)`)
    await sql.unsafe(`INSERT INTO forms (id, account_id, title, fields, fields_count, callback_metadata, settings, status, expires_at, created_at, updated_at)
      SELECT lpad(to_hex(i), 26, '0'), CASE WHEN i % 2000 = 0 THEN 'B' ELSE 'A' END, 'f', '[]', 0, '{}', '{}',
        (ARRAY['active', 'completed', 'expired', 'cancelled'])[i % 4 + 1], CASE WHEN i % 4 = 0 THEN ${T0} + i ELSE NULL END, 0, 0
      FROM generate_series(1, 20000) i`)
    await sql.unsafe('ANALYZE forms')
    const statements = await statementsOf(async (query) => {
      const forms = createPostgresFormStore(query)
      for (const status of [undefined, 'active', 'expired', 'completed'] as const) {
        await forms.list({ accountId: 'B', status, before: undefined, limit: 50, now: T0 + 25_000 })
        await forms.list({ accountId: 'B', status, before: '00000000000000000000004000', limit: 50, now: T0 + 25_000 })
      }
      await forms.nextExpiryAt()
    })
    expect(statements).toHaveLength(9)
    const literal = (value: unknown) => (typeof value === 'string' ? `'${value}'` : String(value))
    for (const [text, params] of statements) {
      await sql.unsafe(`PREPARE listed AS ${text}`)
      for (let run = 0; run < 5; run++)
        await sql.unsafe(`EXECUTE listed${params.length ? `(${params.map(literal).join(', ')})` : ''}`)
      const [{ 'QUERY PLAN': plan }] = await sql.unsafe(
        `EXPLAIN (FORMAT JSON) EXECUTE listed${params.length ? `(${params.map(literal).join(', ')})` : ''}`,
      )
      await sql.unsafe('DEALLOCATE listed')
      const nodes: Array<Record<string, unknown>> = []
      const walk = (node: Record<string, unknown>) => {
        nodes.push(node)
        for (const child of (node.Plans as Array<Record<string, unknown>>) ?? []) walk(child)
      }
      walk(plan[0].Plan)
      const onForms = nodes.filter((node) => node['Relation Name'] === 'forms')
      expect(onForms.length).toBeGreaterThan(0)
      for (const node of onForms) {
        expect(node['Node Type']).not.toBe('Seq Scan')
        // The primary key only to look up ids the expiry index found, never to walk all forms in id order.
        if (node['Index Name'] === 'forms_pkey') expect(String(node['Index Cond'])).toMatch(/^\(id = /)
      }
    }
  }, 30_000)
})
