/**
 * Numbers on the person's page (CONTRACT 14): a text control with a numeric
 * keyboard, read by the server in the page's language, strictly (a value that
 * is not written the way the language writes numbers is a 422 with an example
 * in that language, never a guess), and written back in that language by the
 * page, its messages and the receipt.
 */
import { describe, expect, test } from 'bun:test'
import { type Locale, SUPPORTED_LOCALES, translator } from '../src/i18n/index.ts'
import { readNumber } from '../src/i18n/numbers.ts'
import { collapsed, type Page, parsePage } from './html.ts'
import { contextsPerTest, openPage, postForm, submit, type TestContext, type TestResponse } from './utils.ts'

const contexts = contextsPerTest()

const intlTag = (locale: Locale) => (locale === 'pt' ? 'pt-PT' : locale)
/** What Intl writes for the language: the test's own formats, not the product's. */
const intl = (locale: Locale, options: Intl.NumberFormatOptions = {}) =>
  new Intl.NumberFormat(intlTag(locale), { maximumFractionDigits: 20, ...options })
const partOf = (locale: Locale, type: 'decimal' | 'group', options: Intl.NumberFormatOptions = {}) =>
  intl(locale, { useGrouping: 'always', ...options } as Intl.NumberFormatOptions)
    .formatToParts(1234567.5)
    .find((part) => part.type === type)!.value
/** The language's native digits besides ASCII ones, where it has them. */
const NATIVE: Partial<Record<Locale, string>> = { ar: 'arab', hi: 'deva' }

const AMOUNT = { key: 'amount', type: 'number', label: 'Amount', config: { min: 0.01, max: 100000 } }

async function amountForm(t: TestContext, locale: Locale, fields: unknown[] = [AMOUNT]) {
  return t.api.createForm({ title: 'Expenses', page: { locale }, fields })
}

async function storedData(t: TestContext, formId: string) {
  const responses = (await t.api.get(`/forms/${formId}/responses`)).body as Array<{ data: Record<string, unknown> }>
  return responses.map((response) => response.data)
}

/** The receipt the 303 leads to, once (its cookie). */
async function receiptAfter(t: TestContext, formId: string, sent: TestResponse): Promise<Page> {
  expect(sent.status).toBe(303)
  const cookie = (sent.headers.get('set-cookie') ?? '').split(';')[0]!
  return parsePage((await openPage(t.app, formId, { cookie })).text)
}

describe('the German amount (issue 26)', () => {
  test('412,80 on a German page is stored as 412.8, and the receipt says 412,8', async () => {
    const t = await contexts.create()
    const form = await amountForm(t, 'de')
    const sent = await postForm(t.app, form.id, { amount: '412,80' })
    const receipt = await receiptAfter(t, form.id, sent)
    expect(await storedData(t, form.id)).toEqual([{ amount: 412.8 }])
    const answer = receipt.nodes.find((node) => node.attrs.class === 'receipt-answer')!
    expect(answer.text).toBe('412,8')
  })

  test('412.80 on a German page is refused with an example written in German, the input shown as typed', async () => {
    const t = await contexts.create()
    const form = await amountForm(t, 'de')
    const res = await postForm(t.app, form.id, { amount: '412.80' })
    expect(res.status).toBe(422)
    const page = await parsePage(res.text)
    expect(page.byId('field-amount-error').text).toContain(
      translator('de').t('error.invalid_format.number', { example: '1.234,5' }),
    )
    expect(page.byId('field-amount-error').text).toContain('1.234,5')
    expect(page.control('amount').attrs.value).toBe('412.80')
    expect(await storedData(t, form.id)).toEqual([])
  })

  test('the page language comes from Accept-Language when the form names none', async () => {
    const t = await contexts.create()
    const form = await t.api.createForm({ fields: [AMOUNT] })
    expect((await postForm(t.app, form.id, { amount: '412,80' }, { 'accept-language': 'en' })).status).toBe(422)
    expect(
      (await postForm(t.app, form.id, { amount: '1.412,80' }, { 'accept-language': 'de-AT, en;q=0.5' })).status,
    ).toBe(303)
    expect(await storedData(t, form.id)).toEqual([{ amount: 1412.8 }])
  })
})

