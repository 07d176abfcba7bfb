/** Every method of the webhooks store (the deliveries outbox), on every driver, and claims across two connections. */
import { expect } from 'bun:test'
import { newId } from '../../src/lib/ids.ts'
import type { AttemptRecord, DueDelivery, DuePosition } from '../../src/modules/webhooks/store/index.ts'
import type { Store } from '../../src/stores.ts'
import { within } from '../postgres.ts'
import { formRecord, runOnEveryDriver, type StoreCase, T0 } from './drivers.ts'

const HOOK = 'https://example.com/hook'

/** A completed form with its response and `count` deliveries queued at `createdAt` (ids in queueing order). */
async function queue(store: Store, accountId: string, count: number, createdAt = T0) {
  const form = formRecord(accountId, { callbackUrl: HOOK, webhookSecret: 'b'.repeat(64) })
  const responseId = newId()
  const ids = Array.from({ length: count }, () => newId())
  await store.transaction(async (tx) => {
    await tx.forms.insert(form)
    await tx.forms.complete(form.id, T0)
    await tx.responses.insert(
      { id: responseId, formId: form.id, data: {}, ip: null, userAgent: null, submittedAt: T0 },
      [],
    )
    for (const id of ids)
      await tx.deliveries.enqueue({
        id,
        formId: form.id,
        responseId,
        event: 'form.completed',
        url: HOOK,
        payload: `{"id":"${id}"}`,
        createdAt,
      })
  })
  return { formId: form.id, ids }
}

const attempt = (id: string, lease: number, now: number, outcome: Partial<AttemptRecord> = {}): AttemptRecord => ({
  id,
  lease,
  roundAttempt: 1,
  now,
  delivered: true,
  statusCode: 200,
  error: null,
  attemptsPerRound: 2,
  retryDelayMs: 1000,
  ...outcome,
})

