/**
 * The read-only summaries the console's account pages stand on (overview,
 * API keys, deliveries), on every driver: each counts one account's rows
 * alone, and computes what every read computes (expiry).
 */
import { expect } from 'bun:test'
import { newId } from '../../src/lib/ids.ts'
import { DAY_MS } from '../../src/modules/responses/store/index.ts'
import type { Store } from '../../src/stores.ts'
import { formRecord, runOnEveryDriver, type StoreCase, T0 } from './drivers.ts'

const HOOK = 'https://example.com/hook'
const HOUR_MS = 3_600_000

/** A form of the account created at `createdAt`, answered at `answeredAt`; returns its id. */
async function answered(store: Store, accountId: string, createdAt: number, answeredAt: number) {
  const form = formRecord(accountId, { createdAt, callbackUrl: HOOK, webhookSecret: 'b'.repeat(64) })
  await store.transaction(async (tx) => {
    await tx.forms.insert(form)
    await tx.forms.complete(form.id, answeredAt)
    await tx.responses.insert(
      { id: newId(), formId: form.id, data: {}, ip: null, userAgent: null, submittedAt: answeredAt },
      [],
    )
  })
  return form.id
}

/** A delivery of the form, queued at T0, then taken for an attempt whose outcome is recorded. */
async function deliveryAfterAttempt(store: Store, formId: string, outcome: { delivered: boolean; perRound: number }) {
  const id = newId()
  await store.transaction((tx) =>
    tx.deliveries.enqueue({
      id,
      formId,
      responseId: null,
      event: 'form.completed',
      url: HOOK,
      payload: '{}',
      createdAt: T0,
    }),
  )
  const [leased] = await store.transaction((tx) => tx.deliveries.lease([id], 60_000, T0))
  await store.transaction((tx) =>
    tx.deliveries.recordAttempts([
      {
        id,
        lease: leased!.leaseUntil,
        roundAttempt: 1,
        now: T0,
        delivered: outcome.delivered,
        statusCode: outcome.delivered ? 200 : 500,
        error: outcome.delivered ? null : 'HTTP 500',
        attemptsPerRound: outcome.perRound,
        retryDelayMs: 1000,
      },
    ]),
  )
  return id
}

