/**
 * The human's page, posted as a browser posts it (CONTRACT 6, 7): an answer taken,
 * a refused post shown again, a form that takes no answer, refused browser posts,
 * and the HTML and JSON paths giving the same results. Pages are parsed with
 * Bun's HTMLRewriter and entity-decoded, so the assertions see what a browser sees.
 */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import {
  expectFieldError,
  expectFieldValid,
  expectFormPage,
  expectPage,
  expectSeeOther,
  expectThankYou,
  type FieldDef,
  pageRequests,
} from './page-fixtures.ts'
import {
  createTestContext,
  EVERY_TYPE_ANSWERS,
  EVERY_TYPE_FIELDS,
  openPage,
  postForm,
  submit,
  type TestContext,
  UNKNOWN_ID,
} from './utils.ts'

let t: TestContext
beforeEach(async () => {
  t = await createTestContext()
})
afterEach(() => t.close())
const { postRaw, responsesOf, onlyResponse } = pageRequests(() => t)

// ================================================================ posting

describe('posting the form', () => {
  test('a valid urlencoded post is 303 to /f/<id>, which then shows the thank-you page, also on a later GET', async () => {
    const form = await t.api.createForm()
    const res = await postForm(t.app, form.id, { name: 'Ada' })
    expectSeeOther(res, form.id)
    expect((await onlyResponse(form.id)).data).toEqual({ name: 'Ada' })
    await expectThankYou(await openPage(t.app, form.id))
    t.clock.advance(3_600_000)
    const later = await expectThankYou(await openPage(t.app, form.id))
    expect(later.bodyText).not.toContain('Ada')
    expect(await responsesOf(form.id)).toHaveLength(1)
  })

  test('a multipart post is accepted for a form without file fields', async () => {
    const form = await t.api.createForm()
    const data = new FormData()
    data.append('name', 'Grace')
    expectSeeOther(await postForm(t.app, form.id, data), form.id)
    expect((await onlyResponse(form.id)).data).toEqual({ name: 'Grace' })
  })

  test('every type posted as a browser sends it is stored with its JSON type; an unticked box is false, empty optional fields are left out', async () => {
    const fields = EVERY_TYPE_FIELDS.filter((f) => f.type !== 'file')
    const full = await t.api.createForm({ fields })
    expectSeeOther(
      await postForm(t.app, full.id, {
        name: 'Ada',
        notes: 'Line one\r\nLine two',
        email: 'ada@example.com',
        guests: '3',
        meal: 'veg',
        agree: 'on',
        day: '2026-06-01',
      }),
      full.id,
    )
    expect((await onlyResponse(full.id)).data).toEqual(EVERY_TYPE_ANSWERS)

    const sparse = await t.api.createForm({
      fields: [...fields, { key: 'extra_box', type: 'checkbox', label: 'Extra' }],
    })
    expectSeeOther(
      await postForm(t.app, sparse.id, {
        name: 'Ada',
        notes: '',
        email: '',
        guests: '',
        meal: '',
        agree: 'true',
        day: '',
      }),
      sparse.id,
    )
    expect((await onlyResponse(sparse.id)).data).toEqual({ name: 'Ada', agree: true, extra_box: false })
  })

  test('keys starting with "_" are ignored', async () => {
    const form = await t.api.createForm()
    expectSeeOther(
      await postForm(t.app, form.id, [
        ['_token', 'abc'],
        ['name', 'Ada'],
        ['_submit', 'Send'],
      ]),
      form.id,
    )
    expect((await onlyResponse(form.id)).data).toEqual({ name: 'Ada' })
  })

  test('an unknown key is a 422 page that keeps what was typed, and nothing is stored', async () => {
    const form = await t.api.createForm()
    const page = await expectFormPage(await postForm(t.app, form.id, { name: 'Ada', surprise: 'x' }), 422)
    expect(page.control('name').attrs.value).toBe('Ada')
    expect(await responsesOf(form.id)).toEqual([])
    expect((await t.api.get(`/forms/${form.id}`)).body.status).toBe('active')
  })

  test('CRLF line breaks from a textarea are stored as LF', async () => {
    const form = await t.api.createForm({ fields: [{ key: 'notes', type: 'textarea', label: 'Notes' }] })
    expectSeeOther(await postForm(t.app, form.id, { notes: 'one\r\ntwo\r\n\r\nthree' }), form.id)
    expect((await onlyResponse(form.id)).data).toEqual({ notes: 'one\ntwo\n\nthree' })
  })

  test('the page submitted as it stands stores exactly the defaults', async () => {
    const fields = [
      { key: 'name', type: 'text', label: 'Name', config: { default: 'Ada Lovelace' } },
      { key: 'notes', type: 'textarea', label: 'Notes', config: { default: 'first\nsecond' } },
      { key: 'email', type: 'email', label: 'Email', config: { default: 'ada@example.com' } },
      { key: 'guests', type: 'number', label: 'Guests', config: { default: 4, step: 2 } },
      { key: 'meal', type: 'select', label: 'Meal', config: { options: ['fish', 'veg'], default: 'veg' } },
      { key: 'agree', type: 'checkbox', label: 'I agree', config: { default: true } },
      { key: 'day', type: 'date', label: 'Day', config: { default: '2026-05-04' } },
    ]
    const form = await t.api.createForm({ fields })
    const page = await expectFormPage(await openPage(t.app, form.id))
    expectSeeOther(await postForm(t.app, form.id, page.browserEntries()), form.id)
    expect((await onlyResponse(form.id)).data).toEqual({
      name: 'Ada Lovelace',
      notes: 'first\nsecond',
      email: 'ada@example.com',
      guests: 4,
      meal: 'veg',
      agree: true,
      day: '2026-05-04',
    })
  })
})

