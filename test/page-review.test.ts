/**
 * `page.review: true` (CONTRACT 14): a valid form post shows "Check your
 * answers" (GOV.UK's pattern: each answer with a Change link back to the form),
 * held server-side as a draft for at most an hour; only its Send records the
 * answer, through the same path as any post. No script anywhere.
 */
import { describe, expect, test } from 'bun:test'
import { translator } from '../src/i18n/index.ts'
import type { Page } from './html.ts'
import { AMP, expectNoInjectedMarkup, expectPage, HOVER, SCRIPT } from './page-checks.ts'
import {
  contextsPerTest,
  openPage,
  postForm,
  send,
  submit,
  type TestContext,
  type TestResponse,
  until,
} from './utils.ts'

const contexts = contextsPerTest()
const { t: words, date } = translator('en')
const MINUTE = 60_000

const FIELDS = [
  { key: 'name', type: 'text', label: 'Your name', required: true },
  { key: 'notes', type: 'textarea', label: 'Anything else?' },
  { key: 'guests', type: 'number', label: 'Guests', config: { min: 1, max: 10 } },
  {
    key: 'meal',
    type: 'select',
    label: 'Meal',
    config: { options: ['fish', { value: 'veg', label: 'Vegetarian dish' }] },
  },
  { key: 'agree', type: 'checkbox', label: 'I agree to the terms', required: true },
  { key: 'day', type: 'date', label: 'Arrival day' },
  { key: 'doc', type: 'file', label: 'Passport scan', config: { max_size: 4096 } },
]
const FILE_TEXT = 'the scan itself'

function answer(name = 'Ada Lovelace') {
  const body = new FormData()
  body.set('name', name)
  body.set('notes', 'Line one\r\nLine two')
  body.set('guests', '3')
  body.set('meal', 'veg')
  body.set('agree', 'true')
  body.set('day', '2026-06-01')
  body.set('doc', new File([FILE_TEXT], 'passport.pdf', { type: 'application/pdf' }))
  return body
}

const reviewForm = (t: TestContext, extra: Record<string, unknown> = {}) =>
  t.api.createForm({ title: 'Expense approval', fields: FIELDS, page: { review: true }, ...extra })

/** The review page's list: label to { answer, the Change link }. */
function reviewRows(page: Page) {
  const rows = new Map<string, { answer: string; change: { href: string; text: string; hidden: string } }>()
  const lists = page.all('dl')
  expect(lists).toHaveLength(1)
  for (const row of page.within(lists[0]!, 'div')) {
    const [label] = page.within(row, 'dt')
    const [answerCell] = page.within(row, 'dd')
    const [link] = page.within(row, 'a')
    const [hidden] = page.within(link!, 'span').filter((span) => span.attrs.class === 'visually-hidden')
    rows.set(label!.text.trim(), {
      answer: answerCell!.text.trim(),
      change: { href: link!.attrs.href!, text: link!.text, hidden: hidden!.text.trim() },
    })
  }
  return rows
}

/** The Send form: its fields as a browser posts them. */
function sendBody(page: Page) {
  const entries = page.browserEntries()
  expect(entries.filter(([name]) => name === '_draft')).toHaveLength(1)
  return entries
}

const draftIdOf = (page: Page) => page.browserEntries().find(([name]) => name === '_draft')![1]
/** The request a browser makes for a link: its path and query, never the fragment. */
const pathOf = (href: string) => href.slice(href.indexOf('/f/')).split('#')[0]!
const responsesOf = async (t: TestContext, formId: string) =>
  (await t.api.get(`/forms/${formId}/responses`)).body as Array<{ id: string; data: Record<string, unknown> }>
const draftCount = async (t: TestContext) => Number((await t.sql('SELECT count(*) AS n FROM drafts'))[0]!.n)

async function reviewed(_t: TestContext, res: TestResponse) {
  const page = await expectPage(res, 200)
  expect(page.one('h1').text).toBe(words('review.heading'))
  return page
}

