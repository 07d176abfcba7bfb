/** Every method of the auth store's keys and of the events store (the accounts' feeds), on every driver. */
import { expect } from 'bun:test'
import { newId } from '../../src/lib/ids.ts'
import type { EventType } from '../../src/modules/events/names.ts'
import { until } from '../utils.ts'
import { formRecord, runOnEveryDriver, type StoreCase, T0 } from './drivers.ts'

const keyCases: StoreCase[] = [
  {
    name: 'ensureAccount makes an account once per name; insertKey, keyByHash, keyExists, listKeys, usableKeyExists',
    async run({ store }) {
      expect(await store.keys.usableKeyExists()).toBe(false)
      expect(await store.keys.listKeys()).toEqual([])
      const id = newId()
      const accountId = await store.transaction((tx) => tx.keys.ensureAccount(newId(), 'ops', T0))
      expect(await store.transaction((tx) => tx.keys.ensureAccount(newId(), 'ops', T0 + 1))).toBe(accountId)
      expect(await store.transaction((tx) => tx.keys.ensureAccount(newId(), 'other', T0))).not.toBe(accountId)
      await store.transaction((tx) =>
        tx.keys.insertKey({ id, accountId, hash: 'e'.repeat(64), hint: 'abcd', createdAt: T0 }),
      )
      expect(await store.keys.keyByHash('e'.repeat(64))).toEqual({ id, accountId, lastUsedAt: null, revokedAt: null })
      expect(await store.keys.keyByHash('f'.repeat(64))).toBeUndefined()
      expect(await store.keys.keyExists(id)).toBe(true)
      expect(await store.keys.keyExists(newId())).toBe(false)
      expect(await store.keys.usableKeyExists()).toBe(true)
      expect(await store.keys.listKeys()).toEqual([
        { id, account: 'ops', hint: 'abcd', createdAt: T0, lastUsedAt: null, revokedAt: null },
      ])
    },
  },
  {
    name: 'touch stamps the last use; revoke is true once, and a revoked key is no usable key',
    async run({ store }) {
      const id = newId()
      await store.transaction(async (tx) => {
        const accountId = await tx.keys.ensureAccount(newId(), 'default', T0)
        await tx.keys.insertKey({ id, accountId, hash: '1'.repeat(64), hint: 'wxyz', createdAt: T0 })
        await tx.keys.touch(id, T0 + 5)
      })
      expect((await store.keys.keyByHash('1'.repeat(64)))!.lastUsedAt).toBe(T0 + 5)
      expect(await store.transaction((tx) => tx.keys.revoke(id, T0 + 9))).toBe(true)
      expect(await store.transaction((tx) => tx.keys.revoke(id, T0 + 10))).toBe(false)
      expect(await store.transaction((tx) => tx.keys.revoke(newId(), T0 + 10))).toBe(false)
      expect((await store.keys.keyByHash('1'.repeat(64)))!.revokedAt).toBe(T0 + 9)
      expect((await store.keys.listKeys())[0]).toMatchObject({ lastUsedAt: T0 + 5, revokedAt: T0 + 9 })
      expect(await store.keys.usableKeyExists()).toBe(false)
    },
  },
  {
    name: 'keysVersion changes once another process changes a key',
    async run({ store, anotherStore }) {
      const other = await anotherStore()
      const before = await store.keys.keysVersion()
      await other.transaction(async (tx) => {
        const accountId = await tx.keys.ensureAccount(newId(), 'default', T0)
        await tx.keys.insertKey({ id: newId(), accountId, hash: '2'.repeat(64), hint: 'abcd', createdAt: T0 })
      })
      // PostgreSQL hears of it on its notification channel, a moment later.
      await until(async () => (await store.keys.keysVersion()) !== before, 10_000, 'keysVersion to change')
      expect(await store.keys.keyByHash('2'.repeat(64))).toBeDefined()
    },
  },
]

async function formOf(store: Parameters<StoreCase['run']>[0]['store'], accountId: string): Promise<string> {
  const form = formRecord(accountId)
  await store.transaction((tx) => tx.forms.insert(form))
  return form.id
}

const event = (accountId: string, formId: string, type: EventType, payload: string, createdAt = T0) => ({
  accountId,
  formId,
  type,
  occurredAt: createdAt + 1,
  payload,
  createdAt,
})

