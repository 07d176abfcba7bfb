/**
 * The account's event feed (CONTRACT 12) across `intake copy`: events keep
 * their ids, so an agent's feed cursor reads on from the same place on TO, and
 * TO's new events come after every copied one. SQLite to SQLite always;
 * PostgreSQL both ways where INTAKE_TEST_DATABASE_URL names a server.
 */

import { afterAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { SQL } from 'bun'
import { STEP_TIMEOUT } from './copy-fixtures.ts'
import { killAllChildren, type RunningIntake, request, runIntake, startIntake, useBuiltBinary } from './e2e/binary.ts'
import { postgresFixtures } from './postgres.ts'
import { POSTGRES, skipWithout, TEST_DATABASE_URL } from './prerequisites.ts'
import { createTestContext, submit, type TestContext, until } from './utils.ts'

const intake = useBuiltBinary('intake-copy-')
const skipPostgres = skipWithout(POSTGRES)
const pg = postgresFixtures(TEST_DATABASE_URL)

// ---------------------------------------------------------------------------
// The account's event feed (CONTRACT 12) across a copy: what an agent holds is an event id or a cursor

interface FeedEvent {
  id: string
  type: string
  form_id: string
  occurred_at: string
  payload: Record<string, unknown>
}
interface FeedPage {
  events: FeedEvent[]
  next: string
}
/** One read of GET /api/v1/events with `query`; fails unless it is a 200. */
type Feed = (query: string) => Promise<FeedPage>

const feedOf =
  (api: TestContext['api']): Feed =>
  async (query) => {
    const res = await api.get(`/events${query}`)
    expect(res.status).toBe(200)
    return res.body
  }

const feedAt =
  (server: RunningIntake, key: string): Feed =>
  async (query) => {
    const res = await request(`${server.url}/api/v1/events${query}`, { key })
    expect(res.status).toBe(200)
    return res.body
  }

/** Every event of the account from the oldest kept, following `next` two at a time (paging is part of what must carry over). */
async function wholeFeed(feed: Feed): Promise<FeedEvent[]> {
  const events: FeedEvent[] = []
  for (let page = await feed('?limit=2'); page.events.length > 0; page = await feed(`?after=${page.next}&limit=2`))
    events.push(...page.events)
  return events
}

/** The feed once it holds `n` events. */
async function settledFeed(feed: Feed, n: number): Promise<FeedEvent[]> {
  await until(
    async () => (await wholeFeed(feed)).length === n,
    10_000,
    `${n} events in the feed`,
    () => wholeFeed(feed),
  )
  return wholeFeed(feed)
}

const kinds = (events: FeedEvent[]) => events.map((event) => [event.type, event.form_id])
const DAY_MS = 86_400_000

/** `intake copy FROM TO` (a new SQLite file or an empty PostgreSQL database), then `intake serve` on TO. */
async function copyAndServe(from: string, to: 'sqlite' | 'postgres'): Promise<{ server: RunningIntake }> {
  const dir = intake.tempDir()
  const target = to === 'sqlite' ? join(dir, 'to.db') : (await pg.freshDatabase(false)).url
  const copied = await runIntake(intake.path, ['copy', from, target], { cwd: dir })
  expect({ code: copied.code, stderr: copied.stderr }).toEqual({ code: 0, stderr: '' })
  if (to === 'postgres') {
    // Copied events are readable at once on TO: none carries FROM's transaction id.
    const sql = new SQL(target, { max: 1 })
    try {
      for (const row of await sql.unsafe('SELECT tx::text AS tx FROM events')) expect(row.tx).toBe('0')
    } finally {
      await sql.close()
    }
  }
  const server = await startIntake(intake.path, {
    cwd: dir,
    args: ['serve', '--port', '0', ...(to === 'sqlite' ? ['--db', target] : ['--database-url', target])],
  })
  return { server }
}

/** Cancels a form through TO's API, as an agent would. */
async function cancelOn(server: RunningIntake, key: string, formId: string) {
  const res = await request(`${server.url}/api/v1/forms/${formId}`, {
    method: 'PATCH',
    key,
    body: { status: 'cancelled' },
  })
  expect(res.status).toBe(200)
}

describe("events keep their ids: a cursor from FROM reads on from the same place on TO, and TO's new events come after", () => {
  afterAll(killAllChildren)
  const routes = [
    { from: 'sqlite', to: 'sqlite' },
    { from: 'sqlite', to: 'postgres' },
    { from: 'postgres', to: 'sqlite' },
    { from: 'postgres', to: 'postgres' },
  ] as const
  for (const { from, to } of routes) {
    const skip = (from === 'postgres' || to === 'postgres') && skipPostgres

    test.skipIf(skip)(
      `${from} to ${to}: the same feed, ids and payloads; after= a cursor gives the same events; a new ending comes last`,
      async () => {
        const t = await createTestContext({}, { store: from })
        let server: RunningIntake | undefined
        try {
          const cancelled = await t.api.createForm({ title: 'Cancelled', context: { step: 1 } })
          expect((await t.api.patch(`/forms/${cancelled.id}`, { status: 'cancelled' })).status).toBe(200)
          const answered = await t.api.createForm({ title: 'Answered', callback_metadata: { run: 7 } })
          expect((await submit(t.app, answered.id, { name: 'Ada' })).status).toBe(201)
          const deleted = await t.api.createForm({ title: 'Answered, then deleted' })
          expect((await submit(t.app, deleted.id, { name: 'Grace' })).status).toBe(201)
          expect((await t.api.delete(`/forms/${deleted.id}`)).status).toBe(204)
          const alsoCancelled = await t.api.createForm({ title: 'Cancelled too' })
          expect((await t.api.patch(`/forms/${alsoCancelled.id}`, { status: 'cancelled' })).status).toBe(200)
          // Left open on FROM, cancelled on TO after the copy.
          const later = await t.api.createForm({ title: 'Cancelled on TO' })

          const source = feedOf(t.api)
          const before = await settledFeed(source, 4)
          expect(kinds(before)).toEqual([
            ['form.cancelled', cancelled.id],
            ['form.completed', answered.id],
            ['form.deleted', deleted.id],
            ['form.cancelled', alsoCancelled.id],
          ])
          // An agent has read up to the answer and holds its id as its cursor.
          const cursor = before[1]!.id
          const afterCursor = await source(`?after=${cursor}`)
          expect(afterCursor.events).toEqual(before.slice(2))

          ;({ server } = await copyAndServe(t.store.location, to))
          const moved = feedAt(server, t.key)
          expect(await wholeFeed(moved)).toEqual(before)
          expect(await moved(`?after=${cursor}`)).toEqual(afterCursor)
          const last = before.at(-1)!.id
          expect(await moved(`?after=${last}`)).toEqual({ events: [], next: last })

          await cancelOn(server, t.key, later.id)
          // Waits for the event (wait returns as soon as it is readable), then the whole feed as an agent sees it.
          const fresh = await moved(`?after=${last}&wait=10`)
          expect(kinds(fresh.events)).toEqual([['form.cancelled', later.id]])
          expect(fresh.next).toBe(fresh.events[0]!.id)
          expect(before.map((event) => event.id)).not.toContain(fresh.next)
          expect(await moved(`?after=${cursor}`)).toEqual({
            events: [...before.slice(2), fresh.events[0]!],
            next: fresh.next,
          })
          expect(await wholeFeed(moved)).toEqual([...before, fresh.events[0]!])
        } finally {
          if (server) expect(await server.stop()).toBe(0)
          await t.close()
        }
      },
      STEP_TIMEOUT,
    )

    test.skipIf(skip)(
      `${from} to ${to}: a cursor at an event since swept from FROM still hears TO's next event`,
      async () => {
        const t = await createTestContext({}, { store: from })
        let server: RunningIntake | undefined
        try {
          const first = await t.api.createForm({ title: 'Cancelled, then swept' })
          expect((await t.api.patch(`/forms/${first.id}`, { status: 'cancelled' })).status).toBe(200)
          const source = feedOf(t.api)
          const [held] = await settledFeed(source, 1)
          // Eight days on, the background loop sweeps the event; the agent still holds its id.
          t.clock.advance(8 * DAY_MS)
          t.background.start()
          await until(async () => (await wholeFeed(source)).length === 0, 10_000, 'the event to be swept')
          await t.background.stop()
          expect(await source(`?after=${held!.id}`)).toEqual({ events: [], next: held!.id })
          const later = await t.api.createForm({ title: 'Cancelled on TO' })

          ;({ server } = await copyAndServe(t.store.location, to))
          const moved = feedAt(server, t.key)
          expect(await wholeFeed(moved)).toEqual([])
          await cancelOn(server, t.key, later.id)
          const heard = await moved(`?after=${held!.id}&wait=10`)
          expect(kinds(heard.events)).toEqual([['form.cancelled', later.id]])
        } finally {
          if (server) expect(await server.stop()).toBe(0)
          await t.close()
        }
      },
      STEP_TIMEOUT,
    )
  }
})
