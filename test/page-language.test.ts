/**
 * The page in the person's language (CONTRACT 11): how a language is chosen,
 * that every built-in word follows it, and the page's own words (sender,
 * deadline, button, success message, descriptions, marks).
 */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { catalogOf } from '../src/i18n/catalogs/index.ts'
import { type Locale, matchLocale, negotiateLocale, SUPPORTED_LOCALES, translator } from '../src/i18n/index.ts'
import { type Page, parsePage } from './html.ts'
import { createTestContext, openPage, postForm, send, type TestContext, UNKNOWN_ID } from './utils.ts'

let t: TestContext
beforeEach(async () => {
  t = await createTestContext()
})
afterEach(() => t.close())

const words = (locale: Locale) => catalogOf(locale)
const pageIn = async (formId: string, acceptLanguage?: string) => {
  const response = await openPage(
    t.app,
    formId,
    acceptLanguage === undefined ? {} : { 'accept-language': acceptLanguage },
  )
  return { response, page: await parsePage(response.text) }
}
const htmlLanguage = (page: Page) => ({ lang: page.one('html').attrs.lang, dir: page.one('html').attrs.dir })
const button = (page: Page) => page.one('button').text.trim()

describe('a tag names a supported language as CONTRACT 11 matches it', () => {
  test.each([
    ['de-AT', 'de'],
    ['DE', 'de'],
    ['zh', 'zh-Hans'],
    ['zh-CN', 'zh-Hans'],
    ['zh-SG', 'zh-Hans'],
    ['zh-TW', 'zh-Hant'],
    ['zh-HK', 'zh-Hant'],
    ['zh-hant', 'zh-Hant'],
    ['no', 'nb'],
    ['nn', 'nb'],
    ['nb-NO', 'nb'],
    ['pt', 'pt'],
    ['pt-PT', 'pt'],
    ['pt-AO', 'pt'],
    ['pt-BR', 'pt-BR'],
    ['pt-br', 'pt-BR'],
    ['en-GB', 'en'],
    ['ar-EG', 'ar'],
    ['he-IL', 'he'],
    ['iw', 'he'],
    ['ja-JP', 'ja'],
    ['sr', undefined],
    ['xx', undefined],
    ['', undefined],
    ['not a tag', undefined],
    ['de-', undefined],
  ])('%p is %p', (tag, locale) => {
    expect(matchLocale(tag)).toBe(locale as Locale | undefined)
  })

  test.each([
    ['fr-CH, fr;q=0.9, en;q=0.8, de;q=0.7, *;q=0.5', 'fr'],
    ['xx, de;q=0.1, ja;q=0.5', 'ja'],
    ['ja;q=0, de', 'de'],
    ['de;q=0.5, ar;q=0.5', 'de'],
    ['de;q=0.500, ar;q=0.501', 'ar'],
    ['de;q=oops, ar', 'ar'],
    ['*', 'en'],
    ['', 'en'],
    ['tlh, xx-YY', 'en'],
    [' ZH-tw ; q=1 ', 'zh-Hant'],
    [`${'xx,'.repeat(1000)}de`, 'en'],
  ])('Accept-Language %p picks %p', (header, locale) => {
    expect(negotiateLocale(header)).toBe(locale as Locale)
  })
})

