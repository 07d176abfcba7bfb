/** Every method of the forms store (src/modules/forms/store/index.ts), on every driver. */
import { expect } from 'bun:test'
import { newId } from '../../src/lib/ids.ts'
import { formRecord, runOnEveryDriver, type StoreCase, T0 } from './drivers.ts'

const MINUTE = 60_000

const cases: StoreCase[] = [
  {
    name: 'insert, then find and findForAccount: the form as it went in, JSON text byte for byte, active',
    async run({ store, account }) {
      const owner = await account()
      const form = formRecord(owner, {
        description: 'Two\nlines',
        context: '{"b" : 1,\n "a":"é \\u0000 \\ud83d\\ude00", "n": 1.50}',
        callbackUrl: 'https://example.com/hook',
        callbackEvents: ['form.completed', 'form.expired'],
        callbackMetadata: '{"x":[1,2]}',
        webhookSecret: 'a'.repeat(64),
        settings: '{ }',
        page: { locale: 'fr', review: true },
        expiresAt: T0 + MINUTE,
      })
      await store.transaction((tx) => tx.forms.insert(form))
      const found = await store.forms.find(form.id, T0)
      expect(found).toEqual({ ...form, status: 'active' })
      expect(Object.keys(found!.page)).toEqual(['locale', 'review'])
      expect(typeof found!.createdAt).toBe('number')
      expect(await store.forms.findForAccount(owner, form.id, T0)).toEqual(found)
      expect(await store.forms.findForAccount(await account(), form.id, T0)).toBeUndefined()
      expect(await store.forms.find(newId(), T0)).toBeUndefined()
    },
  },
  {
    name: 'expiry is computed in every read: from expiresAt on, expired and without context, whatever was written',
    async run({ store, account }) {
      const owner = await account()
      const form = formRecord(owner, { context: '{"k":1}', expiresAt: T0 + MINUTE })
      await store.transaction((tx) => tx.forms.insert(form))
      const before = T0 + MINUTE - 1
      const at = T0 + MINUTE
      expect(await store.forms.find(form.id, before)).toMatchObject({ status: 'active', context: '{"k":1}' })
      expect(await store.forms.find(form.id, at)).toMatchObject({ status: 'expired', context: null })
      expect(await store.forms.findForAccount(owner, form.id, at)).toMatchObject({ status: 'expired', context: null })
      expect(await store.forms.findPublicState(form.id, before)).toEqual({
        id: form.id,
        title: form.title,
        status: 'active',
        page: {},
      })
      expect((await store.forms.findPublicState(form.id, at))!.status).toBe('expired')
      expect(await store.forms.findStateForAccount(owner, form.id, before)).toEqual({
        id: form.id,
        status: 'active',
        expiresAt: T0 + MINUTE,
        context: '{"k":1}',
      })
      expect(await store.forms.findStateForAccount(owner, form.id, at)).toEqual({
        id: form.id,
        status: 'expired',
        expiresAt: T0 + MINUTE,
        context: null,
      })
      expect(await store.forms.findStateForAccount(await account(), form.id, at)).toBeUndefined()
      expect(await store.forms.findPublicState(newId(), at)).toBeUndefined()
      // A stored ending is what it is, past the expiry too.
      await store.transaction((tx) => tx.forms.setStatus(form.id, 'cancelled', T0))
      expect((await store.forms.find(form.id, at + MINUTE))!.status).toBe('cancelled')
    },
  },
  {
    name: "list: the account's forms newest first, page by page, with every status filter",
    async run({ store, account }) {
      const owner = await account()
      const other = await account()
      const forms = Array.from({ length: 7 }, (_, i) =>
        formRecord(owner, { title: `form ${i}`, expiresAt: i === 1 || i === 2 ? T0 + i : null }),
      )
      await store.transaction(async (tx) => {
        for (const form of forms) await tx.forms.insert(form)
        await tx.forms.insert(formRecord(other))
        await tx.forms.setStatus(forms[2]!.id, 'expired', T0)
        await tx.forms.setStatus(forms[3]!.id, 'cancelled', T0)
        await tx.forms.setStatus(forms[4]!.id, 'completed', T0)
      })
      const now = T0 + 10
      const ids = async (status: Parameters<typeof store.forms.list>[0]['status'], before?: string, limit = 50) =>
        (await store.forms.list({ accountId: owner, status, before, limit, now })).map((f) => f.title)
      expect(await ids(undefined)).toEqual(['form 6', 'form 5', 'form 4', 'form 3', 'form 2', 'form 1', 'form 0'])
      expect(await ids(undefined, undefined, 2)).toEqual(['form 6', 'form 5'])
      expect(await ids(undefined, forms[5]!.id, 2)).toEqual(['form 4', 'form 3'])
      expect(await ids('active')).toEqual(['form 6', 'form 5', 'form 0'])
      expect(await ids('expired')).toEqual(['form 2', 'form 1'])
      expect(await ids('expired', forms[2]!.id)).toEqual(['form 1'])
      expect(await ids('cancelled')).toEqual(['form 3'])
      expect(await ids('completed')).toEqual(['form 4'])
      const [summary] = await store.forms.list({
        accountId: owner,
        status: 'expired',
        before: undefined,
        limit: 1,
        now,
      })
      expect(summary).toEqual({
        id: forms[2]!.id,
        title: 'form 2',
        description: null,
        fieldsCount: 1,
        status: 'expired',
        expiresAt: T0 + 2,
        createdAt: T0,
      })
    },
  },
  {
    name: 'list by title: what contains the text, case aside, newest first, paged, with the status filter; a rare match beyond the newest forms found too',
    async run({ kind, store, account }) {
      const owner = await account()
      const other = await account()
      // Older than the newest TITLE_SEARCH_WINDOW forms: found through the index, not the first look.
      const rare = [
        formRecord(owner, { title: 'Visit to Zürich, spring' }),
        formRecord(owner, { title: 'ZÜRICH? zürich office' }),
        formRecord(owner, { title: '100% sure_yes' }),
      ]
      const many = Array.from({ length: 1100 }, (_, i) => formRecord(owner, { title: `Form ${i}` }))
      await store.transaction(async (tx) => {
        for (const form of [...rare, ...many]) await tx.forms.insert(form)
        await tx.forms.insert(formRecord(other, { title: 'Zürich elsewhere' }))
        await tx.forms.setStatus(rare[0]!.id, 'cancelled', T0)
      })
      const titles = async (
        titleContains: string,
        options: { status?: 'cancelled'; before?: string; limit?: number } = {},
      ) =>
        (
          await store.forms.list({
            accountId: owner,
            status: options.status,
            before: options.before,
            limit: options.limit ?? 5,
            now: T0,
            titleContains,
          })
        ).map((f) => f.title)
      // Found before the sweep adds the forms to the index (read one by one), and after.
      expect(await titles('zürich')).toEqual(['ZÜRICH? zürich office', 'Visit to Zürich, spring'])
      expect(await store.forms.titlesToIndex()).toBe(kind === 'sqlite')
      expect(await store.transaction((tx) => tx.forms.indexTitles(1000))).toBe(kind === 'sqlite' ? 1000 : 0)
      expect(await store.transaction((tx) => tx.forms.indexTitles(1000))).toBe(kind === 'sqlite' ? 104 : 0)
      expect(await store.forms.titlesToIndex()).toBe(false)
      expect(await titles('zürich')).toEqual(['ZÜRICH? zürich office', 'Visit to Zürich, spring'])
      expect(await titles('zürich', { status: 'cancelled' })).toEqual(['Visit to Zürich, spring'])
      expect(await titles('zürich', { before: rare[1]!.id })).toEqual(['Visit to Zürich, spring'])
      expect(await titles('form 10')).toEqual(['Form 1099', 'Form 1098', 'Form 1097', 'Form 1096', 'Form 1095'])
      expect(await titles('form 10', { before: many[1096]!.id, limit: 3 })).toEqual([
        'Form 1095',
        'Form 1094',
        'Form 1093',
      ])
      expect(await titles('% sure_')).toEqual(['100% sure_yes'])
      expect(await titles('0% s')).toEqual(['100% sure_yes'])
      expect(await titles('_')).toEqual(['100% sure_yes'])
      expect(await titles('h,')).toEqual(['Visit to Zürich, spring'])
      expect(await titles('nothing like it')).toEqual([])
      // A deleted form is not found, and leaves the index at the next sweep.
      await store.transaction((tx) => tx.forms.delete(owner, rare[1]!.id))
      expect(await titles('zürich')).toEqual(['Visit to Zürich, spring'])
      expect(await store.forms.titlesToIndex()).toBe(kind === 'sqlite')
      await store.transaction((tx) => tx.forms.indexTitles(1000))
      expect(await store.forms.titlesToIndex()).toBe(false)
      expect(await titles('zürich office')).toEqual([])
    },
  },
  {
    name: 'setStatus and setExpiry write what later reads see; complete moves only an active, unexpired form, once',
    async run({ store, account }) {
      const owner = await account()
      const [open, late, cancelled] = [formRecord(owner), formRecord(owner), formRecord(owner)]
      await store.transaction(async (tx) => {
        for (const form of [open, late, cancelled]) await tx.forms.insert(form)
        await tx.forms.setExpiry(late.id, T0 + 5, T0)
        await tx.forms.setStatus(cancelled.id, 'cancelled', T0)
      })
      expect((await store.forms.find(late.id, T0))!.expiresAt).toBe(T0 + 5)
      const now = T0 + 5
      expect(await store.transaction((tx) => tx.forms.complete(open.id, now))).toBe(true)
      expect(await store.transaction((tx) => tx.forms.complete(open.id, now))).toBe(false)
      expect(await store.transaction((tx) => tx.forms.complete(late.id, now))).toBe(false)
      expect(await store.transaction((tx) => tx.forms.complete(cancelled.id, now))).toBe(false)
      expect(await store.transaction((tx) => tx.forms.complete(newId(), now))).toBe(false)
      expect((await store.forms.find(open.id, now))!.status).toBe('completed')
      expect((await store.forms.find(late.id, now))!.status).toBe('expired')
      // Expiry taken back: the form is active again and can be completed.
      await store.transaction((tx) => tx.forms.setExpiry(late.id, null, now))
      expect(await store.transaction((tx) => tx.forms.complete(late.id, now))).toBe(true)
    },
  },
  {
    name: 'delete: only the owner deletes, once; the form goes with its response, files and deliveries',
    async run({ store, account }) {
      const owner = await account()
      const form = formRecord(owner, { callbackUrl: 'https://example.com/hook', webhookSecret: 'b'.repeat(64) })
      const responseId = newId()
      const fileId = newId()
      await store.transaction(async (tx) => {
        await tx.forms.insert(form)
        await tx.forms.complete(form.id, T0)
        await tx.responses.writeChunk(fileId, 0, new Uint8Array([1, 2, 3]), T0)
        await tx.responses.insert(
          { id: responseId, formId: form.id, data: { name: 'Ada' }, ip: null, userAgent: null, submittedAt: T0 },
          [{ fieldKey: 'file', name: 'a.bin', contentType: 'application/octet-stream', size: 3, fileId }],
        )
        await tx.deliveries.enqueue({
          id: newId(),
          formId: form.id,
          responseId,
          event: 'form.completed',
          url: 'https://example.com/hook',
          payload: '{}',
          createdAt: T0,
        })
      })
      const stranger = await account()
      expect(await store.transaction((tx) => tx.forms.delete(stranger, form.id))).toBe(false)
      expect(await store.transaction((tx) => tx.forms.delete(owner, form.id))).toBe(true)
      expect(await store.transaction((tx) => tx.forms.delete(owner, form.id))).toBe(false)
      expect(await store.forms.find(form.id, T0)).toBeUndefined()
      expect(await store.responses.listForForm(form.id)).toEqual([])
      expect(await store.responses.file(form.id, responseId, 'file')).toBeUndefined()
      expect(await store.deliveries.listForForm(form.id)).toEqual([])
      // The file's chunks are unclaimed once the answer holding them is gone: the sweep removes them.
      expect(await store.transaction((tx) => tx.responses.removeIdleChunks(T0 + MINUTE, 10))).toBe(true)
      expect(await store.responses.chunk(fileId, 0)).toBeUndefined()
    },
  },
  {
    name: 'Idempotency-Keys: remembered per account, replaced, forgotten before a time',
    async run({ store, account }) {
      const owner = await account()
      const other = await account()
      const [first, second] = [formRecord(owner), formRecord(owner)]
      await store.transaction(async (tx) => {
        await tx.forms.insert(first)
        await tx.forms.insert(second)
        await tx.forms.rememberIdempotencyKey({
          accountId: owner,
          key: 'k1',
          requestHash: 'h1',
          formId: first.id,
          createdAt: T0,
        })
        await tx.forms.rememberIdempotencyKey({
          accountId: owner,
          key: 'k2',
          requestHash: 'h2',
          formId: second.id,
          createdAt: T0 + 10,
        })
      })
      expect(await store.forms.idempotencyKey(owner, 'k1')).toEqual({
        requestHash: 'h1',
        formId: first.id,
        createdAt: T0,
      })
      expect(await store.forms.idempotencyKey(other, 'k1')).toBeUndefined()
      expect(await store.forms.idempotencyKey(owner, 'k3')).toBeUndefined()
      await store.transaction((tx) =>
        tx.forms.rememberIdempotencyKey({
          accountId: owner,
          key: 'k1',
          requestHash: 'h3',
          formId: second.id,
          createdAt: T0 + 5,
        }),
      )
      expect(await store.forms.idempotencyKey(owner, 'k1')).toEqual({
        requestHash: 'h3',
        formId: second.id,
        createdAt: T0 + 5,
      })
      expect(await store.transaction((tx) => tx.forms.forgetIdempotencyKeysBefore(T0 + 6))).toBe(1)
      expect(await store.forms.idempotencyKey(owner, 'k1')).toBeUndefined()
      expect(await store.forms.idempotencyKey(owner, 'k2')).toBeDefined()
      expect(await store.transaction((tx) => tx.forms.forgetIdempotencyKeysBefore(T0 + 6))).toBe(0)
    },
  },
  {
    name: 'nextExpiryAt: the earliest expiry of an active form; expireDue writes expired on those due, oldest first, as they were',
    async run({ store, account }) {
      const owner = await account()
      expect(await store.forms.nextExpiryAt()).toBeNull()
      const forms = [30, 10, 20, 40].map((offset) =>
        formRecord(owner, {
          context: `{"n":${offset}}`,
          callbackUrl: 'https://example.com/hook',
          callbackEvents: ['form.expired'],
          webhookSecret: 'c'.repeat(64),
          expiresAt: T0 + offset,
        }),
      )
      await store.transaction(async (tx) => {
        for (const form of forms) await tx.forms.insert(form)
        await tx.forms.insert(formRecord(owner))
        await tx.forms.setStatus(forms[1]!.id, 'cancelled', T0)
      })
      expect(await store.forms.nextExpiryAt()).toBe(T0 + 20)
      const expired = await store.transaction((tx) => tx.forms.expireDue(T0 + 35, 1))
      expect(expired).toEqual([
        {
          id: forms[2]!.id,
          accountId: owner,
          callbackUrl: 'https://example.com/hook',
          callbackEvents: ['form.expired'],
          callbackMetadata: '{}',
          context: '{"n":20}',
          expiresAt: T0 + 20,
        },
      ])
      expect((await store.transaction((tx) => tx.forms.expireDue(T0 + 35, 10))).map((f) => f.id)).toEqual([
        forms[0]!.id,
      ])
      expect(await store.transaction((tx) => tx.forms.expireDue(T0 + 35, 10))).toEqual([])
      expect(await store.forms.nextExpiryAt()).toBe(T0 + 40)
      // What the sweep wrote: expired, the context gone (read before its time too).
      expect(await store.forms.find(forms[2]!.id, T0)).toMatchObject({ status: 'expired', context: null })
      expect((await store.forms.find(forms[1]!.id, T0 + 35))!.status).toBe('cancelled')
    },
  },
  {
    name: 'countAllByStatus: forms of every account by status as stored, a status with none left out',
    async run({ store, account }) {
      expect(await store.forms.countAllByStatus()).toEqual(new Map())
      const [one, two] = [await account('one'), await account('two')]
      const forms = [formRecord(one), formRecord(one), formRecord(two), formRecord(two)]
      await store.transaction(async (tx) => {
        for (const form of forms) await tx.forms.insert(form)
        await tx.forms.complete(forms[1]!.id, T0)
        await tx.forms.setStatus(forms[2]!.id, 'cancelled', T0)
      })
      expect(await store.forms.countAllByStatus()).toEqual(
        new Map([
          ['active', 2],
          ['completed', 1],
          ['cancelled', 1],
        ]),
      )
    },
  },
  {
    name: 'countAllByStatus counts past one step of its walk (SQLite counts 20,000 index entries at a time)',
    only: 'sqlite',
    async run({ store, account }) {
      const [one, two] = [await account('one'), await account('two')]
      const forms = Array.from({ length: 20_003 }, (_, i) => formRecord(i < 2 ? two : one))
      await store.transaction(async (tx) => {
        for (const form of forms) await tx.forms.insert(form)
        await tx.forms.complete(forms[0]!.id, T0)
      })
      expect(await store.forms.countAllByStatus()).toEqual(
        new Map([
          ['active', 20_002],
          ['completed', 1],
        ]),
      )
    },
  },
  {
    name: 'webhookTargets: the account and secret of each form that has a callback, asked once per form',
    async run({ store, account }) {
      const owner = await account()
      const hooked = formRecord(owner, { callbackUrl: 'https://example.com/hook', webhookSecret: 'd'.repeat(64) })
      const plain = formRecord(owner)
      await store.transaction(async (tx) => {
        await tx.forms.insert(hooked)
        await tx.forms.insert(plain)
      })
      const targets = await store.forms.webhookTargets([hooked.id, plain.id, hooked.id, newId()])
      expect([...targets]).toEqual([[hooked.id, { accountId: owner, secret: 'd'.repeat(64) }]])
      expect((await store.forms.webhookTargets([])).size).toBe(0)
    },
  },
]

runOnEveryDriver('the forms store', cases)
