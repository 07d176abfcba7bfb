/**
 * `page.time_zone` (CONTRACT 11, amended by 13a): stored and returned in its
 * canonical IANA spelling, whatever case it was sent in; and the formats the
 * pages write dates with are kept in a cache bounded in entries and bytes,
 * whatever zones and spellings clients send (800 forms, each with its own
 * spelling of one zone, took a server from 60 to 885 MB that it never gave
 * back: every spelling kept a format for every language).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { DATE_TIME_FORMATS_KEPT, dateTimeFormatsKept } from '../src/i18n/index.ts'
import { createTestContext, openPage, send, type TestContext, validForm } from './utils.ts'

let t: TestContext
beforeAll(async () => {
  t = await createTestContext()
})
afterAll(() => t.close())

const create = (page: Record<string, unknown>) => t.api.post('/forms', validForm({ page }))

const formatsKept = dateTimeFormatsKept

/** `zone` with each letter's case chosen by the bits of `n`. */
const spelling = (zone: string, n: number) =>
  [...zone].map((c, i) => ((n >> (i % 30)) & 1 ? c.toUpperCase() : c.toLowerCase())).join('')

describe('page.time_zone is stored and returned in its canonical spelling', () => {
  test.each([
    ['aMerica/new_york', 'America/New_York'],
    ['AMERICA/NEW_YORK', 'America/New_York'],
    ['europe/berlin', 'Europe/Berlin'],
    ['utc', 'UTC'],
    ['etc/gmt+5', 'Etc/GMT+5'],
    // Links (older names) keep their own name, in its canonical case, as Intl does.
    ['aMerica/Argentina/ComodRivadavia', 'America/Argentina/ComodRivadavia'],
    ['asia/calcutta', 'Asia/Calcutta'],
    ['us/eastern', 'US/Eastern'],
  ])(
    '%s is stored as %s: in the create answer and in Get Form, the other page keys as given',
    async (sent, canonical) => {
      const created = await create({ sender: 'Ops', time_zone: sent, locale: 'de-AT' })
      expect(created.status).toBe(201)
      expect(JSON.stringify(created.body.page)).toBe(
        JSON.stringify({ sender: 'Ops', time_zone: canonical, locale: 'de-AT' }),
      )
      const got = await t.api.get(`/forms/${created.body.id}`)
      expect(JSON.stringify(got.body.page)).toBe(JSON.stringify(created.body.page))
    },
  )

  test('through MCP create_form too', async () => {
    const res = await send(t.app, 'POST', '/mcp', {
      key: t.key,
      headers: { accept: 'application/json, text/event-stream' },
      body: {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'create_form', arguments: validForm({ page: { time_zone: 'aSIA/tOKYO' } }) },
      },
    })
    expect(res.body.result.structuredContent.page).toEqual({ time_zone: 'Asia/Tokyo' })
  })

  test('an unknown zone, in any case, is still 422 at /page/time_zone', async () => {
    for (const time_zone of ['america/new_yorkk', 'Mars/Olympus_Mons']) {
      const res = await create({ time_zone })
      expect(res.status).toBe(422)
      expect(res.body.errors).toEqual([
        { path: '/page/time_zone', message: expect.stringContaining(time_zone), code: 'invalid_value' },
      ])
    }
  })
})

describe('the date-time formats pages use are kept within a bound', () => {
  test('500 spellings of one zone are one zone: rendering their pages adds at most one format per language', async () => {
    const zone = 'America/Argentina/ComodRivadavia'
    const before = formatsKept()
    for (let n = 0; n < 500; n++) {
      const created = await create({ time_zone: spelling(zone, n * 7919 + 1) })
      expect(created.body.page.time_zone).toBe(zone)
      expect((await openPage(t.app, created.body.id, { 'accept-language': 'en' })).status).toBe(200)
    }
    expect(formatsKept().entries - before.entries).toBeLessThanOrEqual(1)
  }, 60_000)

  test('every zone Intl knows, its pages in two languages each: the cache stays at or under its bound in entries and bytes', async () => {
    const zones = Intl.supportedValuesOf('timeZone')
    const languages = ['en', 'de', 'ja', 'ar', 'pt-BR']
    const { maxEntries, maxBytes } = DATE_TIME_FORMATS_KEPT
    expect(zones.length * 2).toBeGreaterThan(maxEntries)
    let largest = 0
    for (const [i, zone] of zones.entries()) {
      const created = await create({ time_zone: spelling(zone, i) })
      expect(created.status).toBe(201)
      for (const language of [languages[i % languages.length]!, languages[(i + 1) % languages.length]!]) {
        const page = await openPage(t.app, created.body.id, { 'accept-language': language })
        expect(page.status).toBe(200)
        const kept = formatsKept()
        largest = Math.max(largest, kept.entries)
        expect(kept.bytes).toBeLessThanOrEqual(maxBytes)
      }
    }
    expect(largest).toBeLessThanOrEqual(maxEntries)
    // The bound was reached, and held: the cache was full and let the oldest go.
    expect(largest).toBe(maxEntries)
  }, 60_000)
})
