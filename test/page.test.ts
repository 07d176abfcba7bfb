/**
 * The human's page: GET and POST /f/<id> as a browser uses them (CONTRACT 6, 7).
 * Pages are parsed with Bun's HTMLRewriter and entity-decoded here, so the
 * assertions see what a browser sees: attribute values and text after decoding.
 * Everything goes through HTTP in-process; the database is read directly only
 * for the count of stored files and the webhook outbox payload.
 */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { type Page, parsePage } from './html.ts'
import {
  BASE_URL,
  createTestContext,
  EVERY_TYPE_ANSWERS,
  EVERY_TYPE_FIELDS,
  openPage,
  postForm,
  send,
  submit,
  type TestContext,
  type TestResponse,
  UNKNOWN_ID,
} from './utils.ts'

let t: TestContext
beforeEach(async () => {
  t = await createTestContext()
})
afterEach(() => t.close())

// ---------------------------------------------------------------- page checks

const CSP =
  "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

/**
 * An HTML page with the given status: the CONTRACT 6 headers, no script, no
 * inline handler, no CORS header. Returns the parsed page.
 */
async function expectPage(res: TestResponse, status: number): Promise<Page> {
  expect({ status: res.status, text: res.status === status ? '' : res.text.slice(0, 300) }).toEqual({
    status,
    text: '',
  })
  expect(res.headers.get('content-type') ?? '').toMatch(/^text\/html\s*(;|$)/i)
  expect(res.headers.get('content-security-policy')).toBe(CSP)
  expect(res.headers.get('x-content-type-options')).toBe('nosniff')
  expect(res.headers.get('referrer-policy')).toBe('no-referrer')
  expect(res.headers.get('cache-control')).toBe('no-store')
  expect(res.headers.get('access-control-allow-origin')).toBeNull()
  expect(res.text.toLowerCase()).not.toContain('<script')
  const page = await parsePage(res.text)
  expect(page.all('script')).toEqual([])
  const handlers = page.nodes.flatMap((n) =>
    Object.keys(n.attrs)
      .filter((name) => name.startsWith('on'))
      .map((name) => `${n.tag}[${name}]`),
  )
  expect(handlers).toEqual([])
  // A page a person reads: a language and a body.
  expect(page.one('html').attrs.lang ?? '').not.toBe('')
  page.one('body')
  return page
}

/** The thank-you page of an answered form. */
async function expectThankYou(res: TestResponse) {
  const page = await expectPage(res, 200)
  expect(page.all('form')).toEqual([])
  expect(page.one('h1').text).toMatch(/this form has been answered/i)
  return page
}

/** The form itself (200 on a GET, 422 after a refused post). */
async function expectFormPage(res: TestResponse, status = 200) {
  const page = await expectPage(res, status)
  const form = page.one('form')
  expect((form.attrs.method ?? '').toLowerCase()).toBe('post')
  return page
}

function expectSeeOther(res: TestResponse, formId: string) {
  expect({ status: res.status, text: res.status === 303 ? '' : res.text.slice(0, 500) }).toEqual({
    status: 303,
    text: '',
  })
  const location = res.headers.get('location')
  expect(location).not.toBeNull()
  expect(new URL(location!, BASE_URL).href).toBe(`${BASE_URL}/f/${formId}`)
}

// ---------------------------------------------------------------- requests

/** A callback nobody listens on: the outbox row is written, nothing is delivered in-process. */
const HOOK = 'http://127.0.0.1:9/hook'

type Part = { name: string; value: string } | { name: string; filename: string; type?: string; bytes: Uint8Array }

