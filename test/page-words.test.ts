/**
 * What the page says and how (issue 26, points 5, 7 and 8; CONTRACT 14): no
 * silent truncation, the error summary in the fields' own words, the sender as
 * their claim, a kept file said together with the empty file control, titles
 * that name the form, phone and country autofill, sizes that never break or
 * turn around, and e-mail addresses as links. In-process, over HTTP.
 */
import { describe, expect, test } from 'bun:test'
import { catalogOf } from '../src/i18n/catalogs/index.ts'
import { SUPPORTED_LOCALES, translator } from '../src/i18n/index.ts'
import { collapsed, pageText, parsePage } from './html.ts'
import { contextsPerTest, openPage, postForm, submit, type TestContext } from './utils.ts'

const contexts = contextsPerTest()
const en = translator('en')

async function formWith(t: TestContext, fields: object[], extra: Record<string, unknown> = {}) {
  return t.api.createForm({ title: 'Trip to Zürich', fields, ...extra })
}

/** The text of a field's hint and of its error message (the hidden "Error:" left out). */
async function fieldWords(html: string, key: string) {
  const page = await parsePage(html)
  const hint = page.hasId(`field-${key}-hint`) ? collapsed(page.byId(`field-${key}-hint`).text) : undefined
  const error = page.hasId(`field-${key}-error`) ? collapsed(page.byId(`field-${key}-error`).text) : undefined
  return { page, hint, error }
}

// ------------------------------------------------------------ 1. no silent truncation

describe('a text over its limit is kept and refused in words, never cut', () => {
  const LONG = 'a'.repeat(66)

  test('no control carries maxlength; the hint states a limit the API client set', async () => {
    const t = await contexts.create()
    const form = await formWith(t, [
      { key: 'code', type: 'text', label: 'Code', config: { max_length: 40 } },
      { key: 'story', type: 'textarea', label: 'Story', config: { min_length: 10, max_length: 200 } },
      { key: 'name', type: 'text', label: 'Name' },
      { key: 'mail', type: 'email', label: 'Email' },
    ])
    const res = await openPage(t.app, form.id)
    const page = await parsePage(res.text)
    for (const key of ['code', 'story', 'name', 'mail'])
      expect({ key, maxlength: page.control(key).attrs.maxlength }).toEqual({ key, maxlength: undefined })
    expect((await fieldWords(res.text, 'code')).hint).toBe('Up to 40 characters.')
    expect((await fieldWords(res.text, 'story')).hint).toBe('From 10 to 200 characters.')
    // The roomy defaults (1,000 and 10,000) are not stated under every question.
    expect((await fieldWords(res.text, 'name')).hint).toBeUndefined()
  })

  test('66 characters where 40 are allowed: a 422 saying the limit and by how many, the 66 shown back', async () => {
    const t = await contexts.create()
    const form = await formWith(t, [{ key: 'code', type: 'text', label: 'Code', config: { max_length: 40 } }])
    const res = await postForm(t.app, form.id, { code: LONG })
    expect(res.status).toBe(422)
    const { page, error } = await fieldWords(res.text, 'code')
    expect(error).toBe(`${en.t('error.prefix')} Enter 40 characters or fewer. You have 26 characters too many`)
    expect(page.control('code').attrs.value).toBe(LONG)
    // Nothing was recorded, and the API says the same numbers.
    expect((await t.api.get(`/forms/${form.id}/responses`)).body).toEqual([])
    const json = await submit(t.app, form.id, { code: LONG })
    expect(json.status).toBe(422)
    expect(json.body.errors).toEqual([
      { path: '/code', code: 'too_long', message: 'Must be at most 40 characters; this is 26 too many' },
    ])
  })

  test('a textarea counts a line break once, as the person sees it', async () => {
    const t = await contexts.create()
    const form = await formWith(t, [{ key: 'story', type: 'textarea', label: 'Story', config: { max_length: 5 } }])
    const res = await postForm(t.app, form.id, { story: 'abc\r\ndef' })
    expect(res.status).toBe(422)
    expect((await fieldWords(res.text, 'story')).error).toContain('You have 2 characters too many')
  })

  test("the numbers are worded with each language's plural forms", async () => {
    const t = await contexts.create()
    const form = await formWith(t, [{ key: 'code', type: 'text', label: 'Kod', config: { max_length: 5 } }], {
      page: { locale: 'pl' },
    })
    const said = async (length: number) =>
      (await fieldWords((await postForm(t.app, form.id, { code: 'x'.repeat(length) })).text, 'code')).error
    expect(await said(6)).toContain('Masz 1 znak za dużo')
    expect(await said(8)).toContain('Masz 3 znaki za dużo')
    expect(await said(10)).toContain('Masz 5 znaków za dużo')
    expect(await said(10)).toContain('Wpisz maksymalnie 5 znaków')
    for (const locale of SUPPORTED_LOCALES) {
      const message = translator(locale).t('error.too_long_by', { limit: 'LIMIT', count: 26 })
      expect({ locale, limit: message.includes('LIMIT'), count: /26|٢٦/.test(message) }).toEqual({
        locale,
        limit: true,
        count: true,
      })
    }
  })
})