describe('the page speaks the chosen language', () => {
  test('without page.locale it follows Accept-Language (q-values honoured), says so in Vary, and falls back to English', async () => {
    const form = await t.api.createForm({ fields: [{ key: 'name', type: 'text', label: 'Name', required: true }] })
    const german = await pageIn(form.id, 'xx, de-AT;q=0.9, en;q=0.5')
    expect(htmlLanguage(german.page)).toEqual({ lang: 'de', dir: 'ltr' })
    expect(button(german.page)).toBe(words('de')['page.submit'] as string)
    expect(german.response.headers.get('vary')).toContain('Accept-Language')
    // Rendered pages are kept per language: the next person reads their own.
    const french = await pageIn(form.id, 'fr')
    expect(htmlLanguage(french.page).lang).toBe('fr')
    expect(button(french.page)).toBe(words('fr')['page.submit'] as string)
    const none = await pageIn(form.id)
    expect(htmlLanguage(none.page)).toEqual({ lang: 'en', dir: 'ltr' })
    expect(button(none.page)).toBe('Send answer')
  })

  test('right-to-left languages get dir="rtl"; what the API client wrote gets dir="auto"', async () => {
    const form = await t.api.createForm({
      title: 'Visit',
      description: 'Bring your papers.',
      fields: [
        { key: 'name', type: 'text', label: 'Name', required: true, config: { placeholder: 'Ada' } },
        { key: 'meal', type: 'select', label: 'Meal', config: { options: ['fish', 'veg'] } },
      ],
    })
    for (const locale of ['ar', 'he'] as const) {
      const { page } = await pageIn(form.id, locale)
      expect(htmlLanguage(page)).toEqual({ lang: locale, dir: 'rtl' })
    }
    const { page } = await pageIn(form.id, 'ar')
    expect(page.one('h1').attrs.dir).toBe('auto')
    expect(
      page
        .all('p')
        .filter((p) => p.text === 'Bring your papers.')
        .map((p) => p.attrs.dir),
    ).toEqual(['auto'])
    expect(page.withText('Name').some((node) => node.attrs.dir === 'auto')).toBe(true)
    expect(page.control('name').attrs.dir).toBe('auto')
    expect(
      page
        .all('label')
        .filter((l) => l.text === 'fish')
        .map((l) => l.attrs.dir),
    ).toEqual(['auto'])
  })

  test('page.locale wins over Accept-Language, and the page does not vary by it', async () => {
    const form = await t.api.createForm({
      page: { locale: 'zh-TW' },
      fields: [{ key: 'name', type: 'text', label: 'Name' }],
    })
    const { response, page } = await pageIn(form.id, 'de, en;q=0.5')
    expect(htmlLanguage(page)).toEqual({ lang: 'zh-Hant', dir: 'ltr' })
    expect(button(page)).toBe(words('zh-Hant')['page.submit'] as string)
    expect(response.headers.get('vary') ?? '').not.toContain('Accept-Language')
  })

  test('the not-found page, which has no form, follows Accept-Language in every language', async () => {
    for (const locale of SUPPORTED_LOCALES) {
      const { response, page } = await pageIn(UNKNOWN_ID, `${locale}, en;q=0.1`)
      expect(response.status).toBe(404)
      expect(htmlLanguage(page).lang).toBe(locale)
      expect(page.one('h1').text).toBe(words(locale)['status.not_found.heading'] as string)
      expect(page.one('title').text).toBe(words(locale)['status.not_found.heading'] as string)
    }
  })

  test('a cancelled form says so in its language', async () => {
    const form = await t.api.createForm({
      page: { locale: 'ja' },
      fields: [{ key: 'name', type: 'text', label: 'Name' }],
    })
    expect((await t.api.patch(`/forms/${form.id}`, { status: 'cancelled' })).status).toBe(200)
    const { response, page } = await pageIn(form.id, 'en')
    expect(response.status).toBe(410)
    expect(page.one('h1').text).toBe(words('ja')['status.cancelled.heading'] as string)
  })

  test("a refused answer's page: title, summary and each message in the language, worded for the field's type", async () => {
    const form = await t.api.createForm({
      page: { locale: 'de' },
      fields: [
        { key: 'name', type: 'text', label: 'Vollständiger Name', required: true },
        { key: 'mail', type: 'email', label: 'E-Mail', required: true },
        { key: 'day', type: 'date', label: 'Tag', config: { max: '2026-12-31' } },
        { key: 'count', type: 'number', label: 'Anzahl', config: { min: 2 } },
      ],
    })
    const response = await postForm(t.app, form.id, { name: '', mail: 'nope', day: '2027-01-05', count: '1' })
    expect(response.status).toBe(422)
    const page = await parsePage(response.text)
    const de = translator('de')
    expect(page.one('title').text).toBe(de.t('page.title_error', { title: 'Travel preferences' }))
    expect(page.one('h2').text).toBe(de.t('summary.title'))
    const messages = Object.fromEntries(
      ['name', 'mail', 'day', 'count'].map((key) => [
        key,
        page.byId(`field-${key}-error`).text.replace(de.t('error.prefix'), '').trim(),
      ]),
    )
    expect(messages).toEqual({
      name: de.t('error.required.text'),
      mail: de.t('error.email'),
      day: de.t('error.date_too_late', { date: { date: '2026-12-31' } }),
      count: de.t('error.too_small', { min: 2 }),
    })
    expect(messages.day).toContain('Dezember 2026')
    // The summary links each field's own message to its field (GOV.UK's summary).
    const links = page.summaryLinks()
    expect([...links.keys()]).toEqual(['name', 'mail', 'day', 'count'])
    expect(links.get('mail')!.text).toBe(de.t('error.email'))
    // The API's own message stays English.
    const json = await send(t.app, 'POST', `/f/${form.id}`, { body: { name: '', mail: 'nope' } })
    expect((json.body as { errors: Array<{ message: string }> }).errors.map((e) => e.message).join(' ')).not.toContain(
      de.t('error.email'),
    )
  })

  test('the summary takes focus without a script, and the form leaves every check to the server', async () => {
    const form = await t.api.createForm({ fields: [{ key: 'name', type: 'text', label: 'Name', required: true }] })
    const fresh = await pageIn(form.id)
    expect('novalidate' in fresh.page.one('form').attrs).toBe(true)
    const page = await parsePage((await postForm(t.app, form.id, { name: '' })).text)
    const summary = page.nodes.find((n) => n.attrs.class === 'error-summary')!
    expect(summary.attrs.tabindex).toBe('-1')
    expect('autofocus' in summary.attrs).toBe(true)
  })

  test('hints write dates and numbers for the language, never as YYYY-MM-DD prose', async () => {
    const form = await t.api.createForm({
      fields: [
        { key: 'day', type: 'date', label: 'Day', config: { min: '2026-01-01', max: '2026-12-31' } },
        { key: 'free', type: 'date', label: 'Any day' },
        { key: 'amount', type: 'number', label: 'Amount', config: { min: 1000, max: 2500.5 } },
      ],
    })
    for (const locale of ['de', 'ja', 'ar', 'en'] as const) {
      const tr = translator(locale)
      const { page } = await pageIn(form.id, locale)
      expect(page.byId('field-day-hint').text).toBe(
        tr.t('hint.date_between', { min: { date: '2026-01-01' }, max: { date: '2026-12-31' } }),
      )
      expect(page.byId('field-amount-hint').text).toBe(tr.t('hint.number_between', { min: 1000, max: 2500.5 }))
      expect(page.hasId('field-free-hint')).toBe(false)
      expect(page.bodyText).not.toContain('YYYY')
    }
    expect((await pageIn(form.id, 'de')).page.byId('field-amount-hint').text).toContain('2.500,5')
  })
})

