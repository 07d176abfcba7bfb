/**
 * The feed's ids and order, as CONTRACT 12a amends them: ids and cursors are
 * per account (an account's first event looks the same whatever other
 * accounts did), and only intake's own writers of an account decide when its
 * events can be read: a transaction another client leaves open, in this
 * database or another on the same server, never holds the feed back. Commit
 * order within an account still holds with writers racing: a reader
 * following `next` never skips nor repeats an event.
 *
 * Nothing here asserts a time: a held wait is checked to be pending after a
 * quiet moment, then to be answered with the event (a wait held back would
 * run out its 30 s and answer with none, past the test's timeout).
 */
import { describe, expect, setDefaultTimeout, test } from 'bun:test'
import { type ReservedSQL, SQL } from 'bun'
import { databaseUrl } from './postgres.ts'
import { POSTGRES, skipWithout, TEST_DATABASE_URL } from './prerequisites.ts'
import { apiClient, contextsPerTest, submit, TEST_STORE, type TestContext, track } from './utils.ts'

setDefaultTimeout(20_000)

const { create, cleanups } = contextsPerTest()

type Api = TestContext['api']
interface FeedEvent {
  id: string
  type: string
  form_id: string
}

/** How long a negative check gives the app to (wrongly) answer. Not a timing assertion. */
const QUIET_MS = 300

async function read(api: Api, query = ''): Promise<{ events: FeedEvent[]; next: string }> {
  const res = await api.get(`/events${query}`)
  if (res.status !== 200) throw new Error(`GET /events${query}: ${res.status} ${res.text}`)
  return res.body
}

async function cancel(api: Api, formId: string) {
  const res = await api.patch(`/forms/${formId}`, { status: 'cancelled' })
  if (res.status !== 200) throw new Error(`cancel: ${res.status} ${res.text}`)
}

const kinds = (events: FeedEvent[]) => events.map((event) => [event.type, event.form_id])

describe("an account's event ids tell nothing of other accounts", () => {
  /** The ids of the account's first three events, made after `othersFirst` endings of another account. */
  async function firstIds(othersFirst: number): Promise<string[]> {
    const t = await create()
    const other = apiClient(t.app, (await t.createKey('other')).key)
    for (let i = 0; i < othersFirst; i++) {
      const form = await other.createForm()
      await (i % 2 === 0 ? cancel(other, form.id) : submit(t.app, form.id, { name: 'Bo' }))
    }
    for (let i = 0; i < 3; i++) await cancel(t.api, (await t.api.createForm()).id)
    const page = await read(t.api)
    expect(page.events).toHaveLength(3)
    return page.events.map((event) => event.id)
  }

  test("an account's first events have the same ids whether or not another account has events", async () => {
    const alone = await firstIds(0)
    const afterOthers = await firstIds(7)
    expect(afterOthers).toEqual(alone)
  })

  test('after=latest on an account without events is the same cursor whatever other accounts did', async () => {
    const t = await create()
    const other = apiClient(t.app, (await t.createKey('other')).key)
    const before = (await read(t.api, '?after=latest')).next
    for (let i = 0; i < 3; i++) await cancel(other, (await other.createForm()).id)
    expect((await read(t.api, '?after=latest')).next).toBe(before)
  })
})

describe('racing writers of one account: a reader following `next` sees every event once, in order', () => {
  test('endings committed at once by many requests, read by a waiting reader as they come', async () => {
    const t = await create()
    const forms = []
    for (let i = 0; i < 40; i++) forms.push(await t.api.createForm())
    const seen: FeedEvent[] = []
    let cursor = (await read(t.api, '?after=latest')).next
    let done = false
    const reader = (async () => {
      while (!done || seen.length < forms.length) {
        const page = await read(t.api, `?after=${cursor}&limit=7&wait=2`)
        seen.push(...page.events)
        cursor = page.next
        if (done && page.events.length === 0) break
      }
    })()
    // Answers, cancels and deletes all at once: on PostgreSQL they share group commits and race across them.
    await Promise.all(
      forms.map((form, i) =>
        i % 3 === 0
          ? submit(t.app, form.id, { name: 'Ada' })
          : i % 3 === 1
            ? t.api.patch(`/forms/${form.id}`, { status: 'cancelled' })
            : t.api.delete(`/forms/${form.id}`),
      ),
    )
    done = true
    await reader
    const all = (await read(t.api, '?limit=100')).events
    expect(all).toHaveLength(forms.length)
    expect(seen).toEqual(all)
    expect(new Set(seen.map((event) => event.id)).size).toBe(forms.length)
  })
})

const skipPostgres = TEST_STORE !== 'postgres' || skipWithout(POSTGRES)

describe.skipIf(skipPostgres)("PostgreSQL: another client's open transaction never holds the feed back", () => {
  /** A transaction left open on `url` by another client, with a transaction id (it has written, as far as PostgreSQL knows). */
  async function openTransactionOn(url: string): Promise<ReservedSQL> {
    const client = new SQL(url, { max: 1 })
    const connection = await client.reserve()
    await connection.unsafe('BEGIN')
    await connection.unsafe('SELECT pg_current_xact_id()')
    cleanups.push(async () => {
      await connection.unsafe('ROLLBACK').catch(() => {})
      connection.release()
      await client.close()
    })
    return connection
  }

  const cases: Array<[string, (t: TestContext) => Promise<string>]> = [
    ['in another database on the same server', async () => TEST_DATABASE_URL],
    [
      'in the same database',
      async (t) => databaseUrl(TEST_DATABASE_URL, (await t.sql('SELECT current_database() AS name'))[0]!.name),
    ],
  ]

  test.each(cases)(
    '%s: a read right after a cancel holds it, and a held wait is answered with it',
    async (_, where) => {
      const t = await create()
      const first = await t.api.createForm()
      const second = await t.api.createForm()
      const head = (await read(t.api, '?after=latest')).next
      await openTransactionOn(await where(t))

      await cancel(t.api, first.id)
      const page = await read(t.api, `?after=${head}`)
      expect(kinds(page.events)).toEqual([['form.cancelled', first.id]])

      const waiter = track(t.api.get(`/events?after=${page.next}&wait=10`))
      await Bun.sleep(QUIET_MS)
      expect(waiter.settled).toBe(false)
      await cancel(t.api, second.id)
      const res = await waiter.promise
      expect(res.status).toBe(200)
      expect(kinds(res.body.events)).toEqual([['form.cancelled', second.id]])
    },
  )

  test('an MCP wait_for_events is answered too while the transaction stays open', async () => {
    const t = await create()
    const form = await t.api.createForm()
    const head = (await read(t.api, '?after=latest')).next
    await openTransactionOn(TEST_DATABASE_URL)
    const waiter = track(
      t.app.handle(
        new Request('http://intake.test/mcp', {
          method: 'POST',
          headers: {
            authorization: `Bearer ${t.key}`,
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
          },
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: 1,
            method: 'tools/call',
            params: { name: 'wait_for_events', arguments: { after: head, wait: 10 } },
          }),
        }),
      ),
    )
    await Bun.sleep(QUIET_MS)
    expect(waiter.settled).toBe(false)
    await cancel(t.api, form.id)
    const res = await waiter.promise
    const answer = (await res.json()) as { result: { structuredContent: { events: FeedEvent[] } } }
    expect(kinds(answer.result.structuredContent.events)).toEqual([['form.cancelled', form.id]])
  })
})
