/**
 * An account's overview in the console (CONTRACT 15): forms by status, answers
 * per day over 30 days (the chart's table), the median time to answer,
 * deliveries failing now and recent events, each matching what was made
 * through the API; and only for who may see the account.
 */
import { describe, expect, test } from 'bun:test'
import { consoleClient } from './console-fixtures.ts'
import { type Page, parsePage } from './html.ts'
import { contextsPerTest, submit, type TestContext, until } from './utils.ts'
import { closedPortUrl } from './webhooks-fixtures.ts'

const HOUR = 3_600_000
const DAY = 24 * HOUR
/** Noon (UTC) of the day the tests look from. */
const TODAY_NOON = Date.UTC(2026, 10, 20, 12)
const contexts = contextsPerTest()

/** A form of the account "default" made at `createdAt`, answered `after` ms later (on the test clock). */
async function answeredForm(t: TestContext, createdAt: number, after: number) {
  t.clock.set(createdAt)
  const form = await t.api.createForm()
  t.clock.set(createdAt + after)
  const res = await submit(t.app, form.id, { name: 'Ada' })
  if (res.status !== 201) throw new Error(`not answered: ${res.status} ${res.text}`)
  return form.id
}

/** The rows of the chart's table: day to answers. */
function chartTable(page: Page): Record<string, string> {
  const table = page.within(page.one('details'), 'tr')
  const rows: Record<string, string> = {}
  for (const row of table.slice(1)) {
    const [day, answers] = page.within(row).filter((node) => node.tag === 'th' || node.tag === 'td')
    rows[day!.text.trim()] = answers!.text.trim()
  }
  return rows
}

/** The count the overview shows for a status (its definition list). */
function countOf(page: Page, status: string): string {
  const link = page.all('a').find((a) => a.attrs.href?.endsWith(`/forms?status=${status}`))!
  const entry = page.all('div').find((div) => div.start < link.start && div.end > link.end)!
  return page.within(entry, 'dd')[0]!.text.trim()
}

