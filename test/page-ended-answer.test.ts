/**
 * A form post that cannot be recorded because the form ended (410: expired or
 * cancelled) or was answered (409) while the person typed (CONTRACT 14): the
 * page says nothing was recorded and shows what they sent, read-only and easy
 * to copy (texts, choices as their labels, ticked or not, file names, never a
 * file's contents), with no script.
 */
import { describe, expect, test } from 'bun:test'
import { translator } from '../src/i18n/index.ts'
import type { Page } from './html.ts'
import { AMP, expectNoInjectedMarkup, expectPage, HOVER, SCRIPT } from './page-checks.ts'
import { contextsPerTest, openPage, postForm, send, type TestContext } from './utils.ts'

const contexts = contextsPerTest()
const { t: words } = translator('en')

const FIELDS = [
  { key: 'name', type: 'text', label: 'Your name', required: true },
  { key: 'notes', type: 'textarea', label: 'Anything else?' },
  {
    key: 'meal',
    type: 'select',
    label: 'Meal',
    config: { options: ['fish', { value: 'veg', label: 'Vegetarian dish' }] },
  },
  {
    key: 'extras',
    type: 'select',
    label: 'Extras',
    config: {
      multiple: true,
      options: [{ value: 'wifi', label: 'Wi-Fi' }, { value: 'bike', label: 'Bicycle' }, 'parking'],
    },
  },
  { key: 'agree', type: 'checkbox', label: 'I agree to the terms', required: true },
  { key: 'news', type: 'checkbox', label: 'Send me news' },
  { key: 'doc', type: 'file', label: 'Passport scan', config: { max_size: 4096 } },
]

const FILE_TEXT = 'the scan itself, never kept'

/** What the person typed, as a browser sends it (multipart: the form has a file field). */
function typedAnswer(name = 'Ada Lovelace') {
  const body = new FormData()
  body.set('name', name)
  body.set('notes', 'Line one\r\nLine two')
  body.set('meal', 'veg')
  body.append('extras', 'wifi')
  body.append('extras', 'bike')
  body.set('agree', 'true')
  body.set('doc', new File([FILE_TEXT], 'passport.pdf', { type: 'application/pdf' }))
  return body
}

/** The "What you sent" list: each label with its answer as read. */
function sentRows(page: Page): Map<string, string> {
  const rows = new Map<string, string>()
  const list = page.all('dl')
  expect(list).toHaveLength(1)
  for (const row of page.within(list[0]!, 'div')) {
    const [label] = page.within(row, 'dt')
    const [answer] = page.within(row, 'dd')
    rows.set(label!.text.trim(), answer!.text.trim())
  }
  return rows
}

/** The one read-only box holding every answer as text, and its label. */
function copyBox(page: Page) {
  const box = page.one('textarea')
  expect('readonly' in box.attrs).toBe(true)
  expect(box.attrs.name).toBeUndefined()
  const labels = page.all('label').filter((label) => label.attrs.for === box.attrs.id)
  expect(labels.map((label) => label.text.trim())).toEqual([words('sent.copy_label')])
  return box.text.replace(/\r\n/g, '\n')
}

/** Everything a person reads on a page that shows what they sent. */
function expectWhatTheySent(page: Page) {
  expect(page.all('form')).toEqual([])
  expect(page.withText(words('sent.heading')).map((n) => n.tag)).toEqual(['h2'])
  const rows = sentRows(page)
  expect([...rows.keys()]).toEqual(FIELDS.map((field) => field.label))
  expect(rows.get('Your name')).toBe('Ada Lovelace')
  expect(rows.get('Anything else?')!.replace(/\r\n/g, '\n')).toBe('Line one\nLine two')
  expect(rows.get('Meal')).toBe('Vegetarian dish')
  expect(rows.get('Extras')).toContain('Wi-Fi')
  expect(rows.get('Extras')).toContain('Bicycle')
  expect(rows.get('Extras')).not.toContain('parking')
  expect(rows.get('I agree to the terms')).toBe(words('receipt.yes'))
  expect(rows.get('Send me news')).toBe(words('receipt.no'))
  expect(rows.get('Passport scan')).toContain('passport.pdf')
  const text = copyBox(page)
  // A label that ends in its own punctuation ("Anything else?") takes no colon after it.
  for (const line of [
    'Your name: Ada Lovelace',
    'Meal: Vegetarian dish',
    'I agree to the terms: Yes',
    'Send me news: No',
    'Anything else?\nLine one\nLine two',
    '- Wi-Fi\n- Bicycle',
  ]) {
    expect(text).toContain(line)
  }
  expect(text).toMatch(/Passport scan: passport\.pdf/)
  expect(page.html).not.toContain(FILE_TEXT)
}

