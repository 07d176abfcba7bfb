/**
 * Dates and time on the person's page (CONTRACT 14): dates written with the
 * region the request names (en-GB reads "27 November 2026"), the memorable
 * date input (GOV.UK's day, month and year), a one-day range, and how long is
 * left when the deadline is near, right at every visit of a cached page.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { catalogOf } from '../src/i18n/catalogs/index.ts'
import { translator } from '../src/i18n/index.ts'
import { pageBytes } from '../src/lib/http.ts'
import { createRenderedPages } from '../src/modules/submissions/index.tsx'
import { collapsed, type Page, pageText, parsePage } from './html.ts'
import { createTestContext, openPage, postForm, submit, type TestContext } from './utils.ts'

let t: TestContext
beforeAll(async () => {
  t = await createTestContext()
})
afterAll(() => t.close())

const en = catalogOf('en')
const HOUR = 3_600_000

async function visit(formId: string, headers: Record<string, string> = {}) {
  const response = await openPage(t.app, formId, headers)
  return { response, page: await parsePage(response.text), text: pageText(response.text) }
}

/** The receipt cookie a 303 set, to open the receipt with. */
const cookieOf = (headers: Headers) => ({ cookie: (headers.get('set-cookie') ?? '').split(';')[0]! })

describe('dates follow the region the request names; the words stay the language', () => {
  const fields = [{ key: 'day', type: 'date', label: 'Day', config: { min: '2026-01-15', max: '2026-11-27' } }]

  test('en-GB reads 27 November 2026 on the page, the receipt and the answered page; en-US reads November 27, 2026', async () => {
    const form = await t.api.createForm({ fields, page: { time_zone: 'Europe/London' } })
    const british = await visit(form.id, { 'accept-language': 'en-GB,en;q=0.9' })
    expect(british.page.byId('field-day-hint').text).toContain('A date from 15 January 2026 to 27 November 2026.')
    expect(british.page.one('html').attrs.lang).toBe('en')
    const american = await visit(form.id, { 'accept-language': 'en-US' })
    expect(american.page.byId('field-day-hint').text).toContain('A date from January 15, 2026 to November 27, 2026.')
    // The deadline is written the same way: day before month for en-GB.
    const deadline = (page: Page) => collapsed(page.nodes.find((n) => n.attrs.class === 'deadline')!.text)
    expect(deadline(british.page)).toMatch(/^Please answer by \d{1,2} [A-Z][a-z]+ \d{4}/)
    expect(deadline(american.page)).toMatch(/^Please answer by [A-Z][a-z]+ \d{1,2}, \d{4}/)
    // Each request got its own region, though the page is kept rendered.
    expect((await visit(form.id, { 'accept-language': 'en-GB' })).page.byId('field-day-hint').text).toContain(
      '15 January 2026',
    )
    expect(british.response.headers.get('vary')).toContain('Accept-Language')

    const sent = await postForm(t.app, form.id, { day: '2026-11-27' }, { 'accept-language': 'en-GB' })
    expect(sent.status).toBe(303)
    const receipt = await visit(form.id, { 'accept-language': 'en-GB', ...cookieOf(sent.headers) })
    expect(receipt.text).toContain(en['receipt.what_you_sent'] as string)
    expect(receipt.text).toContain('27 November 2026')
    expect(receipt.text).toMatch(/Sent on \d{1,2} [A-Z][a-z]+ \d{4}/)
    const answered = await visit(form.id, { 'accept-language': 'en-GB' })
    expect(answered.text).toMatch(/It was answered on \d{1,2} [A-Z][a-z]+ \d{4}/)
    expect((await visit(form.id, { 'accept-language': 'en-US' })).text).toMatch(
      /It was answered on [A-Z][a-z]+ \d{1,2}, \d{4}/,
    )
  })

  test("page.locale de-AT writes Austria's month names; a region Intl does not know writes the language's own", async () => {
    const austrian = await t.api.createForm({ fields, page: { locale: 'de-AT' } })
    const page = await visit(austrian.id, { 'accept-language': 'en-GB' })
    expect(page.page.one('html').attrs.lang).toBe('de')
    expect(page.page.byId('field-day-hint').text).toContain('15. Jänner 2026')
    expect(page.response.headers.get('vary') ?? '').not.toContain('Accept-Language')
    const german = await t.api.createForm({ fields, page: { locale: 'de' } })
    expect((await visit(german.id)).page.byId('field-day-hint').text).toContain('15. Januar 2026')
    const unknown = await t.api.createForm({ fields })
    expect((await visit(unknown.id, { 'accept-language': 'en-XY' })).page.byId('field-day-hint').text).toContain(
      'January 15, 2026',
    )
  })

  test('the translator writes numbers per language whatever the region', () => {
    expect(translator('en', 'GB').date('2026-11-27')).toBe('27 November 2026')
    expect(translator('en').date('2026-11-27')).toBe('November 27, 2026')
    expect(translator('en', 'XY').date('2026-11-27')).toBe('November 27, 2026')
    expect(translator('de', 'CH').t('hint.number_max', { max: 5000.5 })).toBe(
      translator('de').t('hint.number_max', { max: 5000.5 }),
    )
    expect(translator('en', 'GB')).toBe(translator('en', 'GB'))
  })

  test('the kept pages of a form: one per language and region, all forgotten at once', async () => {
    const pages = createRenderedPages()
    const bytes = pageBytes([Buffer.from('<p>page</p>')])
    const variants = [
      translator('en'),
      translator('en', 'GB'),
      translator('en', 'AU'),
      translator('de', 'AT'),
      translator('de'),
    ]
    for (const variant of variants) pages.set('F', variant, bytes)
    pages.set('G', translator('en', 'GB'), bytes)
    for (const variant of variants) expect(pages.get('F', variant)).toBe(bytes)
    expect(pages.get('F', translator('fr'))).toBeUndefined()
    pages.forget('F')
    for (const variant of variants) expect(pages.get('F', variant)).toBeUndefined()
    expect(pages.get('G', translator('en', 'GB'))).toBe(bytes)
  })
})