// ------------------------------------------------------------------ 2. the summary

describe('the error summary', () => {
  test('repeats each field\'s own message, never "Label: message", and cuts no label', async () => {
    const label = 'What helped you most when you were looking for somewhere to live in the last two years?'
    const t = await contexts.create()
    const form = await formWith(t, [
      {
        key: 'helped',
        type: 'select',
        label,
        config: { multiple: true, max_selected: 3, options: ['a', 'b', 'c', 'd', 'e'] },
      },
      { key: 'name', type: 'text', label: 'Your name', required: true },
    ])
    const res = await postForm(t.app, form.id, [
      ['helped', 'a'],
      ['helped', 'b'],
      ['helped', 'c'],
      ['helped', 'd'],
    ])
    expect(res.status).toBe(422)
    const page = await parsePage(res.text)
    const links = page.summaryLinks()
    expect(collapsed(links.get('helped')!.text)).toBe('Select no more than 3 options')
    expect(collapsed(links.get('name')!.text)).toBe('Enter an answer')
    expect(res.text).not.toContain('…')
    expect(collapsed(page.one('legend').text)).toContain(label)
  })
})

// ------------------------------------------------------------- 6. the sender's claim

describe('page.sender reads as their claim in every language', () => {
  test('no language writes it as a label ("Sender: X"), which reads as a fact', () => {
    for (const locale of SUPPORTED_LOCALES) {
      const template = catalogOf(locale)['page.asked_by'] as string
      expect({ locale, label: /[:：]\s*\{sender\}/.test(template) }).toEqual({ locale, label: false })
    }
  })

  test('the Polish and Hebrew pages say who asks, not "Nadawca:" or "מאת:"', async () => {
    const t = await contexts.create()
    for (const [locale, word] of [
      ['pl', 'Prośba od'],
      ['he', 'לבקשת'],
    ] as const) {
      const form = await formWith(t, [{ key: 'name', type: 'text', label: 'Name' }], {
        page: { locale, sender: 'Acme Payroll' },
      })
      const text = pageText((await openPage(t.app, form.id)).text)
      expect(text).toContain(`${word} Acme Payroll`)
    }
  })
})

// ------------------------------------------------------------------ 7. a kept file

describe('a file kept across a 422', () => {
  test('the note reads together with the empty file control under it', async () => {
    const t = await contexts.create()
    const form = await formWith(t, [
      { key: 'name', type: 'text', label: 'Name', required: true },
      { key: 'doc', type: 'file', label: 'Document' },
    ])
    const body = new FormData()
    body.set('name', '')
    body.set('doc', new File(['%PDF kept'], 'report.pdf', { type: 'application/pdf' }))
    const res = await postForm(t.app, form.id, body)
    expect(res.status).toBe(422)
    const text = pageText(res.text)
    expect(text).toContain(
      'You already added report.pdf (9 bytes). It will be sent with your answer unless you remove it or choose another file below.',
    )
    expect(text).toContain('You do not need to choose it again. To send a different file instead, choose it here.')
    for (const locale of SUPPORTED_LOCALES) {
      const kept = translator(locale).t('file.kept', { name: 'X', size: { bytes: 9 } })
      const replace = translator(locale).t('file.replace')
      // Both sentences in every language say more than they did: that the kept file goes unless removed or replaced, and that it need not be chosen again.
      expect({
        locale,
        kept: kept.length > 60 || /[\u3040-\u9fff\uac00-\ud7a3]/.test(kept),
        replace: replace.length > 30 || /[\u3040-\u9fff\uac00-\ud7a3]/.test(replace),
      }).toEqual({ locale, kept: true, replace: true })
    }
  })
})

// -------------------------------------------------------------------- 8. titles