describe("the page's own words", () => {
  test('submit_label, sender and the deadline in time_zone, near the top', async () => {
    // A week from now at 09:00 UTC, which is 18:00 in Tokyo.
    const expiresAt = `${new Date(Date.now() + 7 * 86_400_000).toISOString().slice(0, 10)}T09:00:00Z`
    const form = await t.api.createForm({
      page: { submit_label: 'Approve the release', sender: 'Release bot (Acme)', time_zone: 'Asia/Tokyo' },
      expires_in: null,
      fields: [{ key: 'ok', type: 'checkbox', label: 'I approve' }],
    })
    expect((await t.api.patch(`/forms/${form.id}`, { expires_at: expiresAt })).status).toBe(200)
    const { page } = await pageIn(form.id, 'ja')
    expect(button(page)).toBe('Approve the release')
    expect(page.one('button').attrs.dir).toBe('auto')
    const ja = translator('ja')
    const sender = page.nodes.find((n) => n.attrs.class === 'sender')!
    expect(sender.text).toBe(ja.t('page.asked_by', { sender: 'Release bot (Acme)' }))
    const deadline = page.nodes.find((n) => n.attrs.class === 'deadline')!
    expect(deadline.text).toBe(ja.t('page.answer_by', { deadline: ja.dateTime(Date.parse(expiresAt), 'Asia/Tokyo') }))
    expect(deadline.text).toContain('18:00')
    // Both come before the title's first field.
    expect(sender.start).toBeLessThan(page.one('form').start)
    expect(deadline.start).toBeLessThan(page.one('form').start)
  })

  test('without a deadline or sender, neither line is shown; UTC is the default zone', async () => {
    const never = await t.api.createForm({ expires_in: null, fields: [{ key: 'a', type: 'text', label: 'A' }] })
    const { page } = await pageIn(never.id)
    expect(page.nodes.some((n) => n.attrs.class === 'deadline' || n.attrs.class === 'sender')).toBe(false)
    const soon = await t.api.createForm({ expires_in: '1h', fields: [{ key: 'a', type: 'text', label: 'A' }] })
    const deadline = (await pageIn(soon.id)).page.nodes.find((n) => n.attrs.class === 'deadline')!
    expect(deadline.text).toContain('UTC')
  })

  test('descriptions keep paragraphs and line breaks, make "- " lines a list and URLs links; nothing else is markup', async () => {
    const description =
      'First <b>paragraph</b>\nsecond line & more.\n\n- one\n- two, see https://example.com/a?b=1&c=2).\n\nLast: http://example.org.'
    const form = await t.api.createForm({
      description,
      fields: [{ key: 'a', type: 'text', label: 'A', description: 'Read https://example.net first' }],
    })
    const { page, response } = await pageIn(form.id)
    expect(response.text).not.toContain('<b>')
    const rich = page.nodes.find((n) => n.attrs.class === 'rich-text description')!
    const paragraphs = page.within(rich, 'p')
    expect(paragraphs[0]!.text).toBe('First <b>paragraph</b>second line & more.')
    expect(page.within(paragraphs[0]!, 'br')).toHaveLength(1)
    expect(page.within(rich, 'li').map((li) => li.text.replace(' (opens in a new tab)', ''))).toEqual([
      'one',
      'two, see https://example.com/a?b=1&c=2).',
    ])
    const links = page.within(rich, 'a')
    expect(links.map((a) => a.attrs.href)).toEqual(['https://example.com/a?b=1&c=2', 'http://example.org'])
    for (const link of links) {
      expect(link.attrs.target).toBe('_blank')
      expect(link.attrs.rel).toBe('noopener noreferrer nofollow')
    }
    expect(page.byId('field-a-hint').text).toContain('https://example.net')
    expect(page.within(page.byId('field-a-hint'), 'a').map((a) => a.attrs.href)).toEqual(['https://example.net'])
  })

  test('the smaller set of fields is marked: "(optional)" when most are required, "(required)" when most are optional', async () => {
    const mostlyRequired = await t.api.createForm({
      fields: [
        { key: 'a', type: 'text', label: 'A', required: true },
        { key: 'b', type: 'text', label: 'B', required: true },
        { key: 'c', type: 'text', label: 'C' },
      ],
    })
    let page = (await pageIn(mostlyRequired.id)).page
    expect(['a', 'b', 'c'].map((key) => page.label(key).text)).toEqual(['A', 'B', 'C (optional)'])
    const mostlyOptional = await t.api.createForm({
      fields: [
        { key: 'a', type: 'text', label: 'A', required: true },
        { key: 'b', type: 'text', label: 'B' },
        { key: 'c', type: 'text', label: 'C' },
      ],
    })
    page = (await pageIn(mostlyOptional.id, 'de')).page
    expect(['a', 'b', 'c'].map((key) => page.label(key).text)).toEqual([
      `A ${translator('de').t('mark.required')}`,
      'B',
      'C',
    ])
  })
})