describe('a refused post (422) shows the page again', () => {
  const fields: FieldDef[] = [
    { key: 'name', type: 'text', label: 'Name', required: true, config: { max_length: 10 } },
    { key: 'notes', type: 'textarea', label: 'Notes', config: { default: 'default notes' } },
    { key: 'email', type: 'email', label: 'Email' },
    { key: 'guests', type: 'number', label: 'Guests', config: { min: 1, max: 10, step: 1 } },
    {
      key: 'meal',
      type: 'select',
      label: 'Meal',
      config: { options: ['fish', { value: 'veg', label: 'Vegetarian' }], default: 'fish' },
    },
    { key: 'agree', type: 'checkbox', label: 'I agree', required: true },
    { key: 'news', type: 'checkbox', label: 'Newsletter', config: { default: true } },
    { key: 'day', type: 'date', label: 'Day', config: { min: '2026-01-01', max: '2026-12-31', default: '2026-02-02' } },
  ]

  test('with a summary at the top linking to each invalid field, and each error next to its field', async () => {
    const form = await t.api.createForm({ fields })
    const res = await postForm(t.app, form.id, {
      name: 'Far too long a name',
      notes: '',
      email: 'not-an-email',
      guests: '11',
      meal: 'veg',
      day: '2027-01-01',
    })
    const page = await expectFormPage(res, 422)
    const invalid = ['name', 'email', 'guests', 'agree', 'day']
    expect([...page.summaryLinks().keys()].sort()).toEqual([...invalid].sort())
    for (const key of invalid) expectFieldError(page, fields, key)
    for (const key of ['notes', 'meal', 'news']) expectFieldValid(page, key)
    // Every summary link leads to a control on the page.
    for (const key of page.summaryLinks().keys()) expect(page.hasId(`field-${key}`)).toBe(true)
    expect(await responsesOf(form.id)).toEqual([])
  })

  test('every typed value is kept, not the defaults: an unticked box with default true stays unticked', async () => {
    const form = await t.api.createForm({ fields })
    const first = await expectFormPage(await openPage(t.app, form.id))
    expect('checked' in first.control('news').attrs).toBe(true)
    expect(first.control('notes').text).toBe('default notes')
    expect(first.control('day').attrs.value).toBe('2026-02-02')

    // name missing: refused; everything else as typed. "news" unticked, "agree" ticked.
    const typed = {
      name: '',
      notes: 'my own\r\nnotes',
      email: 'ada@example',
      guests: '2.5',
      meal: 'veg',
      agree: 'true',
      day: '2026-07-08',
    }
    const page = await expectFormPage(await postForm(t.app, form.id, typed), 422)
    expectFieldError(page, fields, 'name')
    expect(page.control('name').attrs.value ?? '').toBe('')
    expect(page.control('notes').text.replace(/\r\n/g, '\n')).toBe('my own\nnotes')
    expect(page.control('email').attrs.value).toBe('ada@example')
    expect(page.control('guests').attrs.value).toBe('2.5')
    expect(
      page
        .all('input')
        .filter((o) => o.attrs.name === 'meal' && 'checked' in o.attrs)
        .map((o) => o.attrs.value),
    ).toEqual(['veg'])
    expect('checked' in page.control('agree').attrs).toBe(true)
    expect('checked' in page.control('news').attrs).toBe(false)
    expect(page.control('day').attrs.value).toBe('2026-07-08')
  })

  test('an emptied field with a default stays empty', async () => {
    const form = await t.api.createForm({ fields })
    const page = await expectFormPage(await postForm(t.app, form.id, { name: '', notes: '', meal: '', day: '' }), 422)
    expect(page.control('notes').text).toBe('')
    expect(page.control('day').attrs.value ?? '').toBe('')
    expect(
      page.within(page.control('meal'), 'option').filter((o) => 'selected' in o.attrs && o.attrs.value !== ''),
    ).toEqual([])
  })

  test('after fixing the errors the same page submits: 303 and the corrected values are stored', async () => {
    const form = await t.api.createForm({ fields })
    const page = await expectFormPage(
      await postForm(t.app, form.id, { name: '', guests: '3', meal: 'veg', agree: 'true', day: '2026-07-08' }),
      422,
    )
    const entries = page.browserEntries().map(([k, v]): [string, string] => (k === 'name' ? [k, 'Ada'] : [k, v]))
    expectSeeOther(await postForm(t.app, form.id, entries), form.id)
    expect((await onlyResponse(form.id)).data).toEqual({
      name: 'Ada',
      guests: 3,
      meal: 'veg',
      agree: true,
      news: false,
      day: '2026-07-08',
    })
  })

  test('a required checkbox left unticked is refused next to the box', async () => {
    const form = await t.api.createForm({ fields })
    const page = await expectFormPage(await postForm(t.app, form.id, { name: 'Ada' }), 422)
    expect([...page.summaryLinks().keys()]).toEqual(['agree'])
    expectFieldError(page, fields, 'agree')
    expect(await responsesOf(form.id)).toEqual([])
  })
})