const cases: StoreCase[] = [
  {
    name: 'enqueue: pending and due at once; listForForm and earliestDueAfter read it',
    async run({ store, account }) {
      const owner = await account()
      expect(await store.deliveries.earliestDueAfter(-Infinity)).toBeNull()
      const { formId, ids } = await queue(store, owner, 2)
      expect(await store.deliveries.listForForm(formId)).toEqual(
        ids.map((id) => ({
          id,
          formId,
          url: HOOK,
          event: 'form.completed',
          status: 'pending',
          attempts: 0,
          lastStatusCode: null,
          lastError: null,
          nextAttemptAt: T0,
          deliveredAt: null,
          createdAt: T0,
        })),
      )
      expect(await store.deliveries.listForForm(newId())).toEqual([])
      expect(await store.deliveries.earliestDueAfter(-Infinity)).toBe(T0)
      expect(await store.deliveries.earliestDueAfter(T0)).toBeNull()
    },
  },
  {
    name: 'dueNewest looks at the newest due first; dueAfter walks them oldest first, a page at a time, by id at one time',
    async run({ store, account }) {
      const owner = await account()
      const older = await queue(store, owner, 7, T0 - 1000)
      const newer = await queue(store, owner, 2, T0)
      await queue(store, owner, 1, T0 + 1000)
      const now = T0
      expect((await store.transaction((tx) => tx.deliveries.dueNewest(now, 3))).map((d) => d.id)).toEqual([
        ...newer.ids.toReversed(),
        older.ids.at(-1)!,
      ])
      const [first] = await store.transaction((tx) => tx.deliveries.dueNewest(now, 1))
      expect(first).toMatchObject({ id: newer.ids[1], formId: newer.formId, url: HOOK })
      const seen: string[] = []
      let from: DuePosition | null = null
      for (;;) {
        const due: DueDelivery[] = await store.transaction((tx) => tx.deliveries.dueAfter(now, from, 3))
        seen.push(...due.map((d) => d.id))
        if (due.length < 3) break
        from = due.at(-1)!.position
      }
      expect(seen).toEqual([...older.ids, ...newer.ids])
      expect(await store.deliveries.earliestDueAfter(T0 - 1000)).toBe(T0)
    },
  },
  {
    name: 'lease takes those still due and held by no attempt; recordAttempts counts only while its claim holds',
    async run({ store, account }) {
      const owner = await account()
      const { formId, ids } = await queue(store, owner, 3)
      const [a, b, c] = ids as [string, string, string]
      const now = T0 + 50
      expect(await store.transaction((tx) => tx.deliveries.lease(ids, 60_000, T0 - 1))).toEqual([])
      expect(await store.deliveries.countPending()).toBe(3)
      const leased = await store.transaction((tx) => tx.deliveries.lease(ids, 60_000, now))
      expect(leased.map((d) => [d.id, d.roundAttempts, d.payload])).toEqual(ids.map((id) => [id, 1, `{"id":"${id}"}`]))
      // A form.completed delivery carries when its answer came (it was queued with it).
      expect(leased[0]).toMatchObject({ formId, event: 'form.completed', url: HOOK, answeredAt: T0 })
      // Leased is still pending: the attempt has not ended.
      expect(await store.deliveries.countPending()).toBe(3)
      // Held: neither leased again nor offered as due.
      expect(await store.transaction((tx) => tx.deliveries.lease(ids, 60_000, now))).toEqual([])
      expect(await store.transaction((tx) => tx.deliveries.dueNewest(now, 10))).toEqual([])
      const lease = leased[0]!.leaseUntil
      await store.transaction((tx) =>
        tx.deliveries.recordAttempts([
          attempt(a, lease, now + 10),
          attempt(b, lease, now + 10, { delivered: false, statusCode: 500, error: 'HTTP 500' }),
          attempt(c, lease - 1, now + 10),
        ]),
      )
      const records = new Map((await store.deliveries.listForForm(formId)).map((d) => [d.id, d]))
      expect(records.get(a)).toMatchObject({
        status: 'delivered',
        attempts: 1,
        lastStatusCode: 200,
        deliveredAt: now + 10,
      })
      expect(records.get(a)!.nextAttemptAt).toBeNull()
      // The retry comes retryDelayMs after the failed attempt (SERVICE_WEBHOOK_RETRY_SCHEDULE).
      expect(records.get(b)).toMatchObject({
        status: 'pending',
        attempts: 1,
        lastStatusCode: 500,
        lastError: 'HTTP 500',
        nextAttemptAt: now + 10 + 1000,
      })
      // Not its claim: nothing recorded.
      expect(records.get(c)).toMatchObject({ status: 'pending', attempts: 1, lastStatusCode: null, nextAttemptAt: T0 })
      expect(await store.transaction((tx) => tx.deliveries.lease([b], 60_000, now + 1009))).toEqual([])
      const [retry] = await store.transaction((tx) => tx.deliveries.lease([b], 60_000, now + 1010))
      expect(retry!.roundAttempts).toBe(2)
      // The round's last attempt fails: the delivery has failed.
      await store.transaction((tx) =>
        tx.deliveries.recordAttempts([
          attempt(b, retry!.leaseUntil, now + 2000, {
            roundAttempt: 2,
            delivered: false,
            statusCode: null,
            error: 'timeout',
          }),
        ]),
      )
      expect((await store.deliveries.listForForm(formId)).find((d) => d.id === b)).toMatchObject({
        status: 'failed',
        attempts: 2,
        lastError: 'timeout',
        nextAttemptAt: null,
      })
      // a delivered, b failed for good; c's outcome came with a claim it no longer held: still pending.
      expect(await store.deliveries.countPending()).toBe(1)
      await store.transaction((tx) => tx.deliveries.recordAttempts([]))
      expect(await store.transaction((tx) => tx.deliveries.lease([], 1000, now))).toEqual([])
    },
  },
  {
    name: 'redeliver starts a new round for a delivered or failed delivery, never a pending one',
    async run({ store, account }) {
      const owner = await account()
      const { formId, ids } = await queue(store, owner, 2)
      const [done, waiting] = ids as [string, string]
      const [leased] = await store.transaction((tx) => tx.deliveries.lease([done], 60_000, T0))
      await store.transaction((tx) => tx.deliveries.recordAttempts([attempt(done, leased!.leaseUntil, T0 + 1)]))
      expect(await store.transaction((tx) => tx.deliveries.redeliver(formId, waiting, T0 + 5))).toBe(false)
      expect(await store.transaction((tx) => tx.deliveries.redeliver(newId(), done, T0 + 5))).toBe(false)
      expect(await store.transaction((tx) => tx.deliveries.redeliver(formId, done, T0 + 5))).toBe(true)
      expect(await store.transaction((tx) => tx.deliveries.redeliver(formId, done, T0 + 5))).toBe(false)
      expect((await store.deliveries.listForForm(formId)).find((d) => d.id === done)).toMatchObject({
        status: 'pending',
        attempts: 1,
        nextAttemptAt: T0 + 5,
      })
      const [again] = await store.transaction((tx) => tx.deliveries.lease([done], 60_000, T0 + 5))
      expect(again!.roundAttempts).toBe(1)
    },
  },
  {
    name: 'forgetSettledBefore removes settled deliveries of one event made before a time, up to a limit',
    async run({ store, account }) {
      const owner = await account()
      const form = formRecord(owner, { callbackUrl: HOOK, webhookSecret: 'b'.repeat(64) })
      const ids = [newId(), newId(), newId(), newId()]
      await store.transaction(async (tx) => {
        await tx.forms.insert(form)
        for (const [i, id] of ids.entries())
          await tx.deliveries.enqueue({
            id,
            formId: form.id,
            responseId: null,
            event: i === 3 ? 'form.cancelled' : 'form.expired',
            url: HOOK,
            payload: '{}',
            createdAt: T0 + i,
          })
      })
      const leased = await store.transaction((tx) => tx.deliveries.lease(ids, 60_000, T0 + 10))
      // Settled: 0 delivered, 1 failed (its only attempt), 3 delivered; 2 stays pending.
      await store.transaction((tx) =>
        tx.deliveries.recordAttempts(
          leased
            .filter((d) => d.id !== ids[2])
            .map((d) =>
              attempt(d.id, d.leaseUntil, T0 + 11, {
                attemptsPerRound: 1,
                ...(d.id === ids[1] ? { delivered: false, statusCode: 500, error: 'HTTP 500' } : {}),
              }),
            ),
        ),
      )
      expect(await store.transaction((tx) => tx.deliveries.forgetSettledBefore('form.expired', T0 + 100, 1))).toBe(1)
      expect(await store.transaction((tx) => tx.deliveries.forgetSettledBefore('form.expired', T0 + 100, 10))).toBe(1)
      expect(await store.transaction((tx) => tx.deliveries.forgetSettledBefore('form.expired', T0 + 100, 10))).toBe(0)
      expect((await store.deliveries.listForForm(form.id)).map((d) => d.id).toSorted()).toEqual(
        [ids[2]!, ids[3]!].toSorted(),
      )
    },
  },
  {
    name: 'two claims on two connections never take the same delivery (PostgreSQL skips the rows the other is taking)',
    async run({ store, anotherStore, account, kind }) {
      const other = await anotherStore()
      const { ids } = await queue(store, await account(), 30)
      const now = T0 + 10
      const claim = (on: Store, look: number) =>
        on.transaction(async (tx) => {
          const due = await tx.deliveries.dueNewest(now, look)
          return (
            await tx.deliveries.lease(
              due.map((d) => d.id),
              60_000,
              now,
            )
          ).map((d) => d.id)
        })
      if (kind === 'postgres') {
        // The first claim holds its 10, uncommitted, while the second takes the other 20 without waiting.
        let release!: () => void
        const held = new Promise<void>((resolve) => (release = resolve))
        let tookFirst!: (ids: string[]) => void
        const firstTook = new Promise<string[]>((resolve) => (tookFirst = resolve))
        const first = store.transaction(async (tx) => {
          const due = await tx.deliveries.dueNewest(now, 10)
          const leased = (
            await tx.deliveries.lease(
              due.map((d) => d.id),
              60_000,
              now,
            )
          ).map((d) => d.id)
          tookFirst(leased)
          await held
          return leased
        })
        expect(await firstTook).toEqual(ids.slice(-10).reverse())
        const second = await within(10_000, claim(other, 100))
        release()
        expect([...(await first), ...second].toSorted()).toEqual(ids.toSorted())
        return
      }
      // SQLite runs one writer at a time: claims made together still never share a delivery.
      const claims = await Promise.all([claim(store, 20), claim(other, 20), claim(store, 20), claim(other, 20)])
      const taken = claims.flat()
      expect(new Set(taken).size).toBe(taken.length)
      expect(taken.toSorted()).toEqual(ids.toSorted())
    },
  },
]

runOnEveryDriver('the deliveries store', cases)