describe('other languages', () => {
  test.each([
    ['pl', '1 234,5'],
    ['pl', '1\u00a0234,5'],
    ['ru', '1\u202f234,5'],
    ['ru', '1 234,5'],
    ['fr', '1 234,5'],
    ['fr', '1\u00a0234,5'],
    ['cs', '1234,5'],
    ['hi', '1,234.5'],
    // Full-width, as a Japanese, Chinese or Korean input method types them.
    ['ja', '１，２３４．５'],
    ['zh-Hans', '1234．5'],
    ['ko', '１２３４.５'],
  ] as const)(
    '%s reads %p (a space of any kind where the language groups with one; full-width forms) as 1234.5',
    async (locale, typed) => {
      const t = await contexts.create()
      const form = await amountForm(t, locale)
      const receipt = await receiptAfter(t, form.id, await postForm(t.app, form.id, { amount: typed }))
      expect(await storedData(t, form.id)).toEqual([{ amount: 1234.5 }])
      expect(collapsed(receipt.nodes.find((node) => node.attrs.class === 'receipt-answer')!.text)).toBe(
        collapsed(intl(locale).format(1234.5)),
      )
    },
  )

  test('a region that writes numbers the other way round: what reads as two numbers is refused, the rest read as the page writes them', async () => {
    const t = await contexts.create()
    const form = await t.api.createForm({ title: 'Gastos', fields: [AMOUNT] })
    const mexico = { 'accept-language': 'es-MX' }
    // es reads 1.234 as 1234 and 1,234 as 1.234; Mexico writes them the other way round.
    for (const typed of ['1,234', '1.234']) {
      const refused = await postForm(t.app, form.id, { amount: typed }, mexico)
      expect(refused.status).toBe(422)
      expect(refused.text).toContain(intl('es').format(1234.5))
    }
    // Unambiguous in both: read.
    expect((await postForm(t.app, form.id, { amount: '412,80' }, mexico)).status).toBe(303)
    expect(await storedData(t, form.id)).toEqual([{ amount: 412.8 }])
    // Spain's own page reads 1.234 as es writes it.
    const spain = await t.api.createForm({ title: 'Gastos', fields: [AMOUNT] })
    expect((await postForm(t.app, spain.id, { amount: '1.234' }, { 'accept-language': 'es-ES' })).status).toBe(303)
    expect(await storedData(t, spain.id)).toEqual([{ amount: 1234 }])
  })

  test('a number with more digits than can be stored exactly is refused, never rounded', async () => {
    const t = await contexts.create()
    const form = await t.api.createForm({
      title: 'Messwert',
      page: { locale: 'de' },
      fields: [{ key: 'value', type: 'number', label: 'Wert' }],
    })
    for (const typed of ['0,12345678901234567891', '1234567890,123456789']) {
      expect((await postForm(t.app, form.id, { value: typed })).status).toBe(422)
    }
    // As many digits as a double keeps: stored exactly as typed.
    expect(readNumber('de', '0,1234567890123456')).toBe(0.1234567890123456)
    expect(readNumber('de', '9.007.199.254.740.991')).toBe(9007199254740991)
    expect(readNumber('de', '0,000001000')).toBe(0.000001)
    expect((await postForm(t.app, form.id, { value: '1234,5600' })).status).toBe(303)
    expect(await storedData(t, form.id)).toEqual([{ value: 1234.56 }])
  })

  test('hi groups as CLDR does (12,34,567); a grouping of threes is refused there', async () => {
    const t = await contexts.create()
    const big = { key: 'big', type: 'number', label: 'Big' }
    const form = await amountForm(t, 'hi', [big])
    expect((await postForm(t.app, form.id, { big: '1,234,567' })).status).toBe(422)
    expect((await postForm(t.app, form.id, { big: '12,34,567.5' })).status).toBe(303)
    expect(await storedData(t, form.id)).toEqual([{ big: 1234567.5 }])
  })

  test('ar takes Arabic-Indic digits with their separators, and ASCII digits; never the two mixed', async () => {
    const t = await contexts.create()
    const form = await amountForm(t, 'ar', [AMOUNT, { key: 'other', type: 'number', label: 'Other' }])
    const arabic = intl('ar', { numberingSystem: 'arab' }).format(412.8)
    expect(arabic).toBe('\u0664\u0661\u0662\u066b\u0668')
    expect((await postForm(t.app, form.id, { amount: '4\u0661\u0662\u066b\u0668' })).status).toBe(422)
    expect((await postForm(t.app, form.id, { amount: '\u0664\u0661\u0662.\u0668' })).status).toBe(422)
    const receipt = await receiptAfter(
      t,
      form.id,
      await postForm(t.app, form.id, { amount: arabic, other: intl('ar').format(-1234.5) }),
    )
    expect(await storedData(t, form.id)).toEqual([{ amount: 412.8, other: -1234.5 }])
    const answers = receipt.nodes.filter((node) => node.attrs.class === 'receipt-answer').map((node) => node.text)
    expect(answers).toEqual([intl('ar').format(412.8), intl('ar').format(-1234.5)])
  })
})