describe('the memorable date: day, month and year', () => {
  const dob = { key: 'dob', type: 'date', label: 'Date of birth', required: true, config: { autocomplete: 'bday' } }

  async function form(field: Record<string, unknown> = dob) {
    return t.api.createForm({ fields: [field, { key: 'name', type: 'text', label: 'Name' }] })
  }

  test('bday makes it the default: a fieldset with the label as legend, three numeric text inputs with their own labels and tokens', async () => {
    const { page } = await visit((await form()).id)
    const fieldset = page.one('fieldset')
    const legend = page.within(fieldset, 'legend')
    expect(legend.map((node) => node.text.trim())).toEqual(['Date of birth'])
    const inputs = page.within(fieldset, 'input')
    expect(inputs.map((input) => input.attrs.name)).toEqual(['_day_dob', '_month_dob', '_year_dob'])
    expect(inputs.map((input) => input.attrs.autocomplete)).toEqual(['bday-day', 'bday-month', 'bday-year'])
    for (const input of inputs) {
      expect(input.attrs.type).toBe('text')
      expect(input.attrs.inputmode).toBe('numeric')
      expect(page.nodes.filter((n) => n.tag === 'label' && n.attrs.for === input.attrs.id)).toHaveLength(1)
    }
    expect(inputs[0]!.attrs.id).toBe('field-dob')
    const labels = inputs.map((input) =>
      page.nodes.find((n) => n.tag === 'label' && n.attrs.for === input.attrs.id)!.text.trim(),
    )
    expect(labels).toEqual([en['date.day'] as string, en['date.month'] as string, en['date.year'] as string])
    expect(page.byId('field-dob-hint').text).toContain('For example, 27 3 2007')
    expect(page.describedBy(fieldset)).toContain('field-dob-hint')
    expect(page.all('input').some((input) => input.attrs.type === 'date')).toBe(false)
  })

  test('input: calendar keeps the native control even for bday; input: memorable without bday has no tokens', async () => {
    const calendar = await visit((await form({ ...dob, config: { autocomplete: 'bday', input: 'calendar' } })).id)
    expect(calendar.page.control('dob').attrs.type).toBe('date')
    expect(calendar.page.control('dob').attrs.autocomplete).toBe('bday')
    const memorable = await visit(
      (await form({ key: 'when', type: 'date', label: 'When', config: { input: 'memorable' } })).id,
    )
    const inputs = memorable.page.all('input').filter((input) => input.attrs.name?.endsWith('_when'))
    expect(inputs.map((input) => input.attrs.name)).toEqual(['_day_when', '_month_when', '_year_when'])
    expect(inputs.map((input) => input.attrs.autocomplete)).toEqual([undefined, undefined, undefined])
  })

  test('Japanese reads year, month, day; the example is written so too', async () => {
    const created = await t.api.createForm({ fields: [dob], page: { locale: 'ja' } })
    const { page } = await visit(created.id)
    expect(page.within(page.one('fieldset'), 'input').map((input) => input.attrs.name)).toEqual([
      '_year_dob',
      '_month_dob',
      '_day_dob',
    ])
    expect(page.byId('field-dob-hint').text).toContain('2007 3 27')
  })

  test('the parts are composed into YYYY-MM-DD; native digits count; three empty parts are no answer', async () => {
    const first = await form()
    expect(
      (await postForm(t.app, first.id, { _day_dob: ' 7 ', _month_dob: '03', _year_dob: '2007', name: 'A' })).status,
    ).toBe(303)
    const [answer] = (await t.api.get(`/forms/${first.id}/responses`)).body
    expect(answer.data.dob).toBe('2007-03-07')

    const arabic = await form()
    expect((await postForm(t.app, arabic.id, { _day_dob: '٢٧', _month_dob: '٣', _year_dob: '٢٠٠٧' })).status).toBe(303)
    expect((await t.api.get(`/forms/${arabic.id}/responses`)).body[0].data.dob).toBe('2007-03-27')

    const optional = await form({ ...dob, required: false })
    expect(
      (await postForm(t.app, optional.id, { _day_dob: '', _month_dob: ' ', _year_dob: '', name: 'B' })).status,
    ).toBe(303)
    expect((await t.api.get(`/forms/${optional.id}/responses`)).body[0].data).toEqual({ name: 'B' })
  })

  test.each([
    [{ _day_dob: '', _month_dob: '3', _year_dob: '2007' }, 'date.missing_day', ['_day_dob']],
    [{ _day_dob: '27', _month_dob: '', _year_dob: '2007' }, 'date.missing_month', ['_month_dob']],
    [{ _day_dob: '27', _month_dob: '3', _year_dob: '' }, 'date.missing_year', ['_year_dob']],
    [{ _day_dob: '', _month_dob: '', _year_dob: '2007' }, 'date.missing_day_month', ['_day_dob', '_month_dob']],
    [{ _day_dob: '', _month_dob: '3', _year_dob: '' }, 'date.missing_day_year', ['_day_dob', '_year_dob']],
    [{ _day_dob: '27', _month_dob: '', _year_dob: '' }, 'date.missing_month_year', ['_month_dob', '_year_dob']],
    [{ _day_dob: '31', _month_dob: '2', _year_dob: '2007' }, 'date.not_real', ['_day_dob', '_month_dob', '_year_dob']],
    [{ _day_dob: '27', _month_dob: '13', _year_dob: '2007' }, 'date.not_real', ['_month_dob']],
    [{ _day_dob: '2x', _month_dob: '3', _year_dob: '2007' }, 'date.not_real', ['_day_dob']],
    [{ _day_dob: '27', _month_dob: '3', _year_dob: '07' }, 'date.year_digits', ['_year_dob']],
  ] as const)('%p: 422 saying %p, the parts shown again exactly as typed', async (parts, key, invalid) => {
    const created = await form()
    const res = await postForm(t.app, created.id, { ...parts, name: 'typed name' })
    expect(res.status).toBe(422)
    const page = await parsePage(res.text)
    expect(page.byId('field-dob-error').text).toContain(en[key] as string)
    expect([...page.summaryLinks().keys()]).toEqual(['dob'])
    const inputs = page.within(page.one('fieldset'), 'input')
    expect(inputs.map((input) => [input.attrs.name, input.attrs.value ?? ''])).toEqual(Object.entries(parts))
    expect(inputs.filter((input) => input.attrs['aria-invalid'] === 'true').map((input) => input.attrs.name)).toEqual([
      ...invalid,
    ])
    expect(page.control('name').attrs.value).toBe('typed name')
    expect((await t.api.get(`/forms/${created.id}/responses`)).body).toEqual([])
  })

  test('nothing at all on a required one is "Enter a date"; the range applies to the composed date', async () => {
    const created = await form({ ...dob, config: { autocomplete: 'bday', max: '2010-12-31' } })
    const empty = await parsePage(
      (await postForm(t.app, created.id, { _day_dob: '', _month_dob: '', _year_dob: '' })).text,
    )
    expect(empty.byId('field-dob-error').text).toContain(en['error.required.date'] as string)
    const late = await postForm(t.app, created.id, { _day_dob: '1', _month_dob: '1', _year_dob: '2011' })
    expect(late.status).toBe(422)
    expect((await parsePage(late.text)).byId('field-dob-error').text).toContain(
      'Choose a date on or before December 31, 2010',
    )
  })

  test('the JSON path still takes YYYY-MM-DD only', async () => {
    const created = await form()
    const parts = await submit(t.app, created.id, { dob: { day: 27, month: 3, year: 2007 } })
    expect(parts.status).toBe(422)
    expect(await submit(t.app, created.id, { _day_dob: '27', _month_dob: '3', _year_dob: '2007' })).toMatchObject({
      status: 422,
    })
    expect((await submit(t.app, created.id, { dob: '2007-03-27' })).status).toBe(201)
  })

  test('config: input is calendar or memorable; anything else is 422', async () => {
    const bad = await t.api.post('/forms', {
      title: 'T',
      fields: [{ key: 'd', type: 'date', label: 'D', config: { input: 'wheel' } }],
    })
    expect(bad.status).toBe(422)
    expect(bad.body.errors[0].path).toBe('/fields/0/config/input')
    const schema = (await t.api.get('/openapi.json')).text
    expect(schema).toContain('memorable')
  })
})