describe("a field's config.error_message", () => {
  const TYPES: Array<Record<string, unknown>> = [
    { type: 'text' },
    { type: 'textarea' },
    { type: 'email' },
    { type: 'number' },
    { type: 'select', config: { options: ['a', 'b'] } },
    { type: 'checkbox' },
    { type: 'date' },
    { type: 'file' },
  ]

  test.each(TYPES.map((field) => [field.type as string, field]))(
    '%s takes it, 1 to 300 characters',
    async (_type, field) => {
      const create = (message: unknown) =>
        t.api.post('/forms', {
          title: 'T',
          fields: [{ key: 'f', label: 'F', ...field, config: { ...(field.config as object), error_message: message } }],
        })
      expect((await create('x')).status).toBe(201)
      expect((await create('x'.repeat(300))).status).toBe(201)
      for (const bad of ['', 'x'.repeat(301), 7, null]) {
        const refused = await create(bad)
        expect(refused.status).toBe(422)
        expect((refused.body as { errors: Array<{ path: string }> }).errors.map((e) => e.path)).toEqual([
          '/fields/0/config/error_message',
        ])
      }
    },
  )

  test("replaces the page's message for a missing and for an invalid value; the API's message stays the built-in English", async () => {
    const form = await t.api.createForm({
      page: { locale: 'fr' },
      fields: [
        {
          key: 'ref',
          type: 'text',
          label: 'Référence',
          required: true,
          config: { pattern: '[A-Z]{3}-[0-9]{4}', error_message: 'Saisissez la référence du dossier, comme ABC-1234' },
        },
        { key: 'other', type: 'text', label: 'Autre', required: true },
      ],
    })
    for (const value of ['', 'abc']) {
      const page = await parsePage((await postForm(t.app, form.id, { ref: value, other: '' })).text)
      expect(page.byId('field-ref-error').text).toContain('Saisissez la référence du dossier, comme ABC-1234')
      expect(page.byId('field-other-error').text).toContain(translator('fr').t('error.required.text'))
    }
    const json = await send(t.app, 'POST', `/f/${form.id}`, { body: { ref: 'abc', other: 'x' } })
    expect(json.status).toBe(422)
    const [problem] = (json.body as { errors: Array<{ path: string; message: string; code: string }> }).errors
    expect(problem).toEqual({ path: '/ref', message: 'Does not match the required format', code: 'pattern' })
  })
})