// ================================================================ form states

describe('a form that takes no answer', () => {
  test('completed: GET is the 200 thank-you page; POST is a 409 page and there is still exactly one response', async () => {
    const form = await t.api.createForm()
    expectSeeOther(await postForm(t.app, form.id, { name: 'Ada' }), form.id)
    await expectThankYou(await openPage(t.app, form.id))
    const page = await expectPage(await postForm(t.app, form.id, { name: 'Grace' }), 409)
    expect(page.all('form')).toEqual([])
    expect(page.bodyText).toMatch(/already/i)
    const multi = new FormData()
    multi.append('name', 'Linus')
    await expectPage(await postForm(t.app, form.id, multi), 409)
    expect((await onlyResponse(form.id)).data).toEqual({ name: 'Ada' })
  })

  test('cancelled: GET and POST are 410 pages saying it was cancelled', async () => {
    const form = await t.api.createForm()
    expect((await t.api.patch(`/forms/${form.id}`, { status: 'cancelled' })).status).toBe(200)
    for (const res of [await openPage(t.app, form.id), await postForm(t.app, form.id, { name: 'Ada' })]) {
      const page = await expectPage(res, 410)
      expect(page.all('form')).toEqual([])
      expect(page.bodyText).toMatch(/cancel/i)
      expect(page.bodyText).not.toMatch(/expire/i)
    }
    expect(await responsesOf(form.id)).toEqual([])
  })

  test('expired: GET and POST are 410 pages saying it expired', async () => {
    const form = await t.api.createForm({ expires_in: '1m' })
    await expectFormPage(await openPage(t.app, form.id))
    t.clock.advance(61_000)
    for (const res of [await openPage(t.app, form.id), await postForm(t.app, form.id, { name: 'Ada' })]) {
      const page = await expectPage(res, 410)
      expect(page.all('form')).toEqual([])
      expect(page.bodyText).toMatch(/expired/i)
      expect(page.bodyText).not.toMatch(/cancel/i)
    }
    expect(await responsesOf(form.id)).toEqual([])
  })

  test.each([
    ['an unknown id', UNKNOWN_ID],
    ['a malformed id', 'not-a-form-id'],
    ['a lower-case unknown id', UNKNOWN_ID.toLowerCase()],
  ])('%s is a 404 page on GET and on a form post', async (_name, id) => {
    for (const res of [await openPage(t.app, id), await postForm(t.app, id, { name: 'Ada' })]) {
      const page = await expectPage(res, 404)
      expect(page.all('form')).toEqual([])
      expect(page.one('h1').text).toMatch(/not found/i)
    }
  })

  test('a deleted form is a 404 page', async () => {
    const form = await t.api.createForm()
    expect((await t.api.delete(`/forms/${form.id}`)).status).toBe(204)
    await expectPage(await openPage(t.app, form.id), 404)
    await expectPage(await postForm(t.app, form.id, { name: 'Ada' }), 404)
  })

  test('a text/plain post is a JSON 415, while a urlencoded post to an unknown form is an HTML 404', async () => {
    const form = await t.api.createForm()
    const plain = await postRaw(form.id, 'name=Ada', 'text/plain')
    expect(plain.status).toBe(415)
    expect(plain.headers.get('content-type') ?? '').toMatch(/^application\/json/i)
    expect(typeof plain.body.detail).toBe('string')
    expect(await responsesOf(form.id)).toEqual([])

    const unknown = await postRaw(UNKNOWN_ID, 'name=Ada', 'application/x-www-form-urlencoded')
    await expectPage(unknown, 404)
  })
})

