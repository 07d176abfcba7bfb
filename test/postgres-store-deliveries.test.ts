/**
 * Deliveries on the PostgreSQL store (src/stores.ts): claims that skip each
 * other's rows, leases on the database's clock, the due scan a page at a
 * time, attempts and redelivery. The group has a database of its own.
 */
import { beforeAll, describe, expect, test } from 'bun:test'
import { newId } from '../src/lib/ids.ts'
import type { DuePosition } from '../src/modules/webhooks/store/index.ts'
import type { PostgresStore } from '../src/stores.ts'
import { formRecord, postgresFixtures, T0, within } from './postgres.ts'
import { POSTGRES, skipWithout, TEST_DATABASE_URL } from './prerequisites.ts'

const skipPostgres = skipWithout(POSTGRES)
const { groupStore } = postgresFixtures(TEST_DATABASE_URL)

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
