/**
 * The `page` object of a form (CONTRACT 11): accepted on create, returned
 * exactly as given by create, get and patch (`{}` when none), never in lists,
 * refused with a coded 422 item at every boundary, and described in the
 * OpenAPI document and the MCP create_form tool.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { SUPPORTED_LOCALES } from '../src/i18n/index.ts'
import { createTestContext, type TestContext, validForm } from './utils.ts'

let t: TestContext
beforeAll(async () => {
  t = await createTestContext()
})
afterAll(() => t.close())

const create = (page: unknown) => t.api.post('/forms', validForm({ page }))

/** The one error item of a 422. */
async function refused(page: unknown) {
  const res = await create(page)
  expect({ status: res.status, errors: res.body.errors?.length }).toEqual({ status: 422, errors: 1 })
  return res.body.errors[0] as { path: string; message: string; code: string }
}

describe('page: accepted and returned exactly as given', () => {
  test('create, get and patch return it; lists do not; absent or null is {}', async () => {
    const page = {
      time_zone: 'Europe/Berlin',
      sender: 'Acme HR',
      locale: 'de-AT',
      success_message: 'Danke!\n\nWir melden uns.',
      submit_label: 'Senden',
    }
    const created = await create(page)
    expect(created.status).toBe(201)
    // The keys in the order given, the locale as written (not as matched).
    expect(JSON.stringify(created.body.page)).toBe(JSON.stringify(page))
    const got = await t.api.get(`/forms/${created.body.id}`)
    expect(JSON.stringify(got.body.page)).toBe(JSON.stringify(page))
    const patched = await t.api.patch(`/forms/${created.body.id}`, { expires_at: null })
    expect(patched.body.page).toEqual(page)
    const list = await t.api.get('/forms')
    expect(list.body.every((form: Record<string, unknown>) => !('page' in form))).toBe(true)

    for (const none of [undefined, null, {}]) {
      const made = await t.api.post('/forms', validForm(none === undefined ? {} : { page: none }))
      expect(made.body.page).toEqual({})
      expect((await t.api.get(`/forms/${made.body.id}`)).body.page).toEqual({})
    }
  })

  test('every supported locale, in any case, and tags that match one after likely subtags', async () => {
    for (const locale of [...SUPPORTED_LOCALES, 'DE', 'zh-cn', 'zh-TW', 'zh-HK', 'no', 'nn', 'pt-PT', 'en-GB', 'iw']) {
      const res = await create({ locale })
      expect({ locale, status: res.status }).toEqual({ locale, status: 201 })
    }
  })

  test('texts at their longest, and a success message of nothing', async () => {
    const page = { submit_label: 'b'.repeat(60), success_message: 'm'.repeat(2000), sender: 's'.repeat(100) }
    expect((await create(page)).body.page).toEqual(page)
    expect((await create({ success_message: '' })).body.page).toEqual({ success_message: '' })
    expect((await create({ time_zone: 'UTC' })).status).toBe(201)
  })
})

describe('page: refused, each problem with a code', () => {
  test('a locale no supported language matches: invalid_value naming the supported tags', async () => {
    for (const locale of ['xx', 'tlh', 'not a tag', 'x'.repeat(65)]) {
      const error = await refused({ locale })
      expect(error.path).toBe('/page/locale')
      expect(['invalid_value', 'too_long']).toContain(error.code)
      if (error.code === 'invalid_value') for (const tag of SUPPORTED_LOCALES) expect(error.message).toContain(tag)
    }
  })

  test('an unknown time zone: invalid_value', async () => {
    for (const time_zone of ['Mars/Olympus_Mons', 'Europe/Berlinn', 'GMT+25']) {
      expect(await refused({ time_zone })).toEqual({
        path: '/page/time_zone',
        message: expect.stringContaining(time_zone),
        code: 'invalid_value',
      })
    }
  })

  test('lengths: one past the longest is too_long; empty or blank is too_short', async () => {
    expect(await refused({ submit_label: 'b'.repeat(61) })).toMatchObject({
      path: '/page/submit_label',
      code: 'too_long',
    })
    expect(await refused({ success_message: 'm'.repeat(2001) })).toMatchObject({
      path: '/page/success_message',
      code: 'too_long',
    })
    expect(await refused({ sender: 's'.repeat(101) })).toMatchObject({ path: '/page/sender', code: 'too_long' })
    expect(await refused({ submit_label: '' })).toMatchObject({ path: '/page/submit_label', code: 'too_short' })
    expect(await refused({ sender: '   ' })).toMatchObject({ path: '/page/sender', code: 'too_short' })
    expect(await refused({ locale: '' })).toMatchObject({ path: '/page/locale', code: 'too_short' })
  })

  test('an unknown key: unknown_key; a value not a string: invalid_type; page not an object: invalid_type', async () => {
    expect(await refused({ theme: 'dark' })).toMatchObject({ path: '/page/theme', code: 'unknown_key' })
    expect(await refused({ sender: 7 })).toMatchObject({ path: '/page/sender', code: 'invalid_type' })
    expect(await refused({ time_zone: null })).toMatchObject({ path: '/page/time_zone', code: 'invalid_type' })
    for (const page of ['de', [], 3, true])
      expect(await refused(page)).toMatchObject({ path: '/page', code: 'invalid_type' })
  })

  test('control characters, as in every other text: control_character', async () => {
    expect(await refused({ sender: 'Acme\u0007' })).toMatchObject({ path: '/page/sender', code: 'control_character' })
    // Line breaks and tabs are text, not control characters.
    expect((await create({ success_message: 'One.\r\n\tTwo.' })).status).toBe(201)
  })

  test('with other problems of the body, all are listed', async () => {
    const res = await t.api.post('/forms', { ...validForm({ page: { sender: '' } }), title: '' })
    expect(res.status).toBe(422)
    expect(res.body.errors.map((e: { path: string }) => e.path).sort()).toEqual(['/page/sender', '/title'])
  })

  test('PATCH does not change it: 422 unknown key, the page as it was', async () => {
    const created = await create({ sender: 'Acme' })
    const res = await t.api.patch(`/forms/${created.body.id}`, { page: { sender: 'Other' } })
    expect(res.status).toBe(422)
    expect(res.body.errors[0].path).toBe('/page')
    expect((await t.api.get(`/forms/${created.body.id}`)).body.page).toEqual({ sender: 'Acme' })
  })
})

describe('page: described where clients look', () => {
  test('the OpenAPI document: CreateForm takes it, Form and FormDetail return it', async () => {
    const doc = (await t.api.get('/openapi.json')).body
    const text = JSON.stringify(doc)
    expect(text).toContain('"PageSettings"')
    for (const key of ['locale', 'submit_label', 'success_message', 'sender', 'time_zone'])
      expect(text).toContain(`"${key}"`)
  })

  test('the MCP create_form tool takes it', async () => {
    const res = await t.app.handle(
      new Request('http://intake.test/mcp', {
        method: 'POST',
        headers: {
          authorization: `Bearer ${t.key}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      }),
    )
    const body = (await res.json()) as {
      result: { tools: Array<{ name: string; inputSchema: { properties: Record<string, unknown> } }> }
    }
    const tool = body.result.tools.find((candidate: { name: string }) => candidate.name === 'create_form')
    const page = tool!.inputSchema.properties.page
    expect(JSON.stringify(page)).toContain('time_zone')
    expect(JSON.stringify(page)).toContain('additionalProperties')
  })
})