// ================================================================ refused requests

describe('refused browser posts', () => {
  test('a cross-site post is a 403 page and records nothing; same-site, same-origin, none and no header are accepted', async () => {
    const form = await t.api.createForm()
    const page = await expectPage(
      await postForm(t.app, form.id, { name: 'Eve' }, { 'sec-fetch-site': 'cross-site' }),
      403,
    )
    expect(page.all('form')).toEqual([])
    expect(await responsesOf(form.id)).toEqual([])
    const multi = new FormData()
    multi.append('name', 'Eve')
    await expectPage(await postForm(t.app, form.id, multi, { 'sec-fetch-site': 'cross-site' }), 403)
    expect(await responsesOf(form.id)).toEqual([])

    for (const site of ['same-origin', 'same-site', 'none', undefined]) {
      const other = await t.api.createForm()
      expectSeeOther(await postForm(t.app, other.id, { name: 'Ada' }, site ? { 'sec-fetch-site': site } : {}), other.id)
    }
  })

  test('the per-IP limit: the 3rd post from one client within a minute is a 429 page with Retry-After; the client is the last X-Forwarded-For entry', async () => {
    const ctx = await createTestContext({ SERVICE_PUBLIC_RATE_LIMIT: '2', SERVICE_TRUST_PROXY: 'true' })
    try {
      const form = await ctx.api.createForm()
      // The proxy appends the real client last; what the client claims before it does not matter.
      expect(
        (await postForm(ctx.app, form.id, { name: '' }, { 'x-forwarded-for': '10.0.0.1, 203.0.113.5' })).status,
      ).toBe(422)
      expect(
        (await postForm(ctx.app, form.id, { name: '' }, { 'x-forwarded-for': '10.0.0.2, 203.0.113.5' })).status,
      ).toBe(422)
      const limited = await postForm(ctx.app, form.id, { name: 'Ada' }, { 'x-forwarded-for': '10.0.0.3, 203.0.113.5' })
      const page = await expectPage(limited, 429)
      expect(page.all('form')).toEqual([])
      const retryAfter = limited.headers.get('retry-after')
      expect(retryAfter).toMatch(/^[0-9]+$/)
      expect(Number(retryAfter)).toBeGreaterThanOrEqual(1)
      expect(Number(retryAfter)).toBeLessThanOrEqual(60)
      expect(await responsesOf(form.id, ctx)).toEqual([])

      // Reading the page is not limited.
      expect((await openPage(ctx.app, form.id, { 'x-forwarded-for': '203.0.113.5' })).status).toBe(200)

      // Another client behind the same proxy has its own allowance, and is recorded as the client.
      const res = await postForm(ctx.app, form.id, { name: 'Ada' }, { 'x-forwarded-for': '203.0.113.5, 198.51.100.7' })
      expectSeeOther(res, form.id)
      expect((await onlyResponse(form.id, ctx)).metadata.ip).toBe('198.51.100.7')

      // A minute later the first client may post again.
      ctx.clock.advance(60_000)
      const next = await ctx.api.createForm()
      expectSeeOther(await postForm(ctx.app, next.id, { name: 'Ada' }, { 'x-forwarded-for': '203.0.113.5' }), next.id)
    } finally {
      ctx.close()
    }
  })

  test('without SERVICE_TRUST_PROXY a changing X-Forwarded-For does not escape the limit', async () => {
    const ctx = await createTestContext({ SERVICE_PUBLIC_RATE_LIMIT: '2' })
    try {
      const form = await ctx.api.createForm()
      expect((await postForm(ctx.app, form.id, { name: '' }, { 'x-forwarded-for': '203.0.113.1' })).status).toBe(422)
      expect((await postForm(ctx.app, form.id, { name: '' }, { 'x-forwarded-for': '203.0.113.2' })).status).toBe(422)
      await expectPage(await postForm(ctx.app, form.id, { name: 'Ada' }, { 'x-forwarded-for': '203.0.113.3' }), 429)
      expect(await responsesOf(form.id, ctx)).toEqual([])
    } finally {
      ctx.close()
    }
  })

  test('a form post that cannot be read is an HTML error page, not a stored answer', async () => {
    const form = await t.api.createForm()
    const res = await postRaw(form.id, 'this is not multipart', 'multipart/form-data; boundary=nothing-here')
    const page = await expectPage(res, res.status)
    expect(res.status).toBeGreaterThanOrEqual(400)
    expect(res.status).toBeLessThan(500)
    expect(page.all('form')).toEqual([])
    expect(await responsesOf(form.id)).toEqual([])
  })
})

