/**
 * The human's page (CONTRACT 6): everything the API client wrote is escaped and
 * round-trips exactly, and every page carries the CONTRACT 6 headers.
 */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import type { Page } from './html.ts'
import {
  AMP,
  BOLD,
  expectFormPage,
  expectPage,
  expectSeeOther,
  expectThankYou,
  HOOK,
  HOVER,
  multipart,
  pageRequests,
  SCRIPT,
  TRICKY_VALUE,
} from './page-fixtures.ts'
import {
  createTestContext,
  EVERY_TYPE_FIELDS,
  openPage,
  postForm,
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
const { postRaw, onlyResponse } = pageRequests(() => t)

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