describe('a one-day range', () => {
  test('reads "A date on <date>." and its errors say "on <date>"', async () => {
    const created = await t.api.createForm({
      fields: [{ key: 'd', type: 'date', label: 'D', config: { min: '2026-03-27', max: '2026-03-27' } }],
    })
    const { page } = await visit(created.id)
    expect(page.byId('field-d-hint').text).toContain('A date on March 27, 2026.')
    for (const day of ['2026-03-26', '2026-03-28']) {
      const res = await postForm(t.app, created.id, { d: day })
      expect(res.status).toBe(422)
      expect((await parsePage(res.text)).byId('field-d-error').text).toContain('The date must be on March 27, 2026')
    }
    expect((await postForm(t.app, created.id, { d: '2026-03-27' })).status).toBe(303)
  })
})

describe('how long is left, when the deadline is near', () => {
  const fields = [{ key: 'a', type: 'text', label: 'A' }]
  const closesIn = (page: Page) => page.nodes.find((n) => n.attrs.class === 'closes-in')?.text

  test('absent two days out or more, present under 48 hours, right at each visit of the kept page, in the page language', async () => {
    const created = await t.api.createForm({ fields, expires_in: '72h' })
    expect(closesIn((await visit(created.id)).page)).toBeUndefined()
    t.clock.advance(24 * HOUR + 1)
    // 48 hours less a millisecond: whole days and hours, never more than is left.
    expect(closesIn((await visit(created.id)).page)).toBe('This form closes in 1 day, 23 hours.')
    t.clock.advance(46 * HOUR + 5 * 60_000)
    expect(closesIn((await visit(created.id)).page)).toBe('This form closes in 1 hour, 54 minutes.')
    const german = closesIn((await visit(created.id, { 'accept-language': 'de' })).page)
    expect(german).toContain('1 Stunde, 54 Minuten')
    t.clock.advance(HOUR + 54 * 60_000 + 30_000)
    expect(closesIn((await visit(created.id)).page)).toBe('This form closes in 1 minute.')
    t.clock.advance(30_000)
    const after = await visit(created.id)
    expect(after.response.status).toBe(410)
    expect(after.text).toContain(en['status.expired.heading'] as string)
  })

  test('a refused post shows it too', async () => {
    const created = await t.api.createForm({
      fields: [{ key: 'a', type: 'text', label: 'A', required: true }],
      expires_in: '3h',
    })
    const res = await postForm(t.app, created.id, { a: '' })
    expect(res.status).toBe(422)
    expect(closesIn(await parsePage(res.text))).toBe('This form closes in 3 hours.')
  })
})