describe('the control', () => {
  test('a text input with a decimal keyboard, or a numeric one when only whole numbers are allowed; no attributes a text input ignores', async () => {
    const t = await contexts.create()
    const form = await amountForm(t, 'de', [
      { key: 'guests', type: 'number', label: 'Guests', config: { min: 1, max: 10, step: 1 } },
      { key: 'pairs', type: 'number', label: 'Pairs', config: { step: 2 } },
      { key: 'half', type: 'number', label: 'Half', config: { min: 0.5, step: 1 } },
      { key: 'money', type: 'number', label: 'Money', config: { step: 0.01, placeholder: '0,00' } },
      { key: 'free', type: 'number', label: 'Free' },
    ])
    const page = await parsePage((await openPage(t.app, form.id)).text)
    const modes = Object.fromEntries(
      ['guests', 'pairs', 'half', 'money', 'free'].map((key) => [key, page.control(key).attrs.inputmode]),
    )
    expect(modes).toEqual({ guests: 'numeric', pairs: 'numeric', half: 'decimal', money: 'decimal', free: 'decimal' })
    for (const key of Object.keys(modes)) {
      const control = page.control(key)
      expect(control.tag).toBe('input')
      expect(control.attrs.type).toBe('text')
      expect(control.attrs.spellcheck).toBe('false')
      for (const ignored of ['min', 'max', 'step', 'maxlength', 'pattern'])
        expect(control.attrs[ignored]).toBeUndefined()
    }
    expect(page.control('money').attrs.placeholder).toBe('0,00')
  })

  test('a default is written in the page language, and the page sent as it stands stores it', async () => {
    const t = await contexts.create()
    const form = await amountForm(t, 'de', [
      { key: 'weight', type: 'number', label: 'Weight', config: { default: 1234.75 } },
    ])
    const page = await parsePage((await openPage(t.app, form.id)).text)
    expect(page.control('weight').attrs.value).toBe('1.234,75')
    expect((await postForm(t.app, form.id, page.browserEntries())).status).toBe(303)
    expect(await storedData(t, form.id)).toEqual([{ weight: 1234.75 }])
  })

  test('messages and hints write their numbers in the page language', async () => {
    const t = await contexts.create()
    const form = await amountForm(t, 'de', [
      { key: 'dose', type: 'number', label: 'Dose', config: { min: 0.5, max: 2500.5, step: 0.25 } },
    ])
    const de = translator('de')
    const opened = await parsePage((await openPage(t.app, form.id)).text)
    expect(opened.byId('field-dose-hint').text).toContain('0,5 bis 2.500,5')
    const tooBig = await parsePage((await postForm(t.app, form.id, { dose: '3.000' })).text)
    expect(tooBig.byId('field-dose-error').text).toContain(de.t('error.too_large', { max: 2500.5 }))
    expect(tooBig.byId('field-dose-error').text).toContain('2.500,5')
    const offStep = await parsePage((await postForm(t.app, form.id, { dose: '0,6' })).text)
    expect(offStep.byId('field-dose-error').text).toContain('0,25')
    expect(offStep.byId('field-dose-error').text).toContain('0,5')
  })
})

describe('the JSON path is as before', () => {
  test('JSON numbers and plain ASCII decimal strings; a decimal comma is refused, saying what was expected', async () => {
    const t = await contexts.create()
    const form = await amountForm(t, 'de', [AMOUNT, { key: 'other', type: 'number', label: 'Other' }])
    const refused = await submit(t.app, form.id, { amount: '412,80' })
    expect(refused.status).toBe(422)
    expect(refused.body.errors).toEqual([
      { path: '/amount', code: 'invalid_format', message: expect.stringContaining('1234.5') },
    ])
    expect(refused.text).not.toContain('1.234,5')
    expect((await submit(t.app, form.id, { amount: '412.80', other: 7 })).status).toBe(201)
    expect(await storedData(t, form.id)).toEqual([{ amount: 412.8, other: 7 }])
  })
})

/** A small seeded generator (mulberry32): the same numbers every run. */
function seeded(seed: number) {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let x = state
    x = Math.imul(x ^ (x >>> 15), x | 1)
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61)
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296
  }
}

/** Integers, decimals, negatives, small and large (up to 2^53), each exactly what its decimal digits say. */
function sampleNumbers(random: () => number, count: number): number[] {
  const values = [
    0, 1, -1, 7, 12, 123, 1234, 12345, 123456, 1234567, 1000000, 0.5, 0.05, 1234.5, 412.8, -412.8, 9007199254740991,
    -9007199254740991, 1234567890123.25,
  ]
  while (values.length < count) {
    const digits = 1 + Math.floor(random() * 15)
    const whole = Math.floor(random() * 10 ** digits)
    const fractionDigits = Math.floor(random() * 7)
    const fraction =
      fractionDigits === 0
        ? ''
        : `.${String(Math.floor(random() * 10 ** fractionDigits)).padStart(fractionDigits, '0')}`
    const value = Number(`${random() < 0.4 ? '-' : ''}${whole}${fraction}`)
    if (Math.abs(value) <= Number.MAX_SAFE_INTEGER) values.push(value === 0 ? 0 : value)
  }
  return values
}

