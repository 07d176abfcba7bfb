/**
 * What the console does to forms (CONTRACT 15), each through the service the
 * API uses: cancel, change the expiry and delete behind a confirmation page,
 * redeliver, a new form from pasted create JSON (previewed, its 422 problems
 * listed beside the JSON, created). Every POST without the session's token is
 * refused before anything happens.
 */
import { describe, expect, test } from 'bun:test'
import { type ConsoleClient, consoleClient, consoleRequest } from './console-fixtures.ts'
import { contextsPerTest, type TestContext } from './utils.ts'

const contexts = contextsPerTest()
const HOUR = 3_600_000

async function member(t: TestContext): Promise<ConsoleClient & { base: string }> {
  const client = await consoleClient(t, { account: 'default' })
  return { ...client, base: `/console/accounts/${client.viewer.accountId}` }
}

const seeOther = (response: Response) => {
  expect(response.status).toBe(303)
  return response.headers.get('location')!
}

/** A urlencoded POST with the session's cookie but not its token. */
const withoutCsrf = (t: TestContext, client: ConsoleClient, path: string, fields: Record<string, string> = {}) =>
  consoleRequest(t, 'POST', path, { cookie: client.cookie, body: new URLSearchParams(fields) })

describe('cancel, expiry, delete: a confirmation page, then the change', () => {
  test('cancel: the page says what it does; the POST cancels as the API would, and the feed hears it', async () => {
    const t = await contexts.create()
    const console = await member(t)
    const form = await t.api.createForm({ title: 'Holiday dates' })
    const confirm = await console.get(`${console.base}/forms/${form.id}/cancel`)
    expect(confirm.status).toBe(200)
    const page = await confirm.text()
    expect(page).toContain('Cancel “Holiday dates”?')
    expect(page).toContain(`action="${console.base}/forms/${form.id}/cancel"`)
    expect((await t.api.get(`/forms/${form.id}`)).body.status).toBe('active')

    const back = seeOther(await console.post(`${console.base}/forms/${form.id}/cancel`, {}))
    expect(back).toBe(`${console.base}/forms/${form.id}?done=cancelled`)
    expect((await t.api.get(`/forms/${form.id}`)).body.status).toBe('cancelled')
    const after = await (await console.get(back)).text()
    expect(after).toContain('The form is cancelled.')
    expect(after).toContain('<code>form.cancelled</code>')
    expect(after).not.toContain('/cancel"')
    // Cancelling again changes nothing, as the API's PATCH; the expiry of an ended form is a 409, said on the page.
    seeOther(await console.post(`${console.base}/forms/${form.id}/cancel`, {}))
    const refused = await console.post(`${console.base}/forms/${form.id}/expiry`, { choice: 'none' })
    expect(refused.status).toBe(422)
    expect(await refused.text()).toContain('The expiry of a cancelled form cannot be changed')
  })

  test('expiry: a time in UTC, or none; a past or malformed time is refused with the reason, as typed', async () => {
    const t = await contexts.create()
    const console = await member(t)
    const form = await t.api.createForm({ expires_in: '1h' })
    const page = await (await console.get(`${console.base}/forms/${form.id}/expiry`)).text()
    expect(page).toContain(`value="${form.expires_at!.slice(0, 16)}"`)

    const later = new Date(t.clock() + 48 * HOUR).toISOString().slice(0, 16)
    seeOther(await console.post(`${console.base}/forms/${form.id}/expiry`, { choice: 'at', at: later }))
    expect((await t.api.get(`/forms/${form.id}`)).body.expires_at).toBe(`${later}:00.000`)

    const past = new Date(t.clock() - HOUR).toISOString().slice(0, 16)
    const refused = await console.post(`${console.base}/forms/${form.id}/expiry`, { choice: 'at', at: past })
    expect(refused.status).toBe(422)
    const text = await refused.text()
    expect(text).toContain('Must be in the future')
    expect(text).toContain(`value="${past}"`)
    expect((await console.post(`${console.base}/forms/${form.id}/expiry`, { choice: 'at', at: 'soon' })).status).toBe(
      422,
    )

    seeOther(await console.post(`${console.base}/forms/${form.id}/expiry`, { choice: 'none' }))
    expect((await t.api.get(`/forms/${form.id}`)).body.expires_at).toBeNull()
  })

  test('delete: the page warns; the POST deletes the form and goes back to the list', async () => {
    const t = await contexts.create()
    const console = await member(t)
    const form = await t.api.createForm({ title: 'Old survey' })
    expect(await (await console.get(`${console.base}/forms/${form.id}/delete`)).text()).toContain(
      'this cannot be undone',
    )
    expect(seeOther(await console.post(`${console.base}/forms/${form.id}/delete`, {}))).toBe(`${console.base}/forms`)
    expect((await t.api.get(`/forms/${form.id}`)).status).toBe(404)
    expect((await console.get(`${console.base}/forms/${form.id}`)).status).toBe(404)
  })

  test('redeliver: a settled delivery goes back in the queue, through the webhooks service', async () => {
    const t = await contexts.create()
    const console = await member(t)
    const form = await t.api.createForm({
      callback_url: 'http://127.0.0.1:9/hook',
      callback_events: ['form.cancelled'],
    })
    await t.api.patch(`/forms/${form.id}`, { status: 'cancelled' })
    await t.sql(`UPDATE deliveries SET status = 'failed', next_attempt_at = NULL, attempts = 3`)
    const [delivery] = (await t.api.get(`/forms/${form.id}/deliveries`)).body
    const page = await (await console.get(`${console.base}/forms/${form.id}`)).text()
    expect(page).toContain('Failed')
    const action = `${console.base}/forms/${form.id}/deliveries/${delivery.id}/redeliver`
    expect(page).toContain(`action="${action}"`)
    expect(seeOther(await console.post(action, {}))).toBe(
      `${console.base}/forms/${form.id}?done=redelivered#deliveries`,
    )
    expect((await t.api.get(`/forms/${form.id}/deliveries`)).body[0]).toMatchObject({ status: 'pending', attempts: 3 })
  })
})