const eventCases: StoreCase[] = [
  {
    name: "append numbers each account's events 1, 2, 3...; after, ofForm and payloads read them, oldest first; head is the last",
    async run({ store, account }) {
      const [a, b] = [await account(), await account()]
      const [formA, formB] = [await formOf(store, a), await formOf(store, b)]
      expect(await store.events.head(a)).toBe(0)
      await store.transaction(async (tx) => {
        await tx.events.append(event(a, formA, 'form.completed', '{"n":"é"}'))
        await tx.events.append(event(b, formB, 'form.cancelled', '{}'))
        await tx.events.append(event(a, formA, 'form.deleted', `{"form_id":"${formA}"}`))
      })
      await store.transaction((tx) => tx.events.append(event(a, formA, 'form.expired', '{"x":1}', T0 + 5)))
      expect(await store.events.head(a)).toBe(3)
      expect(await store.events.head(b)).toBe(1)
      expect(await store.events.after(a, 0, 10)).toEqual([
        { number: 1, formId: formA, type: 'form.completed', occurredAt: T0 + 1, payloadBytes: 10 },
        { number: 2, formId: formA, type: 'form.deleted', occurredAt: T0 + 1, payloadBytes: 40 },
        { number: 3, formId: formA, type: 'form.expired', occurredAt: T0 + 6, payloadBytes: 7 },
      ])
      expect((await store.events.after(a, 1, 1)).map((e) => e.number)).toEqual([2])
      // One form's, in their order; never another account's.
      expect((await store.events.ofForm(a, formA, 10)).map((e) => e.number)).toEqual([1, 2, 3])
      expect((await store.events.ofForm(a, formA, 2)).map((e) => e.type)).toEqual(['form.completed', 'form.deleted'])
      expect(await store.events.ofForm(a, formB, 10)).toEqual([])
      expect(await store.events.ofForm(b, formB, 10)).toEqual([
        { number: 1, formId: formB, type: 'form.cancelled', occurredAt: T0 + 1, payloadBytes: 2 },
      ])
      expect(await store.events.after(a, 3, 10)).toEqual([])
      const payloads = await store.events.payloads(a, 1, 2)
      expect(payloads.map((p) => [p.number, new TextDecoder().decode(p.payload)])).toEqual([
        [1, '{"n":"é"}'],
        [2, `{"form_id":"${formA}"}`],
      ])
      expect(await store.events.payloads(b, 1, 5)).toHaveLength(1)
    },
  },
  {
    name: 'forgetForm and forgetBefore remove events; a number is never given twice; afterLegacy reads old cursors',
    async run({ store, account }) {
      const a = await account()
      const [first, second] = [await formOf(store, a), await formOf(store, a)]
      await store.transaction(async (tx) => {
        await tx.events.append(event(a, first, 'form.completed', '{}', T0))
        await tx.events.append(event(a, second, 'form.completed', '{}', T0 + 10))
        await tx.events.append(event(a, second, 'form.cancelled', '{}', T0 + 20))
      })
      // A cursor from before numbers, before every event, reads from the first; one past them all, from the head.
      expect(await store.events.afterLegacy(a, { position: 0, seq: 0 })).toBe(0)
      expect(await store.events.afterLegacy(a, { position: Number.MAX_SAFE_INTEGER, seq: 0 })).toBe(3)
      expect(await store.events.afterLegacy(await account(), { position: 0, seq: 0 })).toBe(0)
      await store.transaction((tx) => tx.events.forgetForm(first))
      expect((await store.events.after(a, 0, 10)).map((e) => e.number)).toEqual([2, 3])
      expect(await store.events.afterLegacy(a, { position: 0, seq: 0 })).toBe(1)
      expect(await store.transaction((tx) => tx.events.forgetBefore(T0 + 30, 1))).toBe(1)
      expect((await store.events.after(a, 0, 10)).map((e) => e.number)).toEqual([3])
      expect(await store.events.payloads(a, 1, 2)).toEqual([])
      expect(await store.transaction((tx) => tx.events.forgetBefore(T0 + 15, 10))).toBe(0)
      expect(await store.transaction((tx) => tx.events.forgetBefore(T0 + 30, 10))).toBe(1)
      expect(await store.events.head(a)).toBe(3)
      await store.transaction((tx) => tx.events.append(event(a, second, 'form.deleted', '{}', T0 + 40)))
      expect((await store.events.after(a, 0, 10)).map((e) => e.number)).toEqual([4])
    },
  },
  {
    name: 'racing writers of one account on two connections: numbers follow commit order, none skipped or twice',
    async run({ store, anotherStore, account }) {
      const other = await anotherStore()
      const a = await account()
      const formId = await formOf(store, a)
      await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          (i % 2 ? other : store).transaction((tx) =>
            tx.events.append(event(a, formId, 'form.completed', `{"i":${i}}`)),
          ),
        ),
      )
      expect((await store.events.after(a, 0, 20)).map((e) => e.number)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
    },
  },
]

runOnEveryDriver('the keys store', keyCases)
runOnEveryDriver('the events store', eventCases)