/** A multipart/form-data body built byte by byte, as a browser sends it. */
function multipart(parts: Part[]): { body: Uint8Array; contentType: string } {
  const boundary = '----intakeTestBoundary7MA4YWxkTrZu0gW'
  const enc = new TextEncoder()
  const quote = (s: string) => s.replace(/"/g, '%22').replace(/\r/g, '%0D').replace(/\n/g, '%0A')
  const chunks: Uint8Array[] = []
  for (const part of parts) {
    if ('value' in part) {
      chunks.push(
        enc.encode(
          `--${boundary}\r\nContent-Disposition: form-data; name="${quote(part.name)}"\r\n\r\n${part.value}\r\n`,
        ),
      )
    } else {
      const type = part.type === undefined ? '' : `Content-Type: ${part.type}\r\n`
      chunks.push(
        enc.encode(
          `--${boundary}\r\nContent-Disposition: form-data; name="${quote(part.name)}"; filename="${quote(part.filename)}"\r\n${type}\r\n`,
        ),
      )
      chunks.push(part.bytes)
      chunks.push(enc.encode('\r\n'))
    }
  }
  chunks.push(enc.encode(`--${boundary}--\r\n`))
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` }
}

/** POST /f/<id> with exactly this body and content type. */
const postRaw = (
  formId: string,
  body: Uint8Array | string,
  contentType: string,
  headers: Record<string, string> = {},
  ctx: TestContext = t,
): Promise<TestResponse> =>
  send(ctx.app, 'POST', `/f/${formId}`, { body, headers: { 'content-type': contentType, ...headers } })

const postParts = (formId: string, parts: Part[], headers: Record<string, string> = {}) => {
  const { body, contentType } = multipart(parts)
  return postRaw(formId, body, contentType, headers)
}

/** GET a file URL from a response's data, with a key (or none). */
async function download(url: string, key: string | null) {
  expect(url.startsWith(`${BASE_URL}/api/v1/`)).toBe(true)
  const response = await t.app.handle(new Request(url, { headers: key ? { authorization: `Bearer ${key}` } : {} }))
  return { status: response.status, headers: response.headers, bytes: new Uint8Array(await response.arrayBuffer()) }
}

async function responsesOf(formId: string, ctx: TestContext = t): Promise<any[]> {
  const res = await ctx.api.get(`/forms/${formId}/responses`)
  expect(res.status).toBe(200)
  return res.body
}

async function onlyResponse(formId: string, ctx: TestContext = t) {
  const list = await responsesOf(formId, ctx)
  expect(list).toHaveLength(1)
  return list[0]
}

const storedFileCount = async (ctx: TestContext = t) =>
  (await ctx.sql('select CAST(count(*) AS INTEGER) as n from response_files'))[0]!.n as number

/** Bytes of every value 0..255, then more: a file no text decoding survives unchanged. */
function binaryBytes(size: number): Uint8Array {
  const bytes = new Uint8Array(size)
  for (let i = 0; i < size; i++) bytes[i] = (i * 7 + (i >> 8)) & 0xff
  bytes[0] = 0x89
  bytes[1] = 0x50 // "P": starts like a PNG
  bytes[2] = 0x00
  bytes[3] = 0xff
  bytes[4] = 0x0d
  bytes[5] = 0x0a
  return bytes
}

/** A form's field definitions, for `field-<key>` ordering checks. */
type FieldDef = {
  key: string
  type: string
  label: string
  required?: boolean
  description?: string
  config?: Record<string, unknown>
}

/**
 * The 422 page marks field `key` as invalid: a summary link to "#field-<key>",
 * the control with aria-invalid="true" and aria-describedby naming an error
 * element that sits next to the field (between the previous field's and the
 * next field's label and control) and says what the summary says.
 */
function expectFieldError(page: Page, fields: FieldDef[], key: string) {
  const links = page.summaryLinks()
  const link = links.get(key)
  expect(link, `summary link to #field-${key}`).toBeDefined()
  const control = page.control(key)
  expect(control.attrs['aria-invalid']).toBe('true')
  const index = fields.findIndex((f) => f.key === key)
  expect(index).toBeGreaterThanOrEqual(0)
  const own = (k: string) => [page.label(k), page.control(k)]
  const after = index > 0 ? Math.max(...own(fields[index - 1]!.key).map((n) => n.end)) : page.one('form').start
  const before =
    index < fields.length - 1 ? Math.min(...own(fields[index + 1]!.key).map((n) => n.start)) : page.one('form').end
  const errors = page
    .describedBy(control)
    .map((id) => page.byId(id))
    .filter((node) => {
      const message = node.text.replace(/^\s*error:\s*/i, '').trim()
      return message !== '' && link!.text.includes(message)
    })
  expect(errors.length, `an error element for ${key} named by aria-describedby`).toBeGreaterThanOrEqual(1)
  for (const error of errors) {
    expect(error.start).toBeGreaterThan(after)
    expect(error.end).toBeLessThan(before)
  }
  // The summary is at the top: before the heading and the form.
  expect(link!.start).toBeLessThan(page.one('form').start)
  expect(link!.start).toBeLessThan(page.one('h1').start)
}

function expectFieldValid(page: Page, key: string) {
  expect(page.control(key).attrs['aria-invalid']).toBeUndefined()
  expect(page.summaryLinks().has(key)).toBe(false)
}

// ---------------------------------------------------------------- hostile text

const SCRIPT = `"><script>alert(1)</script>`
const HOVER = `' onmouseover='x`
const AMP = '&amp;'
const BOLD = '<b>'
const TRICKY_VALUE = `a&amp;b "c" <d> 'e'`

// ================================================================ controls

describe('each field type is rendered with its native control', () => {
  test('text: type=text with no maxlength (nothing cut), minlength, pattern, placeholder, the default as value, and required', async () => {
    const fields = [
      {
        key: 'code',
        type: 'text',
        label: 'Code',
        required: true,
        config: { max_length: 12, min_length: 3, pattern: '[A-Z]{3}[0-9]*', placeholder: 'ABC123', default: 'XYZ9' },
      },
    ]
    const form = await t.api.createForm({ fields })
    const page = await expectFormPage(await openPage(t.app, form.id))
    const input = page.control('code')
    expect(input.tag).toBe('input')
    expect(input.attrs.type).toBe('text')
    expect(input.attrs.name).toBe('code')
    expect(input.attrs.maxlength).toBeUndefined()
    expect(input.attrs.minlength).toBe('3')
    expect(input.attrs.pattern).toBe('[A-Z]{3}[0-9]*')
    expect(input.attrs.placeholder).toBe('ABC123')
    expect(input.attrs.value).toBe('XYZ9')
    expect('required' in input.attrs).toBe(true)
  })

  test('textarea: rows, no maxlength, placeholder, and the default as its text', async () => {
    const fields = [
      {
        key: 'notes',
        type: 'textarea',
        label: 'Notes',
        config: { rows: 6, max_length: 500, placeholder: 'Anything else?', default: 'line 1\nline 2' },
      },
    ]
    const form = await t.api.createForm({ fields })
    const page = await expectFormPage(await openPage(t.app, form.id))
    const area = page.control('notes')
    expect(area.tag).toBe('textarea')
    expect(area.attrs.name).toBe('notes')
    expect(area.attrs.rows).toBe('6')
    expect(area.attrs.maxlength).toBeUndefined()
    expect(area.attrs.placeholder).toBe('Anything else?')
    expect(area.text).toBe('line 1\nline 2')
    expect('required' in area.attrs).toBe(false)
  })

  test('a textarea default that starts with a newline keeps it', async () => {
    const fields = [{ key: 'notes', type: 'textarea', label: 'Notes', config: { default: '\nsecond line' } }]
    const form = await t.api.createForm({ fields })
    const page = await expectFormPage(await openPage(t.app, form.id))
    expect(page.control('notes').text).toBe('\nsecond line')
  })

  test('email: type=email with placeholder and default', async () => {
    const fields = [
      {
        key: 'email',
        type: 'email',
        label: 'Email',
        required: true,
        config: { placeholder: 'you@example.com', default: 'ada@example.com' },
      },
    ]
    const form = await t.api.createForm({ fields })
    const page = await expectFormPage(await openPage(t.app, form.id))
    const input = page.control('email')
    expect(input.tag).toBe('input')
    expect(input.attrs.type).toBe('email')
    expect(input.attrs.name).toBe('email')
    expect(input.attrs.placeholder).toBe('you@example.com')
    expect(input.attrs.value).toBe('ada@example.com')
    expect('required' in input.attrs).toBe(true)
  })

  test('number: a text input with inputmode (numeric for whole numbers only), the placeholder and default; no min, max or step', async () => {
    const fields = [
      { key: 'guests', type: 'number', label: 'Guests', config: { min: 1, max: 10, step: 1, default: 2 } },
      { key: 'weight', type: 'number', label: 'Weight', config: { min: 0.5, placeholder: 'kg', default: 2.75 } },
      { key: 'free', type: 'number', label: 'Anything' },
    ]
    const form = await t.api.createForm({ fields })
    const page = await expectFormPage(await openPage(t.app, form.id))
    const guests = page.control('guests')
    expect(guests.tag).toBe('input')
    expect(guests.attrs.type).toBe('text')
    expect(guests.attrs.inputmode).toBe('numeric')
    for (const ignored of ['min', 'max', 'step']) expect(guests.attrs[ignored]).toBeUndefined()
    expect(guests.attrs.value).toBe('2')
    const weight = page.control('weight')
    expect(weight.attrs.type).toBe('text')
    expect(weight.attrs.inputmode).toBe('decimal')
    expect(weight.attrs.min).toBeUndefined()
    expect(weight.attrs.placeholder).toBe('kg')
    expect(weight.attrs.value).toBe('2.75')
    const free = page.control('free')
    expect(free.attrs.inputmode).toBe('decimal')
    expect(free.attrs.value ?? '').toBe('')
  })

  test('select: a placeholder option with value "", then string and {value,label} options; the default is selected', async () => {
    const fields = [
      {
        key: 'meal',
        type: 'select',
        label: 'Meal',
        required: true,
        config: {
          options: ['fish', { value: 'veg', label: 'Vegetarian' }, 'meat'],
          placeholder: 'Pick a meal',
          default: 'veg',
          display: 'dropdown',
        },
      },
      { key: 'size', type: 'select', label: 'Size', config: { options: ['S', 'M'], display: 'dropdown' } },
    ]
    const form = await t.api.createForm({ fields })
    const page = await expectFormPage(await openPage(t.app, form.id))
    const meal = page.control('meal')
    expect(meal.tag).toBe('select')
    expect(meal.attrs.name).toBe('meal')
    expect('required' in meal.attrs).toBe(true)
    const options = page.within(meal, 'option')
    expect(options.map((o) => [o.attrs.value, o.text])).toEqual([
      ['', 'Pick a meal'],
      ['fish', 'fish'],
      ['veg', 'Vegetarian'],
      ['meat', 'meat'],
    ])
    expect(options.filter((o) => 'selected' in o.attrs).map((o) => o.attrs.value)).toEqual(['veg'])

    const size = page.control('size')
    const sizeOptions = page.within(size, 'option')
    expect(sizeOptions[0]!.attrs.value).toBe('')
    expect(sizeOptions[0]!.text.trim()).not.toBe('')
    expect(sizeOptions.slice(1).map((o) => o.attrs.value)).toEqual(['S', 'M'])
    expect(sizeOptions.filter((o) => 'selected' in o.attrs)).toEqual([])
    expect('required' in size.attrs).toBe(false)
  })

  test('checkbox: one box; required makes it required; default true is ticked, no default is not', async () => {
    const fields = [
      { key: 'agree', type: 'checkbox', label: 'I agree', required: true },
      { key: 'news', type: 'checkbox', label: 'Newsletter', config: { default: true } },
      { key: 'off', type: 'checkbox', label: 'Off by default', config: { default: false } },
    ]
    const form = await t.api.createForm({ fields })
    const page = await expectFormPage(await openPage(t.app, form.id))
    for (const key of ['agree', 'news', 'off']) {
      const boxes = page.all('input').filter((n) => n.attrs.name === key)
      expect(boxes).toHaveLength(1)
      expect(boxes[0]!.attrs.type).toBe('checkbox')
      expect(boxes[0]!.attrs.id).toBe(`field-${key}`)
    }
    expect('required' in page.control('agree').attrs).toBe(true)
    expect('checked' in page.control('agree').attrs).toBe(false)
    expect('required' in page.control('news').attrs).toBe(false)
    expect('checked' in page.control('news').attrs).toBe(true)
    expect('checked' in page.control('off').attrs).toBe(false)
  })

  test('date: type=date with min, max and default', async () => {
    const fields = [
      {
        key: 'day',
        type: 'date',
        label: 'Day',
        config: { min: '2026-01-01', max: '2026-12-31', default: '2026-03-15' },
      },
    ]
    const form = await t.api.createForm({ fields })
    const page = await expectFormPage(await openPage(t.app, form.id))
    const input = page.control('day')
    expect(input.tag).toBe('input')
    expect(input.attrs.type).toBe('date')
    expect(input.attrs.min).toBe('2026-01-01')
    expect(input.attrs.max).toBe('2026-12-31')
    expect(input.attrs.value).toBe('2026-03-15')
  })

  test('file: type=file with accept and no value; the form posts multipart/form-data', async () => {
    const fields = [
      { key: 'name', type: 'text', label: 'Name' },
      {
        key: 'photo',
        type: 'file',
        label: 'Photo',
        required: true,
        config: { accept: 'image/*,.pdf', max_size: 2048 },
      },
    ]
    const form = await t.api.createForm({ fields })
    const page = await expectFormPage(await openPage(t.app, form.id))
    const input = page.control('photo')
    expect(input.tag).toBe('input')
    expect(input.attrs.type).toBe('file')
    expect(input.attrs.name).toBe('photo')
    expect(input.attrs.accept).toBe('image/*,.pdf')
    expect(input.attrs.value).toBeUndefined()
    expect('required' in input.attrs).toBe(true)
    expect((page.one('form').attrs.enctype ?? '').toLowerCase()).toBe('multipart/form-data')
  })

  test('a form without a file field is not multipart', async () => {
    const form = await t.api.createForm({ fields: EVERY_TYPE_FIELDS.filter((f) => f.type !== 'file') })
    const page = await expectFormPage(await openPage(t.app, form.id))
    expect((page.one('form').attrs.enctype ?? 'application/x-www-form-urlencoded').toLowerCase()).toBe(
      'application/x-www-form-urlencoded',
    )
  })

  test('the form posts to /f/<id>, every field has a label tied to its control, and "(required)" marks exactly the required ones', async () => {
    const form = await t.api.createForm({ fields: EVERY_TYPE_FIELDS })
    const page = await expectFormPage(await openPage(t.app, form.id))
    expect(page.one('form').attrs.action).toBe(`/f/${form.id}`)
    for (const field of EVERY_TYPE_FIELDS) {
      const control = page.control(field.key)
      expect(control.attrs.name).toBe(field.key)
      // A group (radios, checkboxes) is named by its fieldset's legend; its first input has the field's id.
      const group = page.all('fieldset').find((fieldset) => page.within(fieldset).includes(control))
      const label = group ? page.within(group, 'legend')[0]! : page.label(field.key)
      const text = label.text.replace(/\s+/g, ' ').trim()
      if (field.required) {
        expect(text).toBe(`${field.label} (required)`)
        expect('required' in control.attrs).toBe(true)
      } else {
        expect(text).toBe(field.label)
        expect('required' in control.attrs).toBe(false)
      }
    }
  })

  test('the title, the description and each field description are shown, each description below its label', async () => {
    const fields: FieldDef[] = [
      { key: 'name', type: 'text', label: 'Name', description: 'As on your passport' },
      { key: 'agree', type: 'checkbox', label: 'I agree', description: 'Read the terms first' },
      { key: 'notes', type: 'textarea', label: 'Notes', description: 'Anything we should know' },
    ]
    const form = await t.api.createForm({ title: 'Trip sign-up', description: 'Tell us who is coming.', fields })
    const page = await expectFormPage(await openPage(t.app, form.id))
    expect(page.one('h1').text).toBe('Trip sign-up')
    expect(page.one('title').text).toContain('Trip sign-up')
    expect(page.withText('Tell us who is coming.').length).toBeGreaterThanOrEqual(1)
    fields.forEach((field, i) => {
      const shown = page.withText(field.description!)
      expect(shown.length, `description of ${field.key}`).toBeGreaterThanOrEqual(1)
      const label = page.label(field.key)
      const next = fields[i + 1]
      const limit = next ? Math.min(page.label(next.key).start, page.control(next.key).start) : page.one('form').end
      expect(shown.some((n) => n.start > label.start && n.end < limit)).toBe(true)
    })
  })
})

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

// ================================================================ escaping

describe('everything the API client wrote is escaped and round-trips exactly', () => {
  const hostileFields = [
    {
      key: 'nick',
      type: 'text',
      label: `Nick ${SCRIPT}`,
      description: `Help ${HOVER} ${AMP} ${BOLD}`,
      required: true,
      config: { placeholder: `P ${HOVER} ${SCRIPT} ${AMP}`, default: `D ${TRICKY_VALUE} ${SCRIPT}` },
    },
    {
      key: 'story',
      type: 'textarea',
      label: `${HOVER}`,
      config: {
        placeholder: `${BOLD}${AMP}`,
        default: `</textarea><script>alert(1)</script>\n${AMP} ${BOLD} ${HOVER}`,
      },
    },
    {
      key: 'choice',
      type: 'select',
      label: `Choice ${AMP} ${BOLD}`,
      description: SCRIPT,
      config: {
        options: [
          SCRIPT,
          { value: TRICKY_VALUE, label: `<b>L</b> ${HOVER}` },
          '&lt;',
          { value: `${HOVER}`, label: AMP },
        ],
        placeholder: `${HOVER}${BOLD}`,
        default: TRICKY_VALUE,
        display: 'dropdown',
      },
    },
    {
      key: 'mail',
      type: 'email',
      label: `Mail ${SCRIPT}`,
      config: { placeholder: `${SCRIPT}${HOVER}`, default: "o'neil&co@example.com" },
    },
    { key: 'count', type: 'number', label: `Count ${HOVER}`, config: { placeholder: `${AMP}${SCRIPT}` } },
    { key: 'ok', type: 'checkbox', label: `OK ${SCRIPT} ${AMP}`, description: `${BOLD}${HOVER}` },
  ]
  const hostileTitle = `Title ${SCRIPT} ${HOVER} ${AMP} ${BOLD}`
  const hostileDescription = `Desc ${SCRIPT}${HOVER}${AMP}<b>x</b>`

  async function hostileForm(extra: Record<string, unknown> = {}) {
    return t.api.createForm({ title: hostileTitle, description: hostileDescription, fields: hostileFields, ...extra })
  }

  function expectNoInjectedMarkup(page: Page) {
    expect(page.all('b')).toEqual([])
    expect(page.all('d')).toEqual([])
    expect(page.html).not.toContain('<b>')
    expect(page.html.toLowerCase()).not.toContain('<script')
    // Nothing the client wrote became an attribute of its own.
    const attributeNames = new Set(page.nodes.flatMap((n) => Object.keys(n.attrs)))
    for (const name of ['onmouseover', "x'", 'x', "'"]) expect(attributeNames.has(name)).toBe(false)
  }

  test('title, descriptions, labels, options, placeholders and defaults show exactly as written', async () => {
    const form = await hostileForm()
    const page = await expectFormPage(await openPage(t.app, form.id))
    expectNoInjectedMarkup(page)

    expect(page.one('h1').text).toBe(hostileTitle)
    expect(page.one('title').text).toContain(hostileTitle)
    expect(page.withText(hostileDescription).length).toBeGreaterThanOrEqual(1)

    for (const field of hostileFields) {
      const label = page.label(field.key).text.replace(/\s*\(required\)\s*$/, '')
      expect(label).toBe(field.label)
      if (field.description)
        expect(page.withText(field.description).length, `description of ${field.key}`).toBeGreaterThanOrEqual(1)
    }

    const nick = page.control('nick')
    expect(nick.attrs.placeholder).toBe(hostileFields[0]!.config!.placeholder as string)
    expect(nick.attrs.value).toBe(hostileFields[0]!.config!.default as string)

    const story = page.control('story')
    expect(story.tag).toBe('textarea')
    expect(story.attrs.placeholder).toBe(`${BOLD}${AMP}`)
    expect(story.text).toBe(hostileFields[1]!.config!.default as string)

    const choice = page.control('choice')
    const options = page.within(choice, 'option')
    expect(options.map((o) => [o.attrs.value, o.text])).toEqual([
      ['', `${HOVER}${BOLD}`],
      [SCRIPT, SCRIPT],
      [TRICKY_VALUE, `<b>L</b> ${HOVER}`],
      ['&lt;', '&lt;'],
      [HOVER, AMP],
    ])
    expect(options.filter((o) => 'selected' in o.attrs).map((o) => o.attrs.value)).toEqual([TRICKY_VALUE])

    const mail = page.control('mail')
    expect(mail.attrs.placeholder).toBe(`${SCRIPT}${HOVER}`)
    expect(mail.attrs.value).toBe("o'neil&co@example.com")
    expect(page.control('count').attrs.placeholder).toBe(`${AMP}${SCRIPT}`)
  })

  test('the page submitted as it stands stores every default exactly', async () => {
    const form = await hostileForm()
    const page = await expectFormPage(await openPage(t.app, form.id))
    const entries = page.browserEntries()
    expect(Object.fromEntries(entries).choice).toBe(TRICKY_VALUE)
    expectSeeOther(await postForm(t.app, form.id, entries), form.id)
    expect((await onlyResponse(form.id)).data).toEqual({
      nick: hostileFields[0]!.config!.default,
      story: hostileFields[1]!.config!.default,
      choice: TRICKY_VALUE,
      mail: "o'neil&co@example.com",
      ok: false,
    })
  })

  test.each([
    ['urlencoded', 'dropdown', false],
    ['multipart', 'dropdown', true],
    ['urlencoded', 'radio', false],
    ['multipart', 'radio', true],
  ] as const)(
    'the option value %s from a %s, posted back as a browser sends it, is accepted and stored exactly',
    async (_name, display, asMultipart) => {
      const form = await t.api.createForm({
        fields: [
          {
            key: 'choice',
            type: 'select',
            label: 'Choice',
            required: true,
            config: { options: ['plain', { value: TRICKY_VALUE, label: 'Tricky' }], display },
          },
        ],
      })
      const page = await expectFormPage(await openPage(t.app, form.id))
      const option =
        display === 'dropdown'
          ? page.within(page.control('choice'), 'option').find((o) => o.text === 'Tricky')
          : page
              .all('input')
              .find(
                (o) => o.attrs.name === 'choice' && page.label(o.attrs.id!.slice('field-'.length)).text === 'Tricky',
              )
      expect(option?.attrs.value).toBe(TRICKY_VALUE)
      let res: TestResponse
      if (asMultipart) {
        const data = new FormData()
        data.append('choice', option!.attrs.value!)
        res = await postForm(t.app, form.id, data)
      } else {
        res = await postForm(t.app, form.id, { choice: option!.attrs.value! })
      }
      expectSeeOther(res, form.id)
      expect((await onlyResponse(form.id)).data).toEqual({ choice: TRICKY_VALUE })
    },
  )

  test('hostile typed values on a 422 page come back exactly, and the labels of the failing fields are escaped too', async () => {
    const form = await hostileForm()
    const typed = {
      nick: '',
      story: `${SCRIPT}\r\n${AMP}`,
      choice: TRICKY_VALUE,
      mail: `${HOVER}${SCRIPT}`,
      count: `${AMP}<b>`,
    }
    const page = await expectFormPage(await postForm(t.app, form.id, typed), 422)
    expectNoInjectedMarkup(page)
    expect(page.control('nick').attrs.value ?? '').toBe('')
    expect(page.control('story').text.replace(/\r\n/g, '\n')).toBe(`${SCRIPT}\n${AMP}`)
    expect(
      page
        .within(page.control('choice'), 'option')
        .filter((o) => 'selected' in o.attrs)
        .map((o) => o.attrs.value),
    ).toEqual([TRICKY_VALUE])
    expect(page.control('mail').attrs.value).toBe(`${HOVER}${SCRIPT}`)
    expect(page.control('count').attrs.value).toBe(`${AMP}<b>`)
    const links = page.summaryLinks()
    expect([...links.keys()].sort()).toEqual(['count', 'mail', 'nick'])
    expect(links.get('nick')!.text).toBe('Enter an answer')
    expect(page.label('nick').text).toContain(`Nick ${SCRIPT}`)
    expect(page.label('mail').text).toContain(`Mail ${SCRIPT}`)
  })

  test('status pages show a hostile title escaped', async () => {
    const form = await hostileForm()
    expectSeeOther(await postForm(t.app, form.id, { nick: 'Ada' }), form.id)
    for (const res of [await openPage(t.app, form.id), await postForm(t.app, form.id, { nick: 'Eve' })]) {
      const page = await expectPage(res, res.status)
      expect([200, 409]).toContain(res.status)
      expectNoInjectedMarkup(page)
      // Where the title is shown, it is shown whole, as text.
      for (const node of page.nodes.filter((n) => n.text.startsWith('Title ')))
        expect(node.text).toContain(hostileTitle)
    }
  })

  test('context and callback_metadata never appear on any page', async () => {
    const context = { secret: 'CTX-SECRET-4471', note: 'agent private' }
    const callback_metadata = { ticket: 'META-SECRET-9932' }
    const form = await t.api.createForm({ context, callback_metadata, callback_url: HOOK })
    const pages = [
      await openPage(t.app, form.id),
      await postForm(t.app, form.id, { name: '' }),
      await postForm(t.app, form.id, { name: 'Ada' }),
      await openPage(t.app, form.id),
      await postForm(t.app, form.id, { name: 'Ada' }),
    ]
    expect(pages.map((p) => p.status)).toEqual([200, 422, 303, 200, 409])
    for (const res of pages) {
      for (const secret of ['CTX-SECRET-4471', 'agent private', 'META-SECRET-9932'])
        expect(res.text).not.toContain(secret)
    }
  })
})

// ================================================================ the CONTRACT 6 headers on every page

describe('every page', () => {
  test('has the CONTRACT 6 headers, text/html, and no script or inline handler: form, 422, thank-you, 409, 410, 404, 403, 413, 429', async () => {
    const ctx = await createTestContext({ SERVICE_PUBLIC_RATE_LIMIT: '1' })
    try {
      const active = await ctx.api.createForm({ fields: EVERY_TYPE_FIELDS })
      const answered = await ctx.api.createForm()
      const cancelled = await ctx.api.createForm()
      const expiring = await ctx.api.createForm({ expires_in: '1m' })
      const small = await ctx.api.createForm({
        fields: [{ key: 'doc', type: 'file', label: 'Doc', config: { max_size: 1024 } }],
      })
      expect((await ctx.api.patch(`/forms/${cancelled.id}`, { status: 'cancelled' })).status).toBe(200)
      expect((await submit(ctx.app, answered.id, { name: 'Ada' })).status).toBe(201)
      // That submission used this minute's one post.
      ctx.clock.advance(61_000)

      await expectFormPage(await openPage(ctx.app, active.id))
      // The one allowed post of this minute: refused with the page.
      await expectFormPage(await postForm(ctx.app, active.id, { name: '' }), 422)
      await expectPage(await postForm(ctx.app, active.id, { name: 'Ada' }), 429)
      await expectThankYou(await openPage(ctx.app, answered.id))
      await expectPage(await openPage(ctx.app, cancelled.id), 410)
      await expectPage(await openPage(ctx.app, UNKNOWN_ID), 404)
      await expectPage(await openPage(ctx.app, 'nope'), 404)
      ctx.clock.advance(61_000)
      await expectPage(await openPage(ctx.app, expiring.id), 410)
      await expectPage(await postForm(ctx.app, answered.id, { name: 'Grace' }), 409)
      ctx.clock.advance(61_000)
      await expectPage(await postForm(ctx.app, cancelled.id, { name: 'Grace' }), 410)
      ctx.clock.advance(61_000)
      await expectPage(await postForm(ctx.app, active.id, { name: 'Ada' }, { 'sec-fetch-site': 'cross-site' }), 403)
      ctx.clock.advance(61_000)
      // Past a file field's max_size by more than is read to refuse it on the page (FILE_OVERSIZE_READ).
      const { body, contentType } = multipart([
        { name: 'doc', filename: 'big.bin', type: 'application/octet-stream', bytes: new Uint8Array(27 * 1024 * 1024) },
      ])
      await expectPage(await postRaw(small.id, body, contentType, {}, ctx), 413)
      ctx.clock.advance(61_000)
      await expectPage(await postForm(ctx.app, UNKNOWN_ID, { name: 'Ada' }), 404)
    } finally {
      ctx.close()
    }
  })
})

// ================================================================ files

describe('file uploads', () => {
  const NAME = "Zoë's résumé 日本 (1).png"

  test('a valid upload is stored; its value is the API URL, which returns identical bytes as an attachment with the declared type', async () => {
    const fields = [
      { key: 'name', type: 'text', label: 'Name', required: true },
      { key: 'photo', type: 'file', label: 'Photo', required: true, config: { accept: 'image/*', max_size: 4096 } },
    ]
    const form = await t.api.createForm({ fields })
    const bytes = binaryBytes(3000)
    const res = await postParts(form.id, [
      { name: 'name', value: 'Ada' },
      { name: 'photo', filename: NAME, type: 'image/png', bytes },
    ])
    expectSeeOther(res, form.id)
    const response = await onlyResponse(form.id)
    expect(response.data).toEqual({
      name: 'Ada',
      photo: `${BASE_URL}/api/v1/forms/${form.id}/responses/${response.id}/files/photo`,
    })
    expect(await storedFileCount()).toBe(1)

    const file = await download(response.data.photo, t.key)
    expect(file.status).toBe(200)
    expect(file.bytes.byteLength).toBe(bytes.byteLength)
    expect(Buffer.from(file.bytes).equals(Buffer.from(bytes))).toBe(true)
    expect(file.headers.get('content-type')).toBe('image/png')
    expect(file.headers.get('x-content-type-options')).toBe('nosniff')
    const disposition = file.headers.get('content-disposition') ?? ''
    expect(disposition).toMatch(/^attachment\s*;/i)
    expect(disposition.toLowerCase()).not.toContain('inline')
    const exact = /filename\*\s*=\s*UTF-8''([^;\s]+)/i.exec(disposition)
    expect(exact).not.toBeNull()
    expect(decodeURIComponent(exact![1]!)).toBe(NAME)
    const plain = /filename\s*=\s*"([^"]*)"/i.exec(disposition)
    if (plain) expect(plain[1]).toMatch(/^[\x20-\x7e]*$/)
  })

  test('an upload sent with FormData as a browser does is stored too', async () => {
    const form = await t.api.createForm({
      fields: [{ key: 'doc', type: 'file', label: 'Doc', required: true, config: { accept: '.pdf', max_size: 1024 } }],
    })
    const bytes = binaryBytes(700)
    const data = new FormData()
    data.append('doc', new File([bytes], 'report.PDF', { type: 'application/pdf' }))
    expectSeeOther(await postForm(t.app, form.id, data), form.id)
    const response = await onlyResponse(form.id)
    const file = await download(response.data.doc, t.key)
    expect(file.status).toBe(200)
    expect(Buffer.from(file.bytes).equals(Buffer.from(bytes))).toBe(true)
    expect(file.headers.get('content-type')).toBe('application/pdf')
  })

  test.each([
    ['a name without extension', 'scan', 'image/png'],
    ['a name whose extension suggests another type', 'notes.txt', 'text/markdown'],
    ['a vendor type', 'data.json', 'application/vnd.api+json'],
  ])('the download has the type the browser declared (%s)', async (_name, filename, type) => {
    const form = await t.api.createForm({ fields: [{ key: 'doc', type: 'file', label: 'Doc', required: true }] })
    const bytes = binaryBytes(100)
    expectSeeOther(await postParts(form.id, [{ name: 'doc', filename, type, bytes }]), form.id)
    const file = await download((await onlyResponse(form.id)).data.doc, t.key)
    expect(file.status).toBe(200)
    expect(file.headers.get('content-type')).toBe(type)
    expect(Buffer.from(file.bytes).equals(Buffer.from(bytes))).toBe(true)
  })

  test('a declared type that is not a media type is served as application/octet-stream', async () => {
    const form = await t.api.createForm({ fields: [{ key: 'doc', type: 'file', label: 'Doc', required: true }] })
    const bytes = binaryBytes(100)
    expectSeeOther(await postParts(form.id, [{ name: 'doc', filename: 'odd.png', type: 'nonsense', bytes }]), form.id)
    const file = await download((await onlyResponse(form.id)).data.doc, t.key)
    expect(file.status).toBe(200)
    expect(file.headers.get('content-type')).toBe('application/octet-stream')
    expect(Buffer.from(file.bytes).equals(Buffer.from(bytes))).toBe(true)
    expect(file.headers.get('content-disposition') ?? '').toMatch(/^attachment\s*;/i)
  })

  test('an HTML upload is still served as an attachment, never inline', async () => {
    const form = await t.api.createForm({ fields: [{ key: 'doc', type: 'file', label: 'Doc', required: true }] })
    const bytes = new TextEncoder().encode('<script>alert(1)</script>')
    expectSeeOther(
      await postParts(form.id, [{ name: 'doc', filename: 'page.html', type: 'text/html', bytes }]),
      form.id,
    )
    const file = await download((await onlyResponse(form.id)).data.doc, t.key)
    expect(file.status).toBe(200)
    expect(file.headers.get('content-disposition') ?? '').toMatch(/^attachment\s*;/i)
    expect(file.headers.get('x-content-type-options')).toBe('nosniff')
    expect(Buffer.from(file.bytes).equals(Buffer.from(bytes))).toBe(true)
  })

  test("the download needs the owner's key: no key is 403, another account's key is 404", async () => {
    const form = await t.api.createForm({ fields: [{ key: 'doc', type: 'file', label: 'Doc', required: true }] })
    expectSeeOther(
      await postParts(form.id, [{ name: 'doc', filename: 'a.txt', type: 'text/plain', bytes: binaryBytes(50) }]),
      form.id,
    )
    const url = (await onlyResponse(form.id)).data.doc
    const none = await download(url, null)
    expect(none.status).toBe(403)
    expect(Buffer.from(none.bytes).includes(Buffer.from(binaryBytes(50)))).toBe(false)
    const other = await download(url, (await t.createKey('someone-else')).key)
    expect(other.status).toBe(404)
    expect(Buffer.from(other.bytes).includes(Buffer.from(binaryBytes(50)))).toBe(false)
    expect((await download(url, t.key)).status).toBe(200)
  })

  test('deleting the form deletes its files: the download is 404 and no file is left stored', async () => {
    const form = await t.api.createForm({ fields: [{ key: 'doc', type: 'file', label: 'Doc', required: true }] })
    expectSeeOther(
      await postParts(form.id, [
        { name: 'doc', filename: 'a.bin', type: 'application/octet-stream', bytes: binaryBytes(500) },
      ]),
      form.id,
    )
    const url = (await onlyResponse(form.id)).data.doc
    expect(await storedFileCount()).toBe(1)
    expect((await t.api.delete(`/forms/${form.id}`)).status).toBe(204)
    expect((await download(url, t.key)).status).toBe(404)
    expect(await storedFileCount()).toBe(0)
  })

  test('a file larger than max_size is a 422 page with the error next to the file field; nothing is stored', async () => {
    const fields: FieldDef[] = [
      { key: 'name', type: 'text', label: 'Name' },
      { key: 'photo', type: 'file', label: 'Photo', config: { max_size: 1024 } },
      { key: 'notes', type: 'textarea', label: 'Notes' },
    ]
    const form = await t.api.createForm({ fields })
    const res = await postParts(form.id, [
      { name: 'name', value: 'Ada' },
      { name: 'photo', filename: 'big.png', type: 'image/png', bytes: binaryBytes(1025) },
      { name: 'notes', value: 'kept' },
    ])
    const page = await expectFormPage(res, 422)
    expect([...page.summaryLinks().keys()]).toEqual(['photo'])
    expectFieldError(page, fields, 'photo')
    expect(page.control('name').attrs.value).toBe('Ada')
    expect(page.control('notes').text).toBe('kept')
    expect(page.control('photo').attrs.value).toBeUndefined()
    expect(await responsesOf(form.id)).toEqual([])
    expect(await storedFileCount()).toBe(0)
  })

  test('a file of exactly max_size is accepted', async () => {
    const form = await t.api.createForm({
      fields: [{ key: 'photo', type: 'file', label: 'Photo', required: true, config: { max_size: 1024 } }],
    })
    const bytes = binaryBytes(1024)
    expectSeeOther(
      await postParts(form.id, [{ name: 'photo', filename: 'exact.png', type: 'image/png', bytes }]),
      form.id,
    )
    const file = await download((await onlyResponse(form.id)).data.photo, t.key)
    expect(Buffer.from(file.bytes).equals(Buffer.from(bytes))).toBe(true)
  })

  test.each([
    ['a wrong extension (accept .pdf, file.txt declared application/pdf)', '.pdf', 'notes.txt', 'application/pdf'],
    ['a wrong declared type (accept image/*, photo.png declared text/plain)', 'image/*', 'photo.png', 'text/plain'],
    [
      'a wrong exact type (accept application/pdf, declared application/zip)',
      'application/pdf',
      'doc.pdf',
      'application/zip',
    ],
  ])('%s is a 422 page next to the file field', async (_name, accept, filename, type) => {
    const fields: FieldDef[] = [
      { key: 'doc', type: 'file', label: 'Document', required: true, config: { accept } },
      { key: 'name', type: 'text', label: 'Name' },
    ]
    const form = await t.api.createForm({ fields })
    const res = await postParts(form.id, [
      { name: 'doc', filename, type, bytes: binaryBytes(64) },
      { name: 'name', value: 'Ada' },
    ])
    const page = await expectFormPage(res, 422)
    expectFieldError(page, fields, 'doc')
    expect(page.control('name').attrs.value).toBe('Ada')
    expect(await storedFileCount()).toBe(0)
    expect(await responsesOf(form.id)).toEqual([])
  })

  test.each([
    ['by extension, case-insensitively (accept .pdf, REPORT.PDF)', '.pdf', 'REPORT.PDF', 'application/octet-stream'],
    ['by wildcard type (accept image/*, image/jpeg)', 'image/*', 'cat.jpg', 'image/jpeg'],
    ['by one of several tokens (accept .doc,application/pdf)', '.doc,application/pdf', 'x.pdf', 'application/pdf'],
    [
      'by declared type when the name has no extension (accept image/*, "scan" declared image/jpeg)',
      'image/*',
      'scan',
      'image/jpeg',
    ],
  ])('a file matching accept %s is stored', async (_name, accept, filename, type) => {
    const form = await t.api.createForm({
      fields: [{ key: 'doc', type: 'file', label: 'Document', required: true, config: { accept } }],
    })
    expectSeeOther(await postParts(form.id, [{ name: 'doc', filename, type, bytes: binaryBytes(64) }]), form.id)
    expect(await storedFileCount()).toBe(1)
  })

  test('an empty file input (filename="" and no bytes) is no answer: 422 when required, left out of data when optional', async () => {
    const requiredFields: FieldDef[] = [
      { key: 'name', type: 'text', label: 'Name' },
      { key: 'doc', type: 'file', label: 'Document', required: true },
    ]
    const required = await t.api.createForm({ fields: requiredFields })
    const refused = await postParts(required.id, [
      { name: 'name', value: 'Ada' },
      { name: 'doc', filename: '', type: 'application/octet-stream', bytes: new Uint8Array() },
    ])
    const page = await expectFormPage(refused, 422)
    expect([...page.summaryLinks().keys()]).toEqual(['doc'])
    expectFieldError(page, requiredFields, 'doc')
    expect(page.control('name').attrs.value).toBe('Ada')
    expect(await responsesOf(required.id)).toEqual([])

    const optional = await t.api.createForm({
      fields: [
        { key: 'name', type: 'text', label: 'Name' },
        { key: 'doc', type: 'file', label: 'Document' },
      ],
    })
    expectSeeOther(
      await postParts(optional.id, [
        { name: 'name', value: 'Ada' },
        { name: 'doc', filename: '', type: 'application/octet-stream', bytes: new Uint8Array() },
      ]),
      optional.id,
    )
    expect((await onlyResponse(optional.id)).data).toEqual({ name: 'Ada' })
    expect(await storedFileCount()).toBe(0)
  })

  test('a file field posted urlencoded (no file at all) is no answer when left empty', async () => {
    const form = await t.api.createForm({
      fields: [
        { key: 'name', type: 'text', label: 'Name' },
        { key: 'doc', type: 'file', label: 'Document' },
      ],
    })
    expectSeeOther(await postForm(t.app, form.id, { name: 'Ada' }), form.id)
    expect((await onlyResponse(form.id)).data).toEqual({ name: 'Ada' })
  })

  test('file fields whose max_size add up to more than 100 MiB are refused at creation (422); exactly 100 MiB is fine', async () => {
    const MiB = 1024 * 1024
    const files = (n: number) =>
      Array.from({ length: n }, (_, i) => ({
        key: `f${i}`,
        type: 'file',
        label: `File ${i}`,
        config: { max_size: 25 * MiB },
      }))
    const tooMuch = await t.api.post('/forms', {
      title: 'Many files',
      fields: [...files(4), { key: 'extra', type: 'file', label: 'Extra', config: { max_size: 1 } }],
    })
    expect(tooMuch.status).toBe(422)
    expect(Array.isArray(tooMuch.body.errors)).toBe(true)
    const exactly = await t.api.post('/forms', { title: 'Many files', fields: files(4) })
    expect(exactly.status).toBe(201)
  })

  test('a post larger than the form allows is a 413 page, and nothing is stored', async () => {
    const form = await t.api.createForm({
      fields: [{ key: 'doc', type: 'file', label: 'Doc', config: { max_size: 1024 } }],
    })
    // More past max_size than is read to refuse the file next to its field (FILE_OVERSIZE_READ).
    const res = await postParts(form.id, [
      { name: 'doc', filename: 'huge.bin', type: 'application/octet-stream', bytes: new Uint8Array(27 * 1024 * 1024) },
    ])
    const page = await expectPage(res, 413)
    expect(page.all('form')).toEqual([])
    expect(await responsesOf(form.id)).toEqual([])
    expect(await storedFileCount()).toBe(0)
    expect((await t.api.get(`/forms/${form.id}`)).body.status).toBe('active')
  })

  test('a text-only form refuses a huge post with a 413 page', async () => {
    const form = await t.api.createForm()
    const page = await expectPage(await postForm(t.app, form.id, { name: 'x'.repeat(3 * 1024 * 1024) }), 413)
    expect(page.all('form')).toEqual([])
    expect(await responsesOf(form.id)).toEqual([])
  })

  test("the limit is the form's own: a form whose file field allows 3 MiB takes a 2 MB upload", async () => {
    const form = await t.api.createForm({
      fields: [{ key: 'doc', type: 'file', label: 'Doc', required: true, config: { max_size: 3 * 1024 * 1024 } }],
    })
    const bytes = binaryBytes(2 * 1000 * 1000)
    expectSeeOther(
      await postParts(form.id, [{ name: 'doc', filename: 'big.bin', type: 'application/octet-stream', bytes }]),
      form.id,
    )
    const file = await download((await onlyResponse(form.id)).data.doc, t.key)
    expect(file.status).toBe(200)
    expect(Buffer.from(file.bytes).equals(Buffer.from(bytes))).toBe(true)
  })

  test('the webhook payload holds the file URL, the same data the API returns', async () => {
    const form = await t.api.createForm({
      callback_url: HOOK,
      fields: [
        { key: 'name', type: 'text', label: 'Name', required: true },
        { key: 'photo', type: 'file', label: 'Photo', required: true, config: { accept: 'image/*' } },
      ],
    })
    expectSeeOther(
      await postParts(form.id, [
        { name: 'name', value: 'Ada' },
        { name: 'photo', filename: 'me.png', type: 'image/png', bytes: binaryBytes(200) },
      ]),
      form.id,
    )
    const response = await onlyResponse(form.id)
    const [row] = (await t.sql('select payload from deliveries')) as Array<{ payload: string }>
    expect(row).not.toBeNull()
    const payload = JSON.parse(row!.payload)
    expect(payload.data).toEqual({
      name: 'Ada',
      photo: `${BASE_URL}/api/v1/forms/${form.id}/responses/${response.id}/files/photo`,
    })
    expect(payload.data).toEqual(response.data)
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