describe('page.review', () => {
  test('is returned by Get Form, and must be a boolean', async () => {
    const t = await contexts.create()
    const form = await reviewForm(t)
    expect((await t.api.get(`/forms/${form.id}`)).body.page).toEqual({ review: true })
    const refused = await t.api.post('/forms', { title: 'x', fields: FIELDS, page: { review: 'yes' } })
    expect(refused.status).toBe(422)
    expect(refused.body.errors.map((e: { path: string; code: string }) => [e.path, e.code])).toEqual([
      ['/page/review', 'invalid_type'],
    ])
  })

  test('a valid post shows each answer as the receipt would, with Change links; nothing is recorded', async () => {
    const t = await contexts.create()
    const form = await reviewForm(t)
    // The form's own button goes on to the check, it does not send.
    const formPage = await expectPage(await openPage(t.app, form.id), 200)
    expect(formPage.one('button').text.trim()).toBe(words('review.continue'))
    const page = await reviewed(t, await postForm(t.app, form.id, answer()))
    expect(page.one('title').text).toContain('Expense approval')
    const rows = reviewRows(page)
    expect([...rows.keys()]).toEqual(FIELDS.map((field) => field.label))
    expect(rows.get('Your name')!.answer).toBe('Ada Lovelace')
    expect(rows.get('Anything else?')!.answer.replace(/\r\n/g, '\n')).toBe('Line one\nLine two')
    expect(rows.get('Guests')!.answer).toBe('3')
    expect(rows.get('Meal')!.answer).toBe('Vegetarian dish')
    expect(rows.get('I agree to the terms')!.answer).toBe(words('receipt.yes'))
    expect(rows.get('Arrival day')!.answer).toBe(date('2026-06-01'))
    expect(rows.get('Passport scan')!.answer).toContain('passport.pdf')
    const draft = draftIdOf(page)
    expect(draft).toMatch(/^[A-Za-z0-9_-]{22}$/)
    for (const field of FIELDS) {
      const { change } = rows.get(field.label)!
      expect(change.href).toBe(`/f/${form.id}?draft=${draft}#field-${field.key}`)
      expect(change.text.startsWith(words('review.change'))).toBe(true)
      expect(change.hidden).toBe(field.label)
    }
    expect(page.one('button').text.trim()).toBe(words('page.submit'))
    expect(await responsesOf(t, form.id)).toEqual([])
    expect((await t.api.get(`/forms/${form.id}`)).body.status).toBe('active')
  })

  test('Change: the form with the values and the kept file; posting it again shows the review again; Send records that', async () => {
    const t = await contexts.create()
    const form = await reviewForm(t)
    const review = await reviewed(t, await postForm(t.app, form.id, answer()))
    const change = await expectPage(
      await send(t.app, 'GET', pathOf(reviewRows(review).get('Your name')!.change.href)),
      200,
    )
    expect(change.control('name').attrs.value).toBe('Ada Lovelace')
    expect(change.control('notes').text.replace(/\r\n/g, '\n')).toBe('Line one\nLine two')
    expect(change.control('guests').attrs.value).toBe('3')
    expect(change.byId('field-agree').attrs.checked).toBeDefined()
    expect(change.bodyText).toContain('passport.pdf')
    // The person changes their name and goes on; the file is not chosen again.
    const again = new FormData()
    for (const [name, value] of change.browserEntries()) again.append(name, name === 'name' ? 'Ada King' : value)
    expect(again.get('_held_doc')).toBeTruthy()
    const second = await reviewed(t, await postForm(t.app, form.id, again))
    expect(reviewRows(second).get('Your name')!.answer).toBe('Ada King')
    expect(reviewRows(second).get('Passport scan')!.answer).toContain('passport.pdf')
    const sent = await postForm(t.app, form.id, sendBody(second))
    expect(sent.status).toBe(303)
    const [response] = await responsesOf(t, form.id)
    expect(response!.data).toMatchObject({ name: 'Ada King', guests: 3, meal: 'veg', agree: true, day: '2026-06-01' })
    const file = await send(t.app, 'GET', new URL(response!.data.doc as string).pathname, { key: t.key })
    expect(file.text).toBe(FILE_TEXT)
  })

  test('Send: 303 and the receipt; Send again is 409 with what was sent', async () => {
    const t = await contexts.create()
    const form = await reviewForm(t)
    const review = await reviewed(t, await postForm(t.app, form.id, answer()))
    const sent = await postForm(t.app, form.id, sendBody(review))
    expect(sent.status).toBe(303)
    const cookie = (sent.headers.get('set-cookie') ?? '').split(';')[0]!
    const receipt = await expectPage(await openPage(t.app, form.id, { cookie }), 200)
    expect(receipt.bodyText).toContain(words('receipt.what_you_sent'))
    expect(receipt.bodyText).toContain('Ada Lovelace')
    const twice = await expectPage(await postForm(t.app, form.id, sendBody(review)), 409)
    expect(twice.one('h1').text).toBe(words('status.answered.heading'))
    expect(twice.bodyText).toContain('Ada Lovelace')
    expect(twice.bodyText).toContain('passport.pdf')
    expect(twice.one('textarea').text).toContain('Your name: Ada Lovelace')
    expect(await responsesOf(t, form.id)).toHaveLength(1)
  })

  test('the form expires between the review and Send: 410 with what was sent', async () => {
    const t = await contexts.create()
    const form = await reviewForm(t, { expires_in: '5m' })
    const review = await reviewed(t, await postForm(t.app, form.id, answer()))
    t.clock.advance(6 * MINUTE)
    const page = await expectPage(await postForm(t.app, form.id, sendBody(review)), 410)
    expect(page.one('h1').text).toBe(words('status.expired.heading'))
    expect(page.bodyText).toContain(words('sent.not_recorded'))
    expect(page.bodyText).toContain('Ada Lovelace')
    expect(page.bodyText).toContain('passport.pdf')
    expect(await responsesOf(t, form.id)).toEqual([])
  })

  test('a lapsed draft: Send brings the form back with the texts and says so; Change says so too; nothing is recorded', async () => {
    const t = await contexts.create()
    const form = await reviewForm(t)
    const review = await reviewed(t, await postForm(t.app, form.id, answer()))
    const changeHref = pathOf(reviewRows(review).get('Your name')!.change.href)
    t.clock.advance(61 * MINUTE)
    const back = await expectPage(await postForm(t.app, form.id, sendBody(review)), 200)
    expect(back.bodyText).toContain(words('review.lapsed_kept'))
    expect(back.control('name').attrs.value).toBe('Ada Lovelace')
    expect(back.control('notes').text.replace(/\r\n/g, '\n')).toBe('Line one\nLine two')
    expect(back.one('form').attrs.action).toBe(`/f/${form.id}`)
    const change = await expectPage(await send(t.app, 'GET', changeHref), 200)
    expect(change.bodyText).toContain(words('review.lapsed'))
    expect(change.control('name').attrs.value ?? '').toBe('')
    expect(await responsesOf(t, form.id)).toEqual([])
  })

  test("another form's draft is refused: not sent, not shown", async () => {
    const t = await contexts.create()
    const first = await reviewForm(t)
    const other = await reviewForm(t)
    const review = await reviewed(t, await postForm(t.app, first.id, answer()))
    const draft = draftIdOf(review)
    const refused = await expectPage(await postForm(t.app, other.id, { _draft: draft }), 200)
    expect(refused.bodyText).toContain(words('review.lapsed_kept'))
    expect(refused.html).not.toContain('Ada Lovelace')
    const shown = await expectPage(await send(t.app, 'GET', `/f/${other.id}?draft=${draft}`), 200)
    expect(shown.html).not.toContain('Ada Lovelace')
    expect(shown.html).not.toContain('passport.pdf')
    expect(await responsesOf(t, first.id)).toEqual([])
    expect(await responsesOf(t, other.id)).toEqual([])
  })

  test('invalid values never reach the review: the 422 page as before, no draft kept', async () => {
    const t = await contexts.create()
    const form = await reviewForm(t)
    const body = answer('')
    const page = await expectPage(await postForm(t.app, form.id, body), 422)
    expect(page.all('dl')).toEqual([])
    expect(await draftCount(t)).toBe(0)
  })

  test('a multiple choice and an unticked box are recorded on Send as a direct post records them', async () => {
    const t = await contexts.create()
    const fields = [
      {
        key: 'extras',
        type: 'select',
        label: 'Extras',
        config: { multiple: true, options: ['wifi', 'bike', 'parking'] },
      },
      { key: 'news', type: 'checkbox', label: 'Send me news' },
    ]
    const form = await t.api.createForm({ fields, page: { review: true } })
    const review = await reviewed(
      t,
      await postForm(t.app, form.id, [
        ['extras', 'parking'],
        ['extras', 'wifi'],
      ]),
    )
    expect(reviewRows(review).get('Send me news')!.answer).toBe(words('receipt.no'))
    const change = await expectPage(
      await send(t.app, 'GET', pathOf(reviewRows(review).get('Extras')!.change.href)),
      200,
    )
    expect(
      change
        .browserEntries()
        .filter(([name]) => name === 'extras')
        .map(([, value]) => value)
        .sort(),
    ).toEqual(['parking', 'wifi'])
    expect((await postForm(t.app, form.id, sendBody(review))).status).toBe(303)
    // The options' order, as for any post.
    expect((await responsesOf(t, form.id))[0]!.data).toEqual({ extras: ['wifi', 'parking'], news: false })
  })

  test('a memorable date (three boxes) and a number in the page language survive the review: Change shows them, Send records them', async () => {
    const t = await contexts.create()
    const fields = [
      { key: 'born', type: 'date', label: 'Date of birth', required: true, config: { autocomplete: 'bday' } },
      { key: 'amount', type: 'number', label: 'Betrag', required: true },
    ]
    const form = await t.api.createForm({ fields, page: { review: true, locale: 'de' } })
    const posted = [
      ['_day_born', '27'],
      ['_month_born', '3'],
      ['_year_born', '1987'],
      ['amount', '412,80'],
    ] as Array<[string, string]>
    const review = await expectPage(await postForm(t.app, form.id, posted), 200)
    const change = await expectPage(
      await send(t.app, 'GET', pathOf(reviewRows(review).get('Date of birth')!.change.href)),
      200,
    )
    expect(change.browserEntries().filter(([name]) => name !== '_draft')).toEqual(expect.arrayContaining(posted))
    expect((await postForm(t.app, form.id, sendBody(review))).status).toBe(303)
    expect((await responsesOf(t, form.id))[0]!.data).toEqual({ born: '1987-03-27', amount: 412.8 })
  })

  test('JSON submissions are recorded at once', async () => {
    const t = await contexts.create()
    const form = await reviewForm(t, { fields: FIELDS.filter((field) => field.type !== 'file') })
    const res = await submit(t.app, form.id, { name: 'Ada', agree: true })
    expect(res.status).toBe(201)
    expect(await responsesOf(t, form.id)).toHaveLength(1)
  })

  test("a form keeps its 5 newest drafts: an older one's Send is refused as lapsed, a newer one's records", async () => {
    const t = await contexts.create()
    const form = await reviewForm(t, { fields: FIELDS.filter((field) => field.type !== 'file') })
    const reviews: Page[] = []
    for (let n = 1; n <= 6; n++) {
      reviews.push(await reviewed(t, await postForm(t.app, form.id, { name: `Try ${n}`, agree: 'true' })))
      t.clock.advance(1000)
    }
    expect(await draftCount(t)).toBe(5)
    const oldest = await expectPage(await postForm(t.app, form.id, sendBody(reviews[0]!)), 200)
    expect(oldest.bodyText).toContain(words('review.lapsed_kept'))
    expect(oldest.control('name').attrs.value).toBe('Try 1')
    expect((await postForm(t.app, form.id, sendBody(reviews[1]!))).status).toBe(303)
    expect((await responsesOf(t, form.id)).map((response) => response.data.name)).toEqual(['Try 2'])
  })

  test('drafts lapse after an hour and are swept with the kept files', async () => {
    const t = await contexts.create()
    const form = await reviewForm(t)
    await reviewed(t, await postForm(t.app, form.id, answer()))
    expect(await draftCount(t)).toBe(1)
    t.clock.advance(61 * MINUTE)
    t.background.start()
    await until(async () => (await draftCount(t)) === 0, 5000, 'the lapsed draft forgotten')
  })

  test('every client value is escaped on the review page and comes back exactly on Send', async () => {
    const t = await contexts.create()
    const fields = [
      { key: 'nick', type: 'text', label: `Nick ${SCRIPT}`, required: true },
      { key: 'story', type: 'textarea', label: `Story <b>${HOVER}` },
      {
        key: 'choice',
        type: 'select',
        label: 'Choice',
        config: { options: [{ value: `v${AMP}"<d>`, label: `<b>${AMP}</b>${SCRIPT}` }] },
      },
    ]
    const form = await t.api.createForm({
      title: `Title ${SCRIPT}`,
      fields,
      page: { review: true, submit_label: `Go ${SCRIPT}` },
    })
    const typed = { nick: `${SCRIPT}${HOVER}`, story: `</textarea>${SCRIPT}\r\n${AMP}`, choice: `v${AMP}"<d>` }
    const page = await reviewed(t, await postForm(t.app, form.id, typed))
    expectNoInjectedMarkup(page)
    expect(page.all('d')).toEqual([])
    const rows = reviewRows(page)
    expect(rows.get(`Nick ${SCRIPT}`)!.answer).toBe(`${SCRIPT}${HOVER}`)
    expect(rows.get(`Nick ${SCRIPT}`)!.change.hidden).toBe(`Nick ${SCRIPT}`)
    expect(rows.get(`Story <b>${HOVER}`)!.answer.replace(/\r\n/g, '\n')).toBe(`</textarea>${SCRIPT}\n${AMP}`)
    expect(rows.get('Choice')!.answer).toBe(`<b>${AMP}</b>${SCRIPT}`)
    expect(page.one('button').text.trim()).toBe(`Go ${SCRIPT}`)
    expect(page.withText(`Title ${SCRIPT}`).length).toBeGreaterThan(0)
    expect((await postForm(t.app, form.id, sendBody(page))).status).toBe(303)
    const [response] = await responsesOf(t, form.id)
    expect(response!.data).toEqual({
      nick: `${SCRIPT}${HOVER}`,
      story: `</textarea>${SCRIPT}\n${AMP}`,
      choice: `v${AMP}"<d>`,
    })
  })
})