describe('property: every language reads back what Intl writes for it', () => {
  const random = seeded(26)
  const values = sampleNumbers(random, 400)

  test.each([...SUPPORTED_LOCALES])('%s', (locale) => {
    const formats = [
      intl(locale),
      intl(locale, { useGrouping: false }),
      intl(locale, { useGrouping: 'always' } as Intl.NumberFormatOptions),
    ]
    if (NATIVE[locale])
      formats.push(
        intl(locale, { numberingSystem: NATIVE[locale] }),
        intl(locale, { numberingSystem: NATIVE[locale], useGrouping: false }),
      )
    for (const format of formats) {
      for (const value of values) {
        const written = format.format(value)
        expect({ written, read: readNumber(locale, written) }).toEqual({ written, read: value })
      }
    }
  })

  test('through the real form post, a sample in every language', async () => {
    const t = await contexts.create()
    const sample = [1234567.25, -98765.5, 412.8, 5, -0.125]
    const fields = sample.map((_, index) => ({ key: `n${index}`, type: 'number', label: `Number ${index}` }))
    for (const locale of SUPPORTED_LOCALES) {
      const form = await amountForm(t, locale, fields)
      const native = NATIVE[locale]
      const written = sample.map((value, index) =>
        (native && index % 2 === 1 ? intl(locale, { numberingSystem: native }) : intl(locale)).format(value),
      )
      const res = await postForm(t.app, form.id, Object.fromEntries(written.map((text, index) => [`n${index}`, text])))
      expect({ locale, written, status: res.status }).toEqual({ locale, written, status: 303 })
      expect(await storedData(t, form.id)).toEqual([
        Object.fromEntries(sample.map((value, index) => [`n${index}`, value])),
      ])
    }
  })
})

describe("property: separators the language's way round, or refused", () => {
  test.each([...SUPPORTED_LOCALES])('%s', (locale) => {
    const decimal = partOf(locale, 'decimal')
    const group = partOf(locale, 'group')
    // The other convention's decimal point: where it is this language's grouping, only groups of three make it one.
    const otherPoint = decimal === ',' ? '.' : ','
    const refused = [
      `1${decimal}234${group}567`, // decimal, then grouping
      `1${decimal}2${decimal}3`, // two decimal separators
      `1${group}2${group}3`, // 1,2,3
      `12${group}34`, // a group of two
      `1234${group}567`, // a first group too long
      `1${group}2345`, // a last group too long
      `0${group}123`, // a group after a leading zero
      `1${group}234${decimal}5${group}6`, // grouping after the decimal
      // A space around a number is no separator: it is ignored.
      ...(/\s/.test(group) ? [] : [`${group}123`, `123${group}`]),
      decimal,
      group,
      `1${decimal}`,
      `-${decimal}`,
      '-',
      '--1',
      `412${otherPoint}80`,
      `1${otherPoint}5`,
      `0${otherPoint}125`,
      `1${otherPoint}2345`,
      '1e5',
      `1${decimal}5e3`,
      '+5',
      'Infinity',
      'NaN',
      '0x10',
      '1_000',
      '5 5 5 5',
      '12a',
      '\u0661\u0662', // Arabic-Indic digits in a language that does not write them, or mixed below
    ]
    if (locale === 'hi') refused.push('1,234,567', '123,456')
    if (NATIVE[locale]) {
      const native = intl(locale, { numberingSystem: NATIVE[locale], useGrouping: false }).format(12)
      refused.push(`1${native}`, `${native}3`, `${native}${decimal}5`)
    }
    if (locale === 'ar') refused.splice(refused.indexOf('\u0661\u0662'), 1)
    const read = refused.map((text) => ({ text, read: readNumber(locale, text) }))
    expect(read.filter((entry) => entry.read !== undefined)).toEqual([])
  })

  test('a single group of three reads as the language writes it (CLDR; the example shows it), never as the other convention', () => {
    expect(readNumber('de', '1.234')).toBe(1234)
    expect(readNumber('de', '1,234')).toBe(1.234)
    expect(readNumber('en', '1,234')).toBe(1234)
    expect(readNumber('en', '1.234')).toBe(1.234)
    expect(readNumber('fr', '1.234')).toBeUndefined()
    expect(readNumber('fr', '1 234')).toBe(1234)
  })
})