const responsesOf = async (t: TestContext, formId: string) =>
  (await t.api.get(`/forms/${formId}/responses`)).body as unknown[]
const chunkCount = async (t: TestContext) => Number((await t.sql('SELECT count(*) AS n FROM file_chunks'))[0]!.n)

describe('the form ended while the person typed', () => {
  test('expired: 410 saying so and that nothing was recorded, with every answer and the file name; the bytes are not kept', async () => {
    const t = await contexts.create()
    const form = await t.api.createForm({ title: 'Trip to Zürich', fields: FIELDS, expires_in: '1m' })
    expect((await openPage(t.app, form.id)).status).toBe(200)
    t.clock.advance(61_000)
    const page = await expectPage(await postForm(t.app, form.id, typedAnswer()), 410)
    expect(page.one('h1').text).toBe(words('status.expired.heading'))
    expect(page.bodyText).toContain(words('sent.not_recorded'))
    expect(page.bodyText).not.toMatch(/cancel/i)
    expectWhatTheySent(page)
    expect(await responsesOf(t, form.id)).toEqual([])
    expect(await chunkCount(t)).toBe(0)
    // A later visit is the plain page it always was: nothing of the answer is kept.
    const later = await expectPage(await openPage(t.app, form.id), 410)
    expect(later.bodyText).not.toContain('Ada Lovelace')
    expect(later.all('textarea')).toEqual([])
  })

  test('cancelled: 410 saying so, with what was sent', async () => {
    const t = await contexts.create()
    const form = await t.api.createForm({ fields: FIELDS })
    expect((await openPage(t.app, form.id)).status).toBe(200)
    expect((await t.api.patch(`/forms/${form.id}`, { status: 'cancelled' })).status).toBe(200)
    const page = await expectPage(await postForm(t.app, form.id, typedAnswer()), 410)
    expect(page.one('h1').text).toBe(words('status.cancelled.heading'))
    expect(page.bodyText).toContain(words('sent.not_recorded'))
    expect(page.bodyText).not.toMatch(/expire/i)
    expectWhatTheySent(page)
    expect(await chunkCount(t)).toBe(0)
  })

  test('answered in a second tab: 409 with what this tab sent; the first answer stands', async () => {
    const t = await contexts.create()
    const form = await t.api.createForm({ fields: FIELDS })
    const first = typedAnswer('Grace Hopper')
    expect((await postForm(t.app, form.id, first)).status).toBe(303)
    const page = await expectPage(await postForm(t.app, form.id, typedAnswer()), 409)
    expect(page.one('h1').text).toBe(words('status.answered.heading'))
    expect(page.bodyText).toMatch(/not recorded/i)
    expectWhatTheySent(page)
    const responses = (await responsesOf(t, form.id)) as Array<{ data: { name: string } }>
    expect(responses.map((response) => response.data.name)).toEqual(['Grace Hopper'])
  })

  test('two tabs sending at once: one is recorded, the other is 409 with what it sent', async () => {
    const t = await contexts.create()
    const form = await t.api.createForm({ fields: FIELDS })
    const results = await Promise.all([
      postForm(t.app, form.id, typedAnswer()),
      postForm(t.app, form.id, typedAnswer()),
    ])
    expect(results.map((res) => res.status).sort()).toEqual([303, 409])
    expectWhatTheySent(await expectPage(results.find((res) => res.status === 409)!, 409))
    expect(await responsesOf(t, form.id)).toHaveLength(1)
  })

  test('a urlencoded post (no file field) shows its texts too; an empty answer reads "Not answered"', async () => {
    const t = await contexts.create()
    const fields = [
      { key: 'name', type: 'text', label: 'Your name', required: true },
      { key: 'town', type: 'text', label: 'Town' },
      { key: 'count', type: 'number', label: 'How many' },
    ]
    const form = await t.api.createForm({ fields })
    expect((await t.api.patch(`/forms/${form.id}`, { status: 'cancelled' })).status).toBe(200)
    // Sent as typed, even what the form would refuse: it is the person's, to copy.
    const page = await expectPage(await postForm(t.app, form.id, { name: 'Ada', town: '', count: '412,80' }), 410)
    const rows = sentRows(page)
    expect(rows.get('Your name')).toBe('Ada')
    expect(rows.get('Town')).toBe(words('receipt.not_answered'))
    expect(rows.get('How many')).toBe('412,80')
    expect(copyBox(page)).toContain('How many: 412,80')
  })

  test('a post that cannot be read still gets the page saying the form ended, showing nothing of it', async () => {
    const t = await contexts.create()
    const form = await t.api.createForm({ fields: FIELDS })
    expect((await t.api.patch(`/forms/${form.id}`, { status: 'cancelled' })).status).toBe(200)
    const broken = await send(t.app, 'POST', `/f/${form.id}`, {
      body: '--zzz\r\nContent-Disposition: form-data; name="name"\r\n\r\nAda',
      headers: { 'content-type': 'multipart/form-data; boundary=zzz' },
    })
    const page = await expectPage(broken, 410)
    expect(page.one('h1').text).toBe(words('status.cancelled.heading'))
    expect(page.all('textarea')).toEqual([])
  })
})