describe('the overview', () => {
  test('forms by status count what the API made, expiry included', async () => {
    const t = await contexts.create()
    t.clock.set(TODAY_NOON)
    const ids = []
    for (let i = 0; i < 5; i++) ids.push((await t.api.createForm()).id)
    await t.api.createForm({ expires_in: '1h' })
    expect((await t.api.patch(`/forms/${ids[0]}`, { status: 'cancelled' })).status).toBe(200)
    await submit(t.app, ids[1]!, { name: 'Ada' })
    t.clock.advance(2 * HOUR)
    const member = await consoleClient(t, { account: 'default' })
    const res = await member.get(`/console/accounts/${member.viewer.accountId}`)
    expect(res.status).toBe(200)
    expect(res.headers.get('cache-control')).toBe('no-store')
    const page = await parsePage(await res.text())
    expect(['active', 'completed', 'cancelled', 'expired'].map((status) => countOf(page, status))).toEqual([
      '3',
      '1',
      '1',
      '1',
    ])
  })

  test('answers per day: the chart’s table has every one of 30 UTC days with its answers; the median', async () => {
    const t = await contexts.create()
    // 31 days ago: outside the chart. Then 2 answers 29 days ago (the chart's first day), 1 yesterday, 2 today.
    await answeredForm(t, TODAY_NOON - 31 * DAY, HOUR)
    await answeredForm(t, TODAY_NOON - 29 * DAY, HOUR)
    await answeredForm(t, TODAY_NOON - 29 * DAY, 3 * HOUR)
    await answeredForm(t, TODAY_NOON - DAY - 6 * HOUR, 10 * HOUR)
    await answeredForm(t, TODAY_NOON - 2 * HOUR, 30 * 60_000)
    await answeredForm(t, TODAY_NOON - 2 * HOUR, 2 * HOUR)
    t.clock.set(TODAY_NOON + HOUR)
    const member = await consoleClient(t, { account: 'default' })
    const page = await parsePage(await (await member.get(`/console/accounts/${member.viewer.accountId}`)).text())

    const rows = chartTable(page)
    const day = (offset: number) => new Date(TODAY_NOON + offset * DAY).toISOString().slice(0, 10)
    expect(Object.keys(rows)).toHaveLength(30)
    expect(Object.keys(rows)[0]).toBe(day(-29))
    expect(Object.keys(rows).at(-1)).toBe(day(0))
    expect(rows[day(-29)]).toBe('2')
    expect(rows[day(-1)]).toBe('1')
    expect(rows[day(0)]).toBe('2')
    expect(Object.values(rows).reduce((sum, n) => sum + Number(n), 0)).toBe(5)
    // The drawing names what it shows; its bars are the same numbers.
    expect(page.one('svg').attrs.role).toBe('img')
    expect(page.byId('answers-chart-title').text).toBe('5 answers in the last 30 days (UTC days).')
    expect(page.all('rect').filter((bar) => Number(bar.attrs.height) > 0)).toHaveLength(3)
    // Times to answer within the 30 days: 30 min, 1 h, 2 h, 3 h, 10 h: the median is 2 h.
    expect(page.bodyText).toContain('2 hr, from a form’s creation to its answer')
  })

  test('deliveries failing now: counted, with a link to the list; recent events, newest first', async () => {
    const t = await contexts.create({ SERVICE_WEBHOOK_MAX_RETRIES: '0' })
    const hook = await closedPortUrl()
    const failing = await t.api.createForm({ callback_url: hook })
    await submit(t.app, failing.id, { name: 'Ada' })
    const cancelled = await t.api.createForm()
    await t.api.patch(`/forms/${cancelled.id}`, { status: 'cancelled' })
    t.background.start()
    await until(
      async () => (await t.api.get(`/forms/${failing.id}/deliveries`)).body[0]?.status === 'failed',
      10_000,
      'the delivery to a closed port failed',
    )
    const member = await consoleClient(t, { account: 'default' })
    const base = `/console/accounts/${member.viewer.accountId}`
    const page = await parsePage(await (await member.get(base)).text())
    expect(page.bodyText).toContain('1 webhook delivery is failing.')
    expect(page.all('a').some((a) => a.attrs.href === `${base}/deliveries`)).toBe(true)
    const events = page.within(page.one('ol'), 'li').map((item) => item.text.replace(/\s+/g, ' ').trim())
    expect(events).toHaveLength(2)
    expect(events[0]).toStartWith(`form.cancelled ${cancelled.id}`)
    expect(events[1]).toStartWith(`form.completed ${failing.id}`)
  })

  test('a new account shows zeros and says there is nothing yet', async () => {
    const t = await contexts.create()
    const member = await consoleClient(t, { account: 'quiet' })
    const page = await parsePage(await (await member.get(`/console/accounts/${member.viewer.accountId}`)).text())
    expect(countOf(page, 'active')).toBe('0')
    expect(page.bodyText).toContain('No answer in the last 30 days.')
    expect(page.bodyText).toContain('No webhook delivery is failing.')
    expect(page.bodyText).toContain('No event yet')
  })
})

describe('who sees an overview', () => {
  test('a member reaching another account’s overview (or any of its pages) gets 404; an operator sees both', async () => {
    const t = await contexts.create()
    const mine = await consoleClient(t, { account: 'mine' })
    const theirs = await consoleClient(t, { account: 'theirs' })
    const other = `/console/accounts/${theirs.viewer.accountId}`
    for (const path of [other, `${other}/keys`, `${other}/deliveries`, `${other}/events`]) {
      expect((await mine.get(path)).status).toBe(404)
    }
    const operator = await consoleClient(t, { operator: true })
    expect((await operator.get(other)).status).toBe(200)
    expect((await operator.get(`/console/accounts/${mine.viewer.accountId}`)).status).toBe(200)
  })

  test('signed out, the overview sends to sign-in', async () => {
    const t = await contexts.create()
    const member = await consoleClient(t, { account: 'default' })
    const res = await t.app.handle(new Request(`http://intake.test/console/accounts/${member.viewer.accountId}`))
    expect(res.status).toBe(303)
    expect(res.headers.get('location')).toStartWith('/console/sign-in?next=')
  })
})
