/**
 * The receipt (CONTRACT 11): right after sending, the person sees what they
 * sent, once, through a one-time token in a cookie the 303 sets; every other
 * visit to the answered form says only that it was answered, and when.
 */
import { describe, expect, test } from 'bun:test'
import { translator } from '../src/i18n/index.ts'
import { parseApiTime } from '../src/lib/time.ts'
import { collapsed, pageText } from './html.ts'
import { POSTGRES, skipWithout } from './prerequisites.ts'
import { contextsPerTest, openPage, postForm, type TestContext, type TestResponse, until } from './utils.ts'

const contexts = contextsPerTest()

const { t: words, dateTime, date } = translator('en')
const MINUTE = 60_000

const FIELDS = [
  { key: 'name', type: 'text', label: 'Your name', required: true },
  { key: 'notes', type: 'textarea', label: 'Anything else?' },
  {
    key: 'meal',
    type: 'select',
    label: 'Meal',
    config: { options: ['fish', { value: 'veg', label: 'Vegetarian dish' }] },
  },
  { key: 'agree', type: 'checkbox', label: 'I agree to the terms', required: true },
  { key: 'news', type: 'checkbox', label: 'Send me news' },
  { key: 'day', type: 'date', label: 'Arrival day' },
  { key: 'doc', type: 'file', label: 'Passport scan' },
]

const ANSWER = 'Ada Lovelace'
const FILE_TEXT = 'the scan itself, never shown'

function answerBody() {
  const body = new FormData()
  body.set('name', ANSWER)
  body.set('meal', 'veg')
  body.set('agree', 'true')
  body.set('day', '2026-06-01')
  body.set('doc', new File([FILE_TEXT], 'passport.pdf', { type: 'application/pdf' }))
  return body
}

/** The cookie a 303 set: its value and attributes. */
function receiptCookie(res: TestResponse) {
  const header = res.headers.get('set-cookie') ?? ''
  const [pair = '', ...attributes] = header.split(';').map((part) => part.trim())
  const [name, value] = pair.split('=')
  return { name, value: value ?? '', attributes, header }
}

const withCookie = (value: string) => ({ cookie: `intake_receipt=${value}` })

/** A form answered through the page; the 303 and its cookie. */
async function answered(t: TestContext, page: Record<string, string> = {}) {
  const form = await t.api.createForm({ title: 'Trip to Zürich', fields: FIELDS, page })
  const res = await postForm(t.app, form.id, answerBody())
  expect(res.status).toBe(303)
  expect(res.headers.get('location')).toBe(`/f/${form.id}`)
  return { form, res, cookie: receiptCookie(res) }
}

const isReceipt = (res: TestResponse) => pageText(res.text).includes(words('receipt.what_you_sent'))

/** The answered page: that it was answered, never what. */
function expectAnsweredOnly(res: TestResponse) {
  expect(res.status).toBe(200)
  const text = pageText(res.text)
  expect(text).toContain(words('answered.heading'))
  expect(isReceipt(res)).toBe(false)
  for (const secret of [ANSWER, 'passport.pdf', 'Vegetarian dish']) expect(text).not.toContain(secret)
}