describe("the receipt's and the answered page's titles name the form", () => {
  test('"Answer sent: <title>" right after, "Already answered: <title>" later', async () => {
    const t = await contexts.create()
    const form = await formWith(t, [{ key: 'name', type: 'text', label: 'Name' }])
    const sent = await postForm(t.app, form.id, { name: 'Ada' })
    expect(sent.status).toBe(303)
    const cookie = (sent.headers.get('set-cookie') ?? '').split(';')[0]!
    const receipt = await parsePage((await openPage(t.app, form.id, { cookie })).text)
    expect(receipt.one('title').text).toBe('Answer sent: Trip to Zürich')
    const later = await parsePage((await openPage(t.app, form.id)).text)
    expect(later.one('title').text).toBe('Already answered: Trip to Zürich')
    for (const locale of SUPPORTED_LOCALES) {
      for (const key of ['receipt.title', 'answered.title'] as const) {
        expect({ locale, key, named: translator(locale).t(key, { title: 'FORM' }).includes('FORM') }).toEqual({
          locale,
          key,
          named: true,
        })
      }
    }
  })
})

// ----------------------------------------------------------------- 9. autofill

describe('autocomplete: phone numbers and choices', () => {
  test('a text field with a tel token is type="tel" (the phone keypad)', async () => {
    const t = await contexts.create()
    const tokens = [
      'tel',
      'tel-national',
      'tel-country-code',
      'tel-area-code',
      'tel-local',
      'tel-extension',
      'shipping tel',
    ]
    const form = await formWith(t, [
      ...tokens.map((token, i) => ({
        key: `p${i}`,
        type: 'text',
        label: `Phone ${i}`,
        config: { autocomplete: token },
      })),
      { key: 'name', type: 'text', label: 'Name', config: { autocomplete: 'name' } },
    ])
    const page = await parsePage((await openPage(t.app, form.id)).text)
    tokens.forEach((token, i) =>
      expect({
        token,
        type: page.control(`p${i}`).attrs.type,
        autocomplete: page.control(`p${i}`).attrs.autocomplete,
      }).toEqual({ token, type: 'tel', autocomplete: token }),
    )
    expect(page.control('name').attrs.type).toBe('text')
  })

  test('a select takes a token that fits a choice, on its drop-down', async () => {
    const t = await contexts.create()
    const form = await formWith(t, [
      {
        key: 'country',
        type: 'select',
        label: 'Country',
        config: {
          autocomplete: 'country',
          options: [
            { value: 'FR', label: 'France' },
            { value: 'DE', label: 'Germany' },
          ],
        },
      },
      {
        key: 'sex',
        type: 'select',
        label: 'Sex',
        config: { autocomplete: 'sex', display: 'dropdown', options: ['Female', 'Male'] },
      },
    ])
    const page = await parsePage((await openPage(t.app, form.id)).text)
    expect({ tag: page.control('country').tag, autocomplete: page.control('country').attrs.autocomplete }).toEqual({
      tag: 'select',
      autocomplete: 'country',
    })
    expect(page.control('sex').attrs.autocomplete).toBe('sex')
  })

  test('a token that does not fit is a 422, as for text', async () => {
    const t = await contexts.create()
    const refused = async (field: object) => {
      const res = await t.api.post('/forms', { title: 'x', fields: [field] })
      return { status: res.status, paths: (res.body.errors ?? []).map((e: { path: string }) => e.path) }
    }
    const expected = { status: 422, paths: ['/fields/0/config/autocomplete'] }
    expect(
      await refused({ key: 'a', type: 'select', label: 'A', config: { autocomplete: 'email', options: ['x'] } }),
    ).toEqual(expected)
    expect(
      await refused({
        key: 'a',
        type: 'select',
        label: 'A',
        config: { autocomplete: 'country', multiple: true, options: ['x'] },
      }),
    ).toEqual(expected)
    expect(
      await refused({
        key: 'a',
        type: 'select',
        label: 'A',
        config: { autocomplete: 'country', display: 'radio', options: ['x'] },
      }),
    ).toEqual(expected)
    expect(await refused({ key: 'a', type: 'textarea', label: 'A', config: { autocomplete: 'tel' } })).toEqual(expected)
    expect(await refused({ key: 'a', type: 'text', label: 'A', config: { autocomplete: 'tel-bogus' } })).toEqual(
      expected,
    )
  })
})

// ---------------------------------------------------------------------- 10. sizes