const cases: StoreCase[] = [
  {
    name: 'forms.countByStatus: the account alone, with active forms past their time counted as expired',
    async run({ store, account }) {
      const owner = await account()
      const other = await account()
      const forms = [
        formRecord(owner),
        formRecord(owner),
        formRecord(owner, { expiresAt: T0 + 10 }),
        formRecord(owner),
        formRecord(owner),
        formRecord(other),
      ]
      await store.transaction(async (tx) => {
        for (const form of forms) await tx.forms.insert(form)
        await tx.forms.complete(forms[3]!.id, T0)
        await tx.forms.setStatus(forms[4]!.id, 'cancelled', T0)
      })
      expect(await store.forms.countByStatus(owner, T0)).toEqual({ active: 3, completed: 1, cancelled: 1, expired: 0 })
      expect(await store.forms.countByStatus(owner, T0 + 10)).toEqual({
        active: 2,
        completed: 1,
        cancelled: 1,
        expired: 1,
      })
      expect(await store.forms.countByStatus(await account(), T0)).toEqual({
        active: 0,
        completed: 0,
        cancelled: 0,
        expired: 0,
      })
    },
  },
  {
    name: 'responses.answersPerDay and medianTimeToAnswer: the account’s answers since a time, by UTC day',
    async run({ store, account }) {
      const owner = await account()
      const other = await account()
      const day = Math.floor(T0 / DAY_MS) * DAY_MS
      expect(await store.responses.answersPerDay(owner, day)).toEqual([])
      expect(await store.responses.medianTimeToAnswer(owner, day)).toBeNull()
      await answered(store, owner, day - 5 * HOUR_MS, day - HOUR_MS) // before `since`: not counted
      await answered(store, owner, day, day + HOUR_MS)
      await answered(store, owner, day, day + 3 * HOUR_MS)
      await answered(store, owner, day + DAY_MS, day + 2 * DAY_MS + 2 * HOUR_MS)
      await answered(store, other, day, day + HOUR_MS)
      expect(await store.responses.answersPerDay(owner, day)).toEqual([
        { day, answers: 2 },
        { day: day + 2 * DAY_MS, answers: 1 },
      ])
      // Times to answer: 1 h, 3 h, 26 h: the middle one.
      expect(await store.responses.medianTimeToAnswer(owner, day)).toBe(3 * HOUR_MS)
      await answered(store, owner, day, day + 4 * HOUR_MS)
      // 1 h, 3 h, 4 h, 26 h: the mean of the two middle ones.
      expect(await store.responses.medianTimeToAnswer(owner, day)).toBe(3.5 * HOUR_MS)
    },
  },
  {
    name: 'deliveries.countFailing and listFailing: given up or retrying, the account’s alone, newest first',
    async run({ store, account }) {
      const owner = await account()
      const other = await account()
      const formId = await answered(store, owner, T0, T0)
      const delivered = await deliveryAfterAttempt(store, formId, { delivered: true, perRound: 2 })
      const retrying = await deliveryAfterAttempt(store, formId, { delivered: false, perRound: 2 })
      const failed = await deliveryAfterAttempt(store, formId, { delivered: false, perRound: 1 })
      await deliveryAfterAttempt(store, await answered(store, other, T0, T0), { delivered: false, perRound: 1 })
      // Queued, never tried: not failing.
      await store.transaction((tx) =>
        tx.deliveries.enqueue({
          id: newId(),
          formId,
          responseId: null,
          event: 'form.completed',
          url: HOOK,
          payload: '{}',
          createdAt: T0,
        }),
      )
      expect(await store.deliveries.countFailing(owner)).toBe(2)
      const listed = await store.deliveries.listFailing(owner, 10)
      expect(listed.map((delivery) => [delivery.id, delivery.status, delivery.formTitle])).toEqual([
        [failed, 'failed', 'A form'],
        [retrying, 'pending', 'A form'],
      ])
      expect(listed[0]).toMatchObject({ formId, attempts: 1, lastStatusCode: 500, lastError: 'HTTP 500' })
      expect(await store.deliveries.listFailing(owner, 1)).toHaveLength(1)
      expect(listed.some((delivery) => delivery.id === delivered)).toBe(false)
      await store.transaction((tx) => tx.deliveries.redeliver(formId, failed, T0 + 1))
      expect(await store.deliveries.countFailing(owner)).toBe(1)
    },
  },
  {
    name: 'keys.listKeysOfAccount: the account’s keys alone, oldest first, revoked ones too',
    async run({ store, account }) {
      const owner = await account('owner')
      const other = await account('other')
      const [first, second, theirs] = [newId(), newId(), newId()]
      await store.transaction(async (tx) => {
        await tx.keys.insertKey({ id: first, accountId: owner, hash: '1'.repeat(64), hint: 'aaaa', createdAt: T0 })
        await tx.keys.insertKey({ id: second, accountId: owner, hash: '2'.repeat(64), hint: 'bbbb', createdAt: T0 })
        await tx.keys.insertKey({ id: theirs, accountId: other, hash: '3'.repeat(64), hint: 'cccc', createdAt: T0 })
        await tx.keys.revoke(first, T0 + 1)
      })
      expect(await store.keys.listKeysOfAccount(owner)).toEqual([
        { id: first, account: 'owner', hint: 'aaaa', createdAt: T0, lastUsedAt: null, revokedAt: T0 + 1 },
        { id: second, account: 'owner', hint: 'bbbb', createdAt: T0, lastUsedAt: null, revokedAt: null },
      ])
    },
  },
]

runOnEveryDriver('console reads', cases)