describe('a new form from pasted create JSON', () => {
  const body = {
    title: 'Team lunch',
    fields: [{ key: 'dish', type: 'select', label: 'Your dish', config: { options: ['soup', 'salad'] } }],
    page: { locale: 'de' },
  }

  test('Preview shows the page it makes, creates nothing; Create makes it and goes to it', async () => {
    const t = await contexts.create()
    const console = await member(t)
    const blank = await (await console.get(`${console.base}/forms/new`)).text()
    expect(blank).toContain('<textarea id="form-json" name="body"')
    expect(blank).toContain('&quot;title&quot;: &quot;Approve the deploy&quot;')

    const json = JSON.stringify(body, null, 2)
    const preview = await console.post(`${console.base}/forms/new`, { body: json, action: 'preview' })
    expect(preview.status).toBe(200)
    const page = await preview.text()
    expect(page).toContain('The page it makes')
    expect(page).toContain('<div class="console-page-frame" lang="de" dir="ltr">')
    expect(page).toContain('Your dish')
    expect(page).toContain('<fieldset disabled class="preview-fields">')
    expect(page).toContain('&quot;Team lunch&quot;')
    expect((await t.api.get('/forms')).body).toEqual([])

    const created = seeOther(await console.post(`${console.base}/forms/new`, { body: json, action: 'create' }))
    const [form] = (await t.api.get('/forms')).body
    expect(created).toBe(`${console.base}/forms/${form.id}`)
    expect(form).toMatchObject({ title: 'Team lunch', status: 'active' })
    expect((await t.api.get(`/forms/${form.id}`)).body.page).toEqual({ locale: 'de' })
  })

  test('the 422 problems are listed beside the JSON, kept as typed; a callback_url is sent to the API; not JSON says so', async () => {
    const t = await contexts.create()
    const console = await member(t)
    const wrong = JSON.stringify({ title: '', fields: [{ key: 'a b', type: 'colour', label: 'X' }] })
    for (const action of ['preview', 'create']) {
      const refused = await console.post(`${console.base}/forms/new`, { body: wrong, action })
      expect(refused.status).toBe(422)
      const page = await refused.text()
      expect(page).toContain('There is a problem')
      expect(page).toMatch(/<code>\/title<\/code> <span>[^<]+<\/span>/)
      expect(page).toContain('<code>/fields/0/type</code>')
      expect(page).toContain(`>\n${wrong.replaceAll('"', '&quot;')}</textarea>`)
    }
    const webhooked = JSON.stringify({ ...body, callback_url: 'https://example.com/hook' })
    const callback = await (
      await console.post(`${console.base}/forms/new`, { body: webhooked, action: 'create' })
    ).text()
    expect(callback).toContain('<code>/callback_url</code> <span>A form with a callback_url is created through the API')
    const broken = await console.post(`${console.base}/forms/new`, { body: '{"title": ', action: 'preview' })
    expect(broken.status).toBe(422)
    expect(await broken.text()).toContain('This is not JSON')
    expect((await t.api.get('/forms')).body).toEqual([])
  })
})

test('every POST without the session’s token is refused with 403, and changes nothing', async () => {
  const t = await contexts.create()
  const console = await member(t)
  const form = await t.api.createForm({ callback_url: 'http://127.0.0.1:9/hook', callback_events: ['form.cancelled'] })
  const base = `${console.base}/forms/${form.id}`
  for (const [path, fields] of [
    [`${base}/cancel`, {}],
    [`${base}/expiry`, { choice: 'none' }],
    [`${base}/delete`, {}],
    [`${base}/deliveries/01ARZ3NDEKTSV4RRFFQ69G5FAV/redeliver`, {}],
    [`${console.base}/forms/new`, { body: JSON.stringify(body()), action: 'create' }],
  ] as const) {
    expect((await withoutCsrf(t, console, path, fields)).status, path).toBe(403)
    expect((await withoutCsrf(t, console, path, { ...fields, csrf: 'x'.repeat(43) })).status, path).toBe(403)
  }
  expect((await t.api.get('/forms')).body.map((f: { id: string }) => f.id)).toEqual([form.id])
  expect((await t.api.get(`/forms/${form.id}`)).body).toMatchObject({ status: 'active', expires_at: form.expires_at })
  function body() {
    return { title: 'Sneaky', fields: [{ key: 'a', type: 'text', label: 'A' }] }
  }
})