describe('a size reads right in each language and never breaks', () => {
  const MiB = 1024 * 1024

  test('number and unit are held together in every language; right-to-left ones are isolated', () => {
    for (const locale of SUPPORTED_LOCALES) {
      const t = translator(locale)
      for (const bytes of [500, 1024, 1536, 5 * MiB]) {
        const size = t.size(bytes)
        // No plain space (a line may break there) anywhere in it, and no digit straight against a letter without a joiner.
        expect({ locale, bytes, breakable: / /.test(size) || /\d\p{L}/u.test(size) }).toEqual({
          locale,
          bytes,
          breakable: false,
        })
        expect({ locale, bytes, isolated: size.startsWith('\u2067') && size.endsWith('\u2069') }).toEqual({
          locale,
          bytes,
          isolated: t.dir === 'rtl',
        })
      }
    }
    // Hebrew: "1 kB", the number first and a space, as its megabytes.
    expect(translator('he').size(1024)).toBe('\u20671\u00a0kB\u2069')
    expect(translator('en').size(5 * MiB)).toBe('5\u00a0MB')
  })

  test('the Japanese file hint keeps "5 MB" on one line; an Arabic receipt lays its size out right to left', async () => {
    const t = await contexts.create()
    const form = await formWith(
      t,
      [{ key: 'doc', type: 'file', label: '書類', config: { max_size: 5 * MiB, accept: '.pdf' } }],
      { page: { locale: 'ja' } },
    )
    const { hint } = await fieldWords((await openPage(t.app, form.id)).text, 'doc')
    expect((await parsePage((await openPage(t.app, form.id)).text)).byId('field-doc-hint').text).toContain('5\u00a0MB')
    expect(hint).toContain('（最大5 MB）')

    const arabic = await formWith(t, [{ key: 'doc', type: 'file', label: 'ملف' }], { page: { locale: 'ar' } })
    const body = new FormData()
    body.set('doc', new File(['x'.repeat(2048)], 'photo.jpg', { type: 'image/jpeg' }))
    const sent = await postForm(t.app, arabic.id, body)
    expect(sent.status).toBe(303)
    const receipt = await parsePage(
      (await openPage(t.app, arabic.id, { cookie: (sent.headers.get('set-cookie') ?? '').split(';')[0]! })).text,
    )
    const answer = receipt.nodes.find((n) => n.attrs.class === 'receipt-answer')!
    // The line takes the page's direction (no dir="auto" that the Latin name would turn left to right); the name is isolated.
    const inside = receipt.within(answer)
    expect(inside.filter((n) => n.attrs.dir === 'auto' && n.tag !== 'bdi')).toEqual([])
    expect(inside.filter((n) => n.tag === 'bdi').map((n) => n.text)).toEqual(['photo.jpg'])
    expect(answer.text).toContain(translator('ar').size(2048))
  })
})

// ---------------------------------------------------------- 11. e-mail addresses

describe('e-mail addresses in descriptions are mailto: links', () => {
  async function descriptionOf(description: string) {
    const t = await contexts.create()
    const form = await formWith(t, [{ key: 'name', type: 'text', label: 'Name' }], { description })
    const page = await parsePage((await openPage(t.app, form.id)).text)
    return page.within(page.nodes.find((n) => (n.attrs.class ?? '').includes('description'))!, 'a')
  }

  test("an address becomes a link; the sentence's punctuation stays outside", async () => {
    const links = await descriptionOf(
      'Questions? Write to help@example.org. Or (payroll@acme.co.uk), or see https://example.org/help.',
    )
    expect(links.map((a) => [a.attrs.href, a.text.replace(/\s*\(opens in a new tab\)/, '')])).toEqual([
      ['mailto:help@example.org', 'help@example.org'],
      ['mailto:payroll@acme.co.uk', 'payroll@acme.co.uk'],
      ['https://example.org/help', 'https://example.org/help'],
    ])
    expect(links[0]!.attrs.target).toBeUndefined()
  })

  test('escaped, no header smuggled in, an address inside a URL stays the URL, a bare host is no address', async () => {
    const links = await descriptionOf(
      `Mail o'brien&co@example.org or a?cc=eve@evil.example.com; see https://example.org/u/ada@example.org; not root@localhost <b>x@y.org</b>`,
    )
    expect(links.map((a) => a.attrs.href)).toEqual([
      "mailto:o'brien&co@example.org",
      'mailto:a%3Fcc=eve@evil.example.com',
      'https://example.org/u/ada@example.org',
      'mailto:x@y.org',
    ])
    expect(links.map((a) => a.text.replace(/\s*\(opens in a new tab\)/, ''))).toEqual([
      "o'brien&co@example.org",
      'a?cc=eve@evil.example.com',
      'https://example.org/u/ada@example.org',
      'x@y.org',
    ])
  })
})