describe('the cookie the 303 sets', () => {
  test('HttpOnly, SameSite=Strict, this form only, at most 10 minutes, a random token; Secure only under https', async () => {
    const t = await contexts.create()
    const { form, cookie } = await answered(t)
    expect(cookie.name).toBe('intake_receipt')
    expect(cookie.value).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(cookie.attributes.sort()).toEqual(
      ['HttpOnly', 'Max-Age=600', `Path=/f/${form.id}`, 'SameSite=Strict'].sort(),
    )
    // The database keeps a hash of the token, never the token.
    const rows = await t.sql('SELECT token_hash FROM receipts')
    expect(rows).toHaveLength(1)
    expect(rows[0]!.token_hash).toMatch(/^[0-9a-f]{64}$/)
    expect(JSON.stringify(rows)).not.toContain(cookie.value)
    const again = await answered(t)
    expect(again.cookie.value).not.toBe(cookie.value)

    const secure = await contexts.create({}, { baseUrl: 'https://forms.example.org' })
    const served = await answered(secure)
    expect(served.cookie.attributes).toContain('Secure')
  })

  test('a refused post sets none, nor does an answer over JSON', async () => {
    const t = await contexts.create()
    const form = await t.api.createForm({ fields: FIELDS })
    const refused = await postForm(t.app, form.id, new FormData())
    expect(refused.status).toBe(422)
    expect(refused.headers.get('set-cookie')).toBeNull()
    const json = await t.app.handle(
      new Request(`http://intake.test/f/${form.id}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'A', agree: true }),
      }),
    )
    expect(json.status).toBe(201)
    expect(json.headers.get('set-cookie')).toBeNull()
    expect(await t.sql('SELECT token_hash FROM receipts')).toEqual([])
  })
})

describe('the receipt', () => {
  test('what was sent: labels and answers as words, the file by name and size, "Not answered", the default words, when', async () => {
    const t = await contexts.create()
    const { form, cookie } = await answered(t)
    const res = await openPage(t.app, form.id, withCookie(cookie.value))
    expect(res.status).toBe(200)
    expect(res.headers.get('cache-control')).toBe('no-store')
    const text = pageText(res.text)
    expect(text).toContain(words('receipt.heading'))
    expect(text).toContain(words('receipt.default_message'))
    const [response] = (await t.api.get(`/forms/${form.id}/responses`)).body
    const sentAt = parseApiTime(response.submitted_at)!
    expect(text).toContain(collapsed(words('receipt.sent_at', { time: dateTime(sentAt, 'UTC') })))
    const expected: Array<[string, string]> = [
      ['Your name', ANSWER],
      ['Anything else?', words('receipt.not_answered')],
      ['Meal', 'Vegetarian dish'],
      ['I agree to the terms', words('receipt.yes')],
      ['Send me news', words('receipt.no')],
      ['Arrival day', date('2026-06-01')],
      ['Passport scan', collapsed(words('receipt.file', { name: 'passport.pdf', size: { bytes: FILE_TEXT.length } }))],
    ]
    for (const [label, answer] of expected) expect(text).toContain(`${label} ${answer}`)
    // Never the file's bytes, nor where to download them.
    expect(res.text).not.toContain(FILE_TEXT)
    expect(res.text).not.toContain('/api/v1/')
    expect(res.text).not.toContain('>veg<')
  })

  test("the form's success message and time zone", async () => {
    const t = await contexts.create()
    const { form, cookie } = await answered(t, {
      success_message: 'We will call you <soon> & "then".',
      time_zone: 'Asia/Tokyo',
    })
    const res = await openPage(t.app, form.id, withCookie(cookie.value))
    const text = pageText(res.text)
    expect(text).toContain('We will call you <soon> & "then".')
    expect(text).not.toContain(words('receipt.default_message'))
    const [response] = (await t.api.get(`/forms/${form.id}/responses`)).body
    expect(text).toContain(collapsed(dateTime(parseApiTime(response.submitted_at)!, 'Asia/Tokyo')))
    expect(res.text).not.toContain('<soon>')
  })

  test('shown once: the visit spends the token and clears the cookie; a refresh shows the answered page', async () => {
    const t = await contexts.create()
    const { form, cookie } = await answered(t)
    const first = await openPage(t.app, form.id, withCookie(cookie.value))
    expect(isReceipt(first)).toBe(true)
    expect(first.headers.get('set-cookie')).toMatch(
      new RegExp(`^intake_receipt=; Path=/f/${form.id}; Max-Age=0; HttpOnly; SameSite=Strict$`),
    )
    expectAnsweredOnly(await openPage(t.app, form.id, withCookie(cookie.value)))
    expect(await t.sql('SELECT token_hash FROM receipts')).toEqual([])
  })

  test('two visits racing with one token: one receipt', async () => {
    const t = await contexts.create()
    const { form, cookie } = await answered(t)
    const visits = await Promise.all([1, 2, 3].map(() => openPage(t.app, form.id, withCookie(cookie.value))))
    expect(visits.filter(isReceipt)).toHaveLength(1)
  })

  test('after 10 minutes it has expired: the answered page', async () => {
    const t = await contexts.create()
    const { form, cookie } = await answered(t)
    t.clock.advance(10 * MINUTE)
    expectAnsweredOnly(await openPage(t.app, form.id, withCookie(cookie.value)))
  })

  test("nothing to anyone else: no cookie, a forged token, another form's token", async () => {
    const t = await contexts.create()
    const { form, cookie } = await answered(t)
    const other = await answered(t)
    expectAnsweredOnly(await openPage(t.app, form.id))
    expectAnsweredOnly(await openPage(t.app, form.id, withCookie('A'.repeat(43))))
    expectAnsweredOnly(await openPage(t.app, form.id, withCookie('not even the shape of a token')))
    expectAnsweredOnly(await openPage(t.app, form.id, withCookie(other.cookie.value)))
    // None of those spent the real one.
    expect(isReceipt(await openPage(t.app, form.id, withCookie(cookie.value)))).toBe(true)
  })

  test('the answered page says when, in the time zone, and the success message', async () => {
    const t = await contexts.create()
    const { form } = await answered(t, { success_message: 'Thanks from Acme.', time_zone: 'America/New_York' })
    const res = await openPage(t.app, form.id)
    expectAnsweredOnly(res)
    const [response] = (await t.api.get(`/forms/${form.id}/responses`)).body
    const text = pageText(res.text)
    expect(text).toContain(
      collapsed(words('answered.at', { time: dateTime(parseApiTime(response.submitted_at)!, 'America/New_York') })),
    )
    expect(text).toContain('Thanks from Acme.')
  })

  test('a HEAD does not spend it', async () => {
    const t = await contexts.create()
    const { form, cookie } = await answered(t)
    const head = await t.app.handle(
      new Request(`http://intake.test/f/${form.id}`, { method: 'HEAD', headers: withCookie(cookie.value) }),
    )
    expect(head.status).toBe(200)
    expect(isReceipt(await openPage(t.app, form.id, withCookie(cookie.value)))).toBe(true)
  })

  test('the sweep forgets spent-by-time tokens; live ones stay', async () => {
    const t = await contexts.create()
    await answered(t)
    t.clock.advance(6 * MINUTE)
    const later = await answered(t)
    t.clock.advance(5 * MINUTE)
    t.background.start()
    await until(
      async () => (await t.sql('SELECT form_id FROM receipts')).length === 1,
      5000,
      'the expired receipt forgotten',
    )
    expect((await t.sql('SELECT form_id FROM receipts'))[0]!.form_id).toBe(later.form.id)
  })

  test('deleting the form forgets its receipt', async () => {
    const t = await contexts.create()
    const { form } = await answered(t)
    expect((await t.api.delete(`/forms/${form.id}`)).status).toBe(204)
    expect(await t.sql('SELECT form_id FROM receipts')).toEqual([])
  })
})

describe.skipIf(skipWithout(POSTGRES))('across instances on one PostgreSQL database', () => {
  test('the receipt shows when the visit after sending reaches another instance, once', async () => {
    const t = await contexts.create({}, { store: 'postgres' })
    const other = await t.anotherServer()
    const { form, cookie } = await answered(t)
    expect(isReceipt(await openPage(other.app, form.id, withCookie(cookie.value)))).toBe(true)
    expectAnsweredOnly(await openPage(t.app, form.id, withCookie(cookie.value)))
  })

  test('a file held by one instance is used by a post to another', async () => {
    const t = await contexts.create({}, { store: 'postgres' })
    const other = await t.anotherServer()
    const form = await t.api.createForm({
      fields: [
        { key: 'name', type: 'text', label: 'Name', required: true },
        { key: 'doc', type: 'file', label: 'Doc' },
      ],
    })
    const first = new FormData()
    first.set('name', '')
    first.set('doc', new File(['kept bytes'], 'kept.txt', { type: 'text/plain' }))
    const refused = await postForm(t.app, form.id, first)
    expect(refused.status).toBe(422)
    const id = /name="_held_doc" value="([^"]+)"/.exec(refused.text)?.[1]
    expect(id).toBeDefined()
    const second = new FormData()
    second.set('name', 'Ada')
    second.set('_held_doc', id!)
    expect((await postForm(other.app, form.id, second)).status).toBe(303)
    const [response] = (await t.api.get(`/forms/${form.id}/responses`)).body
    const file = await t.app.handle(new Request(response.data.doc, { headers: { authorization: `Bearer ${t.key}` } }))
    expect(await file.text()).toBe('kept bytes')
  })
})
