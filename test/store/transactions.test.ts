/** What the services rely on from every driver's transactions: all or nothing, first wins, one at a time. */
import { expect } from 'bun:test'
import { newId } from '../../src/lib/ids.ts'
import { formRecord, runOnEveryDriver, type StoreCase, T0 } from './drivers.ts'

const cases: StoreCase[] = [
  {
    name: 'a unit that throws writes nothing, in any module, and the error comes back as thrown',
    async run({ store, account }) {
      const owner = await account()
      const form = formRecord(owner)
      const failure = new Error('the unit changed its mind')
      const thrown = await store
        .transaction(async (tx) => {
          await tx.forms.insert(form)
          await tx.forms.rememberIdempotencyKey({
            accountId: owner,
            key: 'k',
            requestHash: 'h',
            formId: form.id,
            createdAt: T0,
          })
          await tx.events.append({
            accountId: owner,
            formId: form.id,
            type: 'form.cancelled',
            occurredAt: T0,
            payload: '{}',
            createdAt: T0,
          })
          await tx.responses.writeChunk(newId(), 0, new Uint8Array([1]), T0)
          await tx.keys.ensureAccount(newId(), 'never-made', T0)
          throw failure
        })
        .catch((error: unknown) => error)
      expect(thrown).toBe(failure)
      expect(await store.forms.find(form.id, T0)).toBeUndefined()
      expect(await store.forms.idempotencyKey(owner, 'k')).toBeUndefined()
      expect(await store.events.head(owner)).toBe(0)
      expect(await store.responses.incompleteFiles([])).toEqual([])
      // The account was not made: its name makes a new one now.
      expect(await store.transaction((tx) => tx.keys.ensureAccount(newId(), 'never-made', T0))).toBeString()
      expect(await store.transaction(async (tx) => (await tx.forms.find(form.id, T0)) === undefined)).toBe(true)
      // And the store goes on: the next unit commits.
      await store.transaction((tx) => tx.forms.insert(form))
      expect(await store.forms.find(form.id, T0)).toBeDefined()
    },
  },
  {
    name: 'a unit reads its own writes before it commits, and returns what its work returns',
    async run({ store, account }) {
      const form = formRecord(await account())
      const seen = await store.transaction(async (tx) => {
        await tx.forms.insert(form)
        await tx.forms.setStatus(form.id, 'cancelled', T0)
        return (await tx.forms.find(form.id, T0))?.status
      })
      expect(seen).toBe('cancelled')
    },
  },
  {
    name: 'the one-response race: of 20 units on two connections completing one form, exactly one wins',
    async run({ store, anotherStore, account }) {
      const other = await anotherStore()
      const form = formRecord(await account())
      await store.transaction((tx) => tx.forms.insert(form))
      const outcomes = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          (i % 2 ? other : store).transaction(async (tx) => {
            const won = await tx.forms.complete(form.id, T0)
            if (won)
              await tx.responses.insert(
                { id: newId(), formId: form.id, data: { i }, ip: null, userAgent: null, submittedAt: T0 },
                [],
              )
            return won
          }),
        ),
      )
      expect(outcomes.filter(Boolean)).toHaveLength(1)
      expect(await store.responses.listForForm(form.id)).toHaveLength(1)
      expect((await other.forms.find(form.id, T0))!.status).toBe('completed')
    },
  },
  {
    name: 'accounts are made once per name, however many units on two connections ask at once',
    async run({ store, anotherStore }) {
      const other = await anotherStore()
      const ids = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          (i % 2 ? other : store).transaction((tx) => tx.keys.ensureAccount(newId(), 'shared', T0)),
        ),
      )
      expect(new Set(ids).size).toBe(1)
    },
  },
  {
    name: 'ping answers',
    async run({ store }) {
      await store.ping()
    },
  },
  {
    // On SQLite, which one server serves, `alone` just runs the work.
    name: 'alone runs one piece of work at a time across connections (servers starting at once)',
    only: 'postgres',
    async run({ store, anotherStore }) {
      const other = await anotherStore()
      let running = 0
      let most = 0
      const work = async () => {
        running++
        most = Math.max(most, running)
        await Bun.sleep(20)
        running--
      }
      await Promise.all([store.alone(work), other.alone(work), store.alone(work), other.alone(work)])
      expect(most).toBe(1)
    },
  },
]

runOnEveryDriver('transactions', cases)
