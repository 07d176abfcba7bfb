/**
 * An account's failing deliveries and its event feed in the console
 * (CONTRACT 15): what the webhooks and events services hold, shown; Redeliver
 * through the same service as the API; the feed paged with its own cursors.
 */
import { describe, expect, setDefaultTimeout, test } from 'bun:test'
import { consoleClient, consoleRequest } from './console-fixtures.ts'
import { parsePage } from './html.ts'
import { contextsPerTest, submit, type TestContext, until } from './utils.ts'
import { closedPortUrl } from './webhooks-fixtures.ts'

setDefaultTimeout(20_000)
const contexts = contextsPerTest()

/** A form of "default" with a webhook to a closed port, answered, its one delivery failed (no retries). */
async function failedDelivery(t: TestContext, title: string) {
  const form = await t.api.createForm({ title, callback_url: await closedPortUrl() })
  await submit(t.app, form.id, { name: 'Ada' })
  t.background.start()
  t.background.wake()
  await until(
    async () => (await t.api.get(`/forms/${form.id}/deliveries`)).body[0]?.status === 'failed',
    10_000,
    'the delivery to a closed port failed',
  )
  return { formId: form.id, deliveryId: (await t.api.get(`/forms/${form.id}/deliveries`)).body[0].id as string }
}

describe('failing deliveries', () => {
  test('listed with form, event, attempts and the last error; Redeliver queues a fresh round', async () => {
    const t = await contexts.create({ SERVICE_WEBHOOK_MAX_RETRIES: '0' })
    const { formId, deliveryId } = await failedDelivery(t, 'Travel <preferences>')
    const member = await consoleClient(t, { account: 'default' })
    const page = `/console/accounts/${member.viewer.accountId}/deliveries`
    const html = await (await member.get(page)).text()
    const list = await parsePage(html)
    const [row] = list.within(list.one('tbody'), 'tr')
    const cells = list.within(row!).filter((node) => node.tag === 'th' || node.tag === 'td')
    expect(cells.slice(0, 3).map((cell) => cell.text.trim())).toEqual(['Travel <preferences>', 'form.completed', '1'])
    expect(cells[3]!.text).toMatch(/refused|connect|ECONNREFUSED/i)
    expect(cells[3]!.text).not.toContain('/hook') // errors show the origin alone, as the API does
    expect(cells[4]!.text.trim()).toBe('None: given up')
    expect(list.within(row!, 'a')[0]!.attrs.href).toBe(`/console/accounts/${member.viewer.accountId}/forms/${formId}`)
    const action = list.within(row!, 'form')[0]!.attrs.action!
    expect(action).toBe(`/console/accounts/${member.viewer.accountId}/deliveries/${deliveryId}/redeliver`)

    await t.background.stop()
    const redelivered = await member.post(action, { form: formId })
    expect(redelivered.status).toBe(303)
    const [again] = (await t.api.get(`/forms/${formId}/deliveries`)).body
    expect(again).toMatchObject({ id: deliveryId, status: 'pending', attempts: 1 })
    const after = await parsePage(await (await member.get(redelivered.headers.get('location')!)).text())
    expect(after.bodyText).toContain('The delivery is queued again')
    t.background.start()
    t.background.wake()
    await until(
      async () => (await t.api.get(`/forms/${formId}/deliveries`)).body[0]?.attempts === 2,
      10_000,
      'the fresh round made its attempt',
    )
  })

  test('another account’s delivery is 404 to a member; a Redeliver without csrf is 403', async () => {
    const t = await contexts.create({ SERVICE_WEBHOOK_MAX_RETRIES: '0' })
    const { formId, deliveryId } = await failedDelivery(t, 'Theirs')
    const stranger = await consoleClient(t, { account: 'elsewhere' })
    const theirs = `/console/accounts/${stranger.viewer.accountId}/deliveries/${deliveryId}/redeliver`
    expect((await stranger.post(theirs, { form: formId })).status).toBe(404)
    const member = await consoleClient(t, { account: 'default' })
    const mine = `/console/accounts/${member.viewer.accountId}/deliveries/${deliveryId}/redeliver`
    const without = await consoleRequest(t, 'POST', mine, {
      cookie: member.cookie,
      body: new URLSearchParams({ form: formId }),
    })
    expect(without.status).toBe(403)
    expect((await t.api.get(`/forms/${formId}/deliveries`)).body[0].status).toBe('failed')
  })

  test('none failing: the page says so', async () => {
    const t = await contexts.create()
    const member = await consoleClient(t, { account: 'default' })
    const page = await parsePage(
      await (await member.get(`/console/accounts/${member.viewer.accountId}/deliveries`)).text(),
    )
    expect(page.bodyText).toContain('No webhook delivery is failing.')
  })
})

describe('the event feed', () => {
  test('events shown with type, form link, time and body; paged with the feed’s cursors', async () => {
    const t = await contexts.create()
    const forms: string[] = []
    for (let i = 0; i < 25; i++) {
      const form = await t.api.createForm({ context: { n: i } })
      await t.api.patch(`/forms/${form.id}`, { status: 'cancelled' })
      forms.push(form.id)
    }
    const member = await consoleClient(t, { account: 'default' })
    const base = `/console/accounts/${member.viewer.accountId}`
    const formsOn = async (path: string) => {
      const page = await parsePage(await (await member.get(path)).text())
      const items = page.within(page.one('ol'), 'li')
      return { page, ids: items.map((item) => page.within(item, 'a')[0]!.text.trim()) }
    }

    // The latest page: the last 20, in the feed's order.
    const latest = await formsOn(`${base}/events`)
    expect(latest.ids).toEqual(forms.slice(5))
    const first = latest.page.within(latest.page.one('ol'), 'li')[0]!
    expect(first.text).toContain('form.cancelled')
    expect(latest.page.within(first, 'a')[0]!.attrs.href).toBe(`${base}/forms/${forms[5]}`)
    expect(latest.page.within(first, 'time')[0]!.attrs.datetime).toMatch(/^\d{4}-\d{2}-\d{2}T/)
    expect(JSON.parse(latest.page.within(first, 'pre')[0]!.text)).toMatchObject({
      event: 'form.cancelled',
      form_id: forms[5],
      context: { n: 5 },
    })

    // Earlier: the 5 before it, then later from there: the rest, as the API reads them.
    const links = (page: typeof latest.page) =>
      Object.fromEntries(
        page
          .all('a')
          .filter((a) => a.attrs.rel)
          .map((a) => [a.attrs.rel, a.attrs.href!]),
      )
    expect(links(latest.page).next).toBeUndefined()
    const earlier = await formsOn(links(latest.page).prev!)
    expect(earlier.ids).toEqual(forms.slice(0, 5))
    expect(links(earlier.page).prev).toBeUndefined()
    const later = await formsOn(links(earlier.page).next!)
    expect(later.ids).toEqual(forms.slice(5))
    const cursor = new URL(links(earlier.page).next!, 'http://x').searchParams.get('after')!
    const api = (await t.api.get(`/events?limit=5`)).body
    expect(api.next).toBe(cursor)
  })

  test('a cursor that is no cursor is refused as the API refuses it; no event yet says so', async () => {
    const t = await contexts.create()
    const member = await consoleClient(t, { account: 'default' })
    const base = `/console/accounts/${member.viewer.accountId}/events`
    expect((await member.get(`${base}?after=nonsense`)).status).toBe(422)
    const page = await parsePage(await (await member.get(base)).text())
    expect(page.bodyText).toContain('No event here.')
  })
})