describe('what was sent is shown as text, never as markup', () => {
  test('hostile labels, option labels, values, file names and title are escaped on the 409 page', async () => {
    const t = await contexts.create()
    const fields = [
      { key: 'nick', type: 'text', label: `Nick ${SCRIPT}` },
      { key: 'story', type: 'textarea', label: `Story <b>${HOVER}` },
      {
        key: 'choice',
        type: 'select',
        label: 'Choice',
        config: { options: [{ value: 'x', label: `<b>${AMP}</b>${SCRIPT}` }] },
      },
      { key: 'doc', type: 'file', label: 'Doc' },
    ]
    const form = await t.api.createForm({ title: `Title ${SCRIPT}`, fields })
    expect((await postForm(t.app, form.id, { nick: 'first' })).status).toBe(303)
    const body = new FormData()
    body.set('nick', `${SCRIPT}${HOVER}`)
    body.set('story', `</textarea>${SCRIPT}\r\n${AMP}`)
    body.set('choice', 'x')
    body.set('doc', new File(['x'], `<b>${HOVER}.pdf`, { type: 'application/pdf' }))
    const page = await expectPage(await postForm(t.app, form.id, body), 409)
    expectNoInjectedMarkup(page)
    const rows = sentRows(page)
    expect(rows.get(`Nick ${SCRIPT}`)).toBe(`${SCRIPT}${HOVER}`)
    expect(rows.get(`Story <b>${HOVER}`)!.replace(/\r\n/g, '\n')).toBe(`</textarea>${SCRIPT}\n${AMP}`)
    expect(rows.get('Choice')).toBe(`<b>${AMP}</b>${SCRIPT}`)
    expect(rows.get('Doc')).toContain(`<b>${HOVER}.pdf`)
    const text = copyBox(page)
    expect(text).toContain(`Nick ${SCRIPT}: ${SCRIPT}${HOVER}`)
    expect(text).toContain(`</textarea>${SCRIPT}\n${AMP}`)
    expect(text).toContain(`Choice: <b>${AMP}</b>${SCRIPT}`)
    expect(page.withText(`Title ${SCRIPT}`).length).toBeGreaterThan(0)
  })
})
