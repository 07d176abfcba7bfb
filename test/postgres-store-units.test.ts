/**
 * Units of work on the PostgreSQL store (src/stores.ts): units sent together
 * each answer for themselves, and the races PostgreSQL decides with row locks
 * (one response per form, one form per Idempotency-Key, deadlocks run again,
 * plain reads lock nothing). The group has a database of its own.
 */
import { beforeAll, describe, expect, test } from 'bun:test'
import { randomBytes } from 'node:crypto'
import type { SQL } from 'bun'
import { newId } from '../src/lib/ids.ts'
import type { NewForm } from '../src/modules/forms/store/index.ts'
import type { PostgresStore } from '../src/stores.ts'
import { formRecord, postgresFixtures, settle, T0, within } from './postgres.ts'
import { POSTGRES, skipWithout, TEST_DATABASE_URL } from './prerequisites.ts'

const skipPostgres = skipWithout(POSTGRES)
const { groupStore, inspect } = postgresFixtures(TEST_DATABASE_URL)

describe.skipIf(skipPostgres)('units of work on the PostgreSQL store', () => {
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
})