// ================================================================ HTML and JSON agree

describe('the HTML path and the JSON path give the same results', () => {
  const fields = EVERY_TYPE_FIELDS.filter((f) => f.type !== 'file')

  async function both(formPost: Record<string, string>, json: Record<string, unknown>) {
    const viaPage = await t.api.createForm({ fields })
    const viaJson = await t.api.createForm({ fields })
    const pageRes = await postForm(t.app, viaPage.id, formPost)
    const jsonRes = await submit(t.app, viaJson.id, json)
    return { viaPage, viaJson, pageRes, jsonRes }
  }

  test('every type answered: the same data', async () => {
    const { viaPage, viaJson, pageRes, jsonRes } = await both(
      {
        name: 'Ada',
        notes: 'Line one\r\nLine two',
        email: 'ada@example.com',
        guests: '3',
        meal: 'veg',
        agree: 'true',
        day: '2026-06-01',
      },
      EVERY_TYPE_ANSWERS,
    )
    expectSeeOther(pageRes, viaPage.id)
    expect(jsonRes.status).toBe(201)
    const fromPage = (await onlyResponse(viaPage.id)).data
    const fromJson = (await onlyResponse(viaJson.id)).data
    expect(fromPage).toEqual(fromJson)
    expect(fromPage).toEqual(EVERY_TYPE_ANSWERS)
  })

  test('optional fields left empty: the same data', async () => {
    const { viaPage, viaJson, pageRes, jsonRes } = await both(
      { name: ' Ada ', notes: '', email: ' ada@example.com ', guests: '', meal: '', agree: 'on', day: '' },
      { name: ' Ada ', email: ' ada@example.com ', agree: true },
    )
    expectSeeOther(pageRes, viaPage.id)
    expect(jsonRes.status).toBe(201)
    const fromPage = (await onlyResponse(viaPage.id)).data
    expect(fromPage).toEqual((await onlyResponse(viaJson.id)).data)
    expect(fromPage).toEqual({ name: ' Ada ', email: 'ada@example.com', agree: true })
  })

  test('numbers written differently mean the same number', async () => {
    const { viaPage, viaJson, pageRes, jsonRes } = await both(
      { name: 'Ada', guests: '4.0', agree: 'true' },
      { name: 'Ada', guests: 4, agree: true },
    )
    expectSeeOther(pageRes, viaPage.id)
    expect(jsonRes.status).toBe(201)
    expect((await onlyResponse(viaPage.id)).data).toEqual((await onlyResponse(viaJson.id)).data)
  })

  test('invalid values: both refused, with errors on the same fields', async () => {
    const { viaPage, viaJson, pageRes, jsonRes } = await both(
      { name: 'Ada', email: 'nope', guests: '11', meal: 'beef', day: '2026-02-30' },
      { name: 'Ada', email: 'nope', guests: 11, meal: 'beef', day: '2026-02-30' },
    )
    const page = await expectFormPage(pageRes, 422)
    expect(jsonRes.status).toBe(422)
    const jsonKeys = (jsonRes.body.errors as Array<{ path: string }>).map((e) => e.path.slice(1)).sort()
    expect(jsonKeys).toEqual(['agree', 'day', 'email', 'guests', 'meal'])
    expect([...page.summaryLinks().keys()].sort()).toEqual(jsonKeys)
    const marked = fields
      .filter((f) => page.control(f.key).attrs['aria-invalid'] === 'true')
      .map((f) => f.key)
      .sort()
    expect(marked).toEqual(jsonKeys)
    expect(await responsesOf(viaPage.id)).toEqual([])
    expect(await responsesOf(viaJson.id)).toEqual([])
  })
})
