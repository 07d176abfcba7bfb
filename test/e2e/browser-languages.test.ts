/**
 * The person's page in a real browser, in their language (issue 14, item 8):
 * the built executable (dist/intake) driven by Debian's Chromium through
 * playwright-core, one server and one browser for the file, a context per case.
 *
 * - languages: lang, dir, the button, an error message and the receipt, each as
 *   the catalog says, chosen by the browser's Accept-Language or by page.locale
 * - a file accepted with a refused answer is kept, sent and downloadable byte-identical; or removed
 * - radios and a multiple select answered with the keyboard alone
 * - a followed error-summary link leaves the label and the message on screen (a phone)
 * - the summary takes focus on a 422 page (autofocus, no script)
 * - axe-core: no violation of any impact on every state of the page, in de, ar and en, light and dark
 * - print: black on white in dark mode, placeholders not printed
 * - screenshots of the form, the 422 page and the receipt in en, de, ar and ja, at phone and
 *   desktop widths, in test-output/screenshots/ (for a person to look at)
 *
 * Nothing leaves 127.0.0.1. Without Chromium these skip (INTAKE_REQUIRE_BROWSER=1 makes that a failure).
 */
import { describe, expect, test } from 'bun:test'
import { randomBytes } from 'node:crypto'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import type { BrowserContext, Page } from 'playwright-core'
import { catalogOf } from '../../src/i18n/catalogs/index.ts'
import { type Locale, type MessageKey, type MessageParams, translator } from '../../src/i18n/index.ts'
import { PROJECT_ROOT } from './binary.ts'
import {
  type AuditResult,
  activeElement,
  audit,
  browserMissing,
  expectNoViolations,
  heading,
  open,
  SCHEMES,
  type Scheme,
  STEP_TIMEOUT,
  submitWith,
  useBrowser,
} from './browser.ts'

// These run inside the page (page.evaluate); the test's own tsconfig has no DOM lib.
declare const document: any
declare const innerHeight: number
declare function getComputedStyle(element: unknown, pseudo?: string): any

const skipBrowser = browserMissing()
const harness = useBrowser({ tempPrefix: 'intake-browser-languages-', skip: skipBrowser })
const { api, createForm, onlyResponse, responsesOf, pageUrl, withContext } = harness

const SCREENSHOTS = join(PROJECT_ROOT, 'test-output', 'screenshots')
const PHONE = { width: 390, height: 844 }
const DESKTOP = { width: 1280, height: 900 }

/** A catalog's words, as the page should write them. */
const words = (locale: Locale, key: MessageKey, params?: MessageParams) => translator(locale).t(key, params)

/** Text with each run of white space (no-break ones too, as French puts before a colon) made one plain space. */
const squash = (text: string) => text.replace(/\s+/g, ' ').trim()

/** The text of an element, squashed. */
const textOf = async (page: Page, selector: string) =>
  squash((await page.locator(selector).first().textContent()) ?? '')

/** Sends the form with the keyboard: Enter on its button. */
const send = (page: Page) => submitWith(page, () => page.locator('button[type="submit"]').press('Enter'))

/** What `html` says of the page's language and direction. */
const languageOf = (page: Page) =>
  page.evaluate(() => ({
    lang: document.documentElement.getAttribute('lang') as string | null,
    dir: document.documentElement.getAttribute('dir') as string | null,
    direction: getComputedStyle(document.body).direction as string,
  }))

// ------------------------------------------------------------------ 1. languages

/** The browser's language (its Accept-Language) and the locale the page must choose for it. */
const BROWSER_LANGUAGES: { browser: string; locale: Locale }[] = [
  { browser: 'de-DE', locale: 'de' },
  { browser: 'fr-FR', locale: 'fr' },
  { browser: 'ar', locale: 'ar' },
  { browser: 'he-IL', locale: 'he' },
  { browser: 'ja-JP', locale: 'ja' },
  { browser: 'zh-TW', locale: 'zh-Hant' },
]

const simpleForm = (title: string, page?: Record<string, unknown>) => ({
  title,
  ...(page ? { page } : {}),
  fields: [
    { key: 'name', type: 'text', label: 'Name', required: true },
    { key: 'city', type: 'text', label: 'City', required: true },
    { key: 'note', type: 'textarea', label: 'Note' },
  ],
})

/**
 * One person's visit in `browserLocale`: the form in `expected`'s words, a
 * refused try with `name` empty, then the fixed answer and its receipt.
 */
async function visitInLanguage(formId: string, title: string, browserLocale: string, expected: Locale) {
  const rtl = expected === 'ar' || expected === 'he'
  await withContext({ locale: browserLocale }, async (context) => {
    const { page, response } = await open(context, pageUrl(formId))
    expect(response.status()).toBe(200)
    expect({ expected, ...(await languageOf(page)) }).toEqual({
      expected,
      lang: expected,
      dir: rtl ? 'rtl' : 'ltr',
      direction: rtl ? 'rtl' : 'ltr',
    })
    expect({ expected, button: await textOf(page, 'button[type="submit"]') }).toEqual({
      expected,
      button: squash(catalogOf(expected)['page.submit'] as string),
    })

    // Name left empty: refused, in this language.
    await page.locator('#field-city').fill('Zürich')
    const refused = await send(page)
    expect(refused.status()).toBe(422)
    expect((await languageOf(page)).lang).toBe(expected)
    expect({ expected, title: await page.title() }).toEqual({
      expected,
      title: words(expected, 'page.title_error', { title }),
    })
    expect({ expected, summary: await textOf(page, '.error-summary h2') }).toEqual({
      expected,
      summary: squash(words(expected, 'summary.title')),
    })
    expect({ expected, message: await textOf(page, '#field-name-error') }).toEqual({
      expected,
      message: squash(`${words(expected, 'error.prefix')} ${words(expected, 'error.required.text')}`),
    })
    expect(await page.locator('#field-city').inputValue()).toBe('Zürich')

    // Fixed: the receipt, in this language, with what was sent.
    await page.locator('#field-name').fill('Ada Lovelace')
    const sent = await send(page)
    expect(sent.status()).toBe(303)
    expect((await languageOf(page)).lang).toBe(expected)
    expect({ expected, heading: await heading(page) }).toEqual({
      expected,
      heading: words(expected, 'receipt.heading'),
    })
    // Its accent bar is on the side the language starts from (the right, in Arabic and Hebrew).
    const bar = await page.locator('.receipt-panel').evaluate((el: any) => {
      const style = getComputedStyle(el)
      return { left: parseFloat(style.borderLeftWidth) > 0, right: parseFloat(style.borderRightWidth) > 0 }
    })
    expect({ expected, bar }).toEqual({ expected, bar: { left: !rtl, right: rtl } })
    const receipt = await page.locator('main').innerText()
    expect(receipt).toContain('Ada Lovelace')
    expect(receipt).toContain('Zürich')
    expect(receipt).toContain(words(expected, 'receipt.what_you_sent'))
  })
  expect((await onlyResponse(formId)).data).toEqual({ name: 'Ada Lovelace', city: 'Zürich' })
}

describe.skipIf(skipBrowser)("the page speaks the person's language", () => {
  for (const { browser, locale } of BROWSER_LANGUAGES) {
    test(
      `a browser in ${browser} gets ${locale}: lang, dir, the button, an error message and the receipt`,
      async () => {
        const title = `Languages: ${locale}`
        const form = await createForm(simpleForm(title))
        await visitInLanguage(form.id, title, browser, locale)
      },
      STEP_TIMEOUT,
    )
  }

  test(
    "page.locale wins over the browser's language",
    async () => {
      const title = 'Languages: set by the form'
      const form = await createForm(simpleForm(title, { locale: 'ja' }))
      await visitInLanguage(form.id, title, 'de-DE', 'ja')
    },
    STEP_TIMEOUT,
  )
})

// ------------------------------------------------------- 2. a file kept across a 422

describe.skipIf(skipBrowser)('a file accepted with a refused answer is kept', () => {
  const upload = {
    name: 'Überweisung – 日本語 ✓.bin',
    mimeType: 'application/octet-stream',
    buffer: randomBytes(200_000),
  }

  /** Chooses the file, leaves the required name empty, sends: 422, the file named and kept. */
  async function refusedWithFile(page: Page) {
    await page.locator('#field-document').setInputFiles(upload)
    const refused = await send(page)
    expect(refused.status()).toBe(422)
    expect(await textOf(page, '#field-name-error')).toContain(words('en', 'error.required.text'))
    // The page names the file it holds, and offers to remove it.
    expect(await page.locator('.held-file').innerText()).toContain(upload.name)
    expect(await page.getByLabel(words('en', 'file.remove')).isChecked()).toBe(false)
    // The file control itself is empty again (a browser cannot refill it).
    expect(await page.locator('#field-document').evaluate((el: any) => el.files.length as number)).toBe(0)
  }

  test(
    'sent again without choosing it, the answer holds the file, byte-identical',
    async () => {
      const form = await createForm({
        title: 'Kept file',
        fields: [
          {
            key: 'document',
            type: 'file',
            label: 'Signed contract',
            required: true,
            config: { max_size: 1024 * 1024 },
          },
          { key: 'name', type: 'text', label: 'Name', required: true },
        ],
      })
      await withContext({}, async (context) => {
        const { page } = await open(context, pageUrl(form.id))
        await refusedWithFile(page)
        await page.locator('#field-name').fill('Grace Hopper')
        const sent = await send(page)
        expect(sent.status()).toBe(303)
        expect(await heading(page)).toBe(words('en', 'receipt.heading'))
        // The receipt names the file (not its contents).
        expect(await page.locator('main').innerText()).toContain(upload.name)
      })
      const answer = await onlyResponse(form.id)
      expect(answer.data.name).toBe('Grace Hopper')
      expect(answer.data.document).toBe(
        `http://localhost:${harness.server.port}/api/v1/forms/${form.id}/responses/${answer.id}/files/document`,
      )
      const file = await harness.download(String(answer.data.document))
      expect(file.status).toBe(200)
      expect(file.bytes.length).toBe(upload.buffer.length)
      expect(file.bytes.equals(upload.buffer)).toBe(true)
      const exact = /filename\*=UTF-8''([^;\s]+)/i.exec(file.headers.get('content-disposition') ?? '')
      expect(decodeURIComponent(exact?.[1] ?? '')).toBe(upload.name)
    },
    STEP_TIMEOUT,
  )

  test(
    '"remove" ticked, the answer has no file',
    async () => {
      const form = await createForm({
        title: 'Removed file',
        fields: [
          { key: 'document', type: 'file', label: 'Supporting document', config: { max_size: 1024 * 1024 } },
          { key: 'name', type: 'text', label: 'Name', required: true },
        ],
      })
      await withContext({}, async (context) => {
        const { page } = await open(context, pageUrl(form.id))
        await refusedWithFile(page)
        await page.getByLabel(words('en', 'file.remove')).check()
        await page.locator('#field-name').fill('Grace Hopper')
        const sent = await send(page)
        expect(sent.status()).toBe(303)
        expect(await page.locator('main').innerText()).not.toContain(upload.name)
      })
      expect((await onlyResponse(form.id)).data).toEqual({ name: 'Grace Hopper' })
    },
    STEP_TIMEOUT,
  )
})

// ------------------------------------------ 3. radios and a multiple select, keyboard only

describe.skipIf(skipBrowser)('choices answered with the keyboard alone', () => {
  test(
    'radios (arrow keys) and a group of checkboxes (Space) arrive as chosen, the multiple one in option order',
    async () => {
      const form = await createForm({
        title: 'Choices',
        fields: [
          {
            key: 'approve',
            type: 'select',
            label: 'Do you approve the budget?',
            required: true,
            config: {
              options: [
                { value: 'yes', label: 'Yes' },
                { value: 'no', label: 'No' },
                { value: 'later', label: 'Ask me later' },
              ],
            },
          },
          {
            key: 'colours',
            type: 'select',
            label: 'Colours you like',
            config: { multiple: true, options: ['red', 'green', 'blue', 'yellow'] },
          },
          { key: 'size', type: 'select', label: 'Size', config: { display: 'radio', options: ['S', 'M', 'L'] } },
        ],
      })
      await withContext({}, async (context) => {
        const { page } = await open(context, pageUrl(form.id))
        // The groups are fieldsets with a legend; the first radio of each carries the field's id.
        expect(await page.locator('fieldset legend').allInnerTexts()).toHaveLength(3)
        expect(await page.locator('input[type="radio"][name="approve"]').count()).toBe(3)
        expect(await page.locator('input[type="checkbox"][name="colours"]').count()).toBe(4)
        // An optional single choice offers "no answer" last.
        expect(await page.locator('input[type="radio"][name="size"]').count()).toBe(4)

        await page.keyboard.press('Tab')
        expect(await activeElement(page)).toBe('#field-approve')
        await page.keyboard.press('ArrowDown') // No
        await page.keyboard.press('ArrowDown') // Ask me later
        await page.keyboard.press('ArrowUp') // No
        expect(await page.locator('input[name="approve"]:checked').getAttribute('value')).toBe('no')

        // Tab leaves the radio group, into the checkboxes, one stop each.
        await page.keyboard.press('Tab')
        expect(await activeElement(page)).toBe('#field-colours') // red
        await page.keyboard.press('Tab') // green
        await page.keyboard.press('Tab') // blue
        await page.keyboard.press('Space')
        await page.keyboard.press('Tab') // yellow
        await page.keyboard.press('Space')
        await page.keyboard.press('Shift+Tab')
        await page.keyboard.press('Shift+Tab')
        await page.keyboard.press('Shift+Tab') // back to red
        expect(await activeElement(page)).toBe('#field-colours')
        await page.keyboard.press('Space')
        await page.keyboard.press('Tab')
        await page.keyboard.press('Tab')
        await page.keyboard.press('Tab') // yellow again
        await page.keyboard.press('Space') // untick it
        expect(
          await page
            .locator('input[name="colours"]:checked')
            .evaluateAll((els: any[]) => els.map((el) => el.value as string)),
        ).toEqual(['red', 'blue'])

        // Into the size radios: nothing chosen, so Tab stops on the first; the arrow goes to M.
        await page.keyboard.press('Tab')
        expect(await activeElement(page)).toBe('#field-size')
        await page.keyboard.press('ArrowRight')
        await page.keyboard.press('ArrowLeft')
        await page.keyboard.press('ArrowDown')
        expect(await page.locator('input[name="size"]:checked').getAttribute('value')).toBe('M')

        await page.keyboard.press('Tab')
        expect(await activeElement(page)).toBe(`button:${words('en', 'page.submit')}`)
        const sent = await submitWith(page, () => page.keyboard.press('Enter'))
        expect(sent.status()).toBe(303)
        expect(await heading(page)).toBe(words('en', 'receipt.heading'))
      })
      expect((await onlyResponse(form.id)).data).toEqual({ approve: 'no', colours: ['red', 'blue'], size: 'M' })
    },
    STEP_TIMEOUT,
  )
})

// ------------------------------- 4 and 5. the error summary: focus, and links that show the field

/** A long form: on a phone the failing fields are far below the fold, with long labels and descriptions. */
const longForm = (title: string) => ({
  title,
  description:
    'Please read each question carefully.\n\nThis form asks about your household, your income and how you would like us to contact you. It takes about ten minutes.',
  fields: [
    {
      key: 'intro',
      type: 'textarea',
      label: 'Tell us in your own words why you are applying for support this year',
      description:
        'Include anything that changed since your last application: a new job, a move, a new member of the household, or an illness.\nA few sentences are enough.',
    },
    {
      key: 'full_name',
      type: 'text',
      label: 'Your full name, as it appears on your passport, identity card or residence permit',
      required: true,
      description: 'If you have more than one family name, write all of them in the order they appear on the document.',
    },
    {
      key: 'household',
      type: 'number',
      label: 'How many people, including you, live in your household and share its costs?',
      required: true,
      description:
        'Count children, partners and relatives who live with you for more than half of the year. Do not count lodgers.',
      config: { min: 1, max: 30 },
    },
    { key: 'filler_a', type: 'text', label: 'Your reference number from an earlier letter, if you have one' },
    {
      key: 'contact',
      type: 'select',
      label: 'How would you like us to contact you about the outcome of your application?',
      required: true,
      description:
        'We will use this for every letter about this application, including reminders and the final decision.',
      config: { options: ['By post to my home address', 'By email', 'By phone call', 'By text message'] },
    },
    { key: 'filler_b', type: 'textarea', label: 'Anything else you want us to know' },
    {
      key: 'moved',
      type: 'date',
      label: 'When did you move into the address where you live now?',
      required: true,
      description:
        'If you do not know the exact day, choose the first day of the month you moved in. This helps us check your council tax records.',
    },
    {
      key: 'income',
      type: 'select',
      label: 'Which kinds of income did anyone in your household receive in the last twelve months?',
      required: true,
      description:
        'Select every kind that applies to anyone who shares your household costs, even if it was only for a short time.',
      config: {
        multiple: true,
        options: ['Wages or salary', 'Self-employment', 'Pension', 'Benefits', 'Savings interest', 'Other'],
      },
    },
    {
      key: 'declaration',
      type: 'checkbox',
      label:
        'I declare that the information I have given on this form is correct and complete to the best of my knowledge',
      required: true,
      description:
        'Giving false information on purpose may mean you have to pay back support you were not entitled to.',
    },
  ],
})
const LONG_FORM_FAILING = ['full_name', 'household', 'contact', 'moved', 'income', 'declaration']

interface Placement {
  field: string
  label: { top: number; bottom: number }
  message: { top: number; bottom: number }
  innerHeight: number
  focused: string
}

/** Where the field's label (or legend) and its error message are in the viewport, and what has focus. */
const placementOf = (page: Page, key: string): Promise<Placement> =>
  page.evaluate((key: string) => {
    const id = `field-${key}`
    const control = document.getElementById(id)
    const group = control.closest('fieldset')
    const label = group ? group.querySelector('legend') : document.querySelector(`label[for="${id}"]`)
    const message = document.getElementById(`${id}-error`)
    const box = (el: any) => {
      const rect = el.getBoundingClientRect()
      return { top: Math.round(rect.top * 10) / 10, bottom: Math.round(rect.bottom * 10) / 10 }
    }
    return {
      field: key,
      label: box(label),
      message: box(message),
      innerHeight,
      focused: (document.activeElement?.id ?? '') as string,
    }
  }, key)

/** Label and message fully on screen, and the control focused. */
function expectInView(placement: Placement) {
  const { field, label, message, innerHeight: height } = placement
  const seen = {
    field,
    labelInView: label.top >= 0 && label.bottom <= height,
    messageInView: message.top >= 0 && message.bottom <= height,
    focused: placement.focused,
  }
  if (!seen.labelInView || !seen.messageInView)
    console.error(`after following the summary link: ${JSON.stringify(placement)}`)
  expect(seen).toEqual({ field, labelInView: true, messageInView: true, focused: `field-${field}` })
}

describe.skipIf(skipBrowser)('the error summary on a phone', () => {
  test(
    'it takes focus on arrival (autofocus, no script)',
    async () => {
      const form = await createForm(longForm('Summary focus'))
      await withContext({ viewport: PHONE }, async (context) => {
        const { page } = await open(context, pageUrl(form.id))
        expect(await activeElement(page)).toBe('body')
        expect(await page.locator('script').count()).toBe(0)
        const refused = await send(page)
        expect(refused.status()).toBe(422)
        const focused = await page.evaluate(() => {
          const el = document.activeElement
          return {
            summary: el?.classList.contains('error-summary') as boolean,
            role: el?.getAttribute('role') as string | null,
            top: Math.round(el.getBoundingClientRect().top) as number,
          }
        })
        expect(focused).toEqual({ summary: true, role: 'alert', top: focused.top })
        expect(focused.top).toBeGreaterThanOrEqual(0)
        expect(focused.top).toBeLessThan(PHONE.height)
      })
    },
    STEP_TIMEOUT,
  )

  test(
    'each followed summary link (Enter, then clicks) shows the label and the message, and focuses the control',
    async () => {
      const form = await createForm(longForm('Summary links'))
      await withContext({ viewport: PHONE }, async (context) => {
        const { page } = await open(context, pageUrl(form.id))
        const refused = await send(page)
        expect(refused.status()).toBe(422)
        const links = await page
          .locator('.error-summary a')
          .evaluateAll((as: any[]) => as.map((a) => a.getAttribute('href') as string))
        expect(links).toEqual(LONG_FORM_FAILING.map((key) => `#field-${key}`))
        // The failing fields really are out of sight when the page opens.
        const first = await placementOf(page, LONG_FORM_FAILING[0]!)
        expect(first.label.top).toBeGreaterThan(PHONE.height)

        // From the focused summary, Tab to the first link and press Enter: keyboard alone.
        await page.keyboard.press('Tab')
        expect(await page.evaluate(() => document.activeElement.getAttribute('href') as string)).toBe(links[0]!)
        await page.keyboard.press('Enter')
        await page.waitForFunction((hash: string) => (globalThis as any).location.hash === hash, links[0]!)
        expectInView(await placementOf(page, LONG_FORM_FAILING[0]!))

        // Each of the others by a tap on its link (the first again, after scrolling away).
        for (const key of [...LONG_FORM_FAILING.slice(1), LONG_FORM_FAILING[0]!]) {
          await page.evaluate(() => (globalThis as any).scrollTo(0, 0))
          await page.locator(`.error-summary a[href="#field-${key}"]`).click()
          await page.waitForFunction((hash: string) => (globalThis as any).location.hash === hash, `#field-${key}`)
          expectInView(await placementOf(page, key))
        }
      })
    },
    STEP_TIMEOUT,
  )
})

// ----------------------------------------------------- 6. axe-core on every state

const AUDIT_LOCALES: { browser: string; locale: Locale }[] = [
  { browser: 'de-DE', locale: 'de' },
  { browser: 'ar-EG', locale: 'ar' },
  { browser: 'en-GB', locale: 'en' },
]

/** A form with every kind of control the page draws: radios, checkboxes, a drop-down, a file, a held file... */
const auditForm = (title: string) => ({
  title,
  description: 'Please answer a few questions.\n- It takes about a minute\n- See https://example.org/help for help',
  page: { sender: 'Example Clinic' },
  expires_in: '7d',
  fields: [
    {
      key: 'name',
      type: 'text',
      label: 'Full name',
      required: true,
      description: 'As you would like to be addressed.',
      config: { placeholder: 'Ada Lovelace', autocomplete: 'name', min_length: 3 },
    },
    { key: 'email', type: 'email', label: 'Email address', required: true },
    { key: 'notes', type: 'textarea', label: 'Notes', config: { rows: 3 } },
    { key: 'amount', type: 'number', label: 'Amount', config: { min: 0, max: 100 } },
    { key: 'approve', type: 'select', label: 'Approve?', config: { options: ['Yes', 'No'] } },
    { key: 'colours', type: 'select', label: 'Colours', config: { multiple: true, options: ['Red', 'Green', 'Blue'] } },
    {
      key: 'country',
      type: 'select',
      label: 'Country',
      config: { display: 'dropdown', options: ['France', 'Germany', 'Japan'] },
    },
    { key: 'agree', type: 'checkbox', label: 'I agree to the terms', required: true },
    { key: 'start', type: 'date', label: 'Start date', config: { min: '2020-01-01', max: '2030-12-31' } },
    { key: 'attachment', type: 'file', label: 'Attachment', config: { max_size: 1024 * 1024, accept: 'image/*,.pdf' } },
  ],
})

/**
 * Every state a person can see, audited in one context (`locale`, `scheme`):
 * the form; the 422 page (with a held file); the receipt; the answered page
 * (a later visit); cancelled and expired (410); not found (404).
 */
async function auditEveryState(
  browserLocale: string,
  locale: Locale,
  scheme: Scheme,
  others: { cancelled: string; expired: string },
): Promise<AuditResult[]> {
  const title = `Audit ${locale} ${scheme}`
  const form = await createForm(auditForm(title))
  const results: AuditResult[] = []
  const label = (state: string) => `${locale}/${state}`
  /** Checks the state is the one meant (status, language, heading), then audits it. */
  const check = async (page: Page, state: string, status: { got: number; want: number }, want: string) => {
    const seen = {
      state: label(state),
      status: status.got,
      lang: (await languageOf(page)).lang,
      heading: await heading(page),
    }
    expect(seen).toEqual({ state: label(state), status: status.want, lang: locale, heading: want })
    results.push(await audit(page, label(state), scheme, 'all'))
  }
  await withContext({ locale: browserLocale, colorScheme: scheme, bypassCSP: true }, async (context) => {
    const first = await open(context, pageUrl(form.id))
    await check(first.page, 'form', { got: first.response.status(), want: 200 }, title)

    // A fresh page for the answer: axe's script stays out of the page the form is sent from.
    const { page } = await open(context, pageUrl(form.id))
    await page.locator('#field-name').fill('Al')
    await page
      .locator('#field-attachment')
      .setInputFiles({ name: 'scan.pdf', mimeType: 'application/pdf', buffer: Buffer.from('%PDF-1.4 test') })
    const refused = await send(page)
    await check(page, '422', { got: refused.status(), want: 422 }, title)

    // The 422 page sends the fixed answer (the held file with it): the receipt.
    await page.locator('#field-name').fill('Ada Lovelace')
    await page.locator('#field-email').fill('ada@example.org')
    await page.locator('#field-agree').check()
    await page.locator('#field-colours').check()
    const sent = await send(page)
    await check(page, 'receipt', { got: sent.status(), want: 303 }, words(locale, 'receipt.heading'))

    const later = await open(context, pageUrl(form.id))
    await check(later.page, 'answered', { got: later.response.status(), want: 200 }, words(locale, 'answered.heading'))
    const cancelled = await open(context, pageUrl(others.cancelled))
    await check(
      cancelled.page,
      'cancelled',
      { got: cancelled.response.status(), want: 410 },
      words(locale, 'status.cancelled.heading'),
    )
    const expired = await open(context, pageUrl(others.expired))
    await check(
      expired.page,
      'expired',
      { got: expired.response.status(), want: 410 },
      words(locale, 'status.expired.heading'),
    )
    const missing = await open(context, pageUrl('01ARZ3NDEKTSV4RRFFQ69G5FAV'))
    await check(
      missing.page,
      'not-found',
      { got: missing.response.status(), want: 404 },
      words(locale, 'status.not_found.heading'),
    )
  })
  return results
}

describe.skipIf(skipBrowser)('axe-core (WCAG 2.x A and AA): no violation of any impact', () => {
  test('every state of the page in de, ar and en, light and dark', async () => {
    // A form to cancel, and one that expires in a moment (it has by the time it is visited).
    const cancelled = await createForm(auditForm('Audit cancelled'))
    expect((await api(`/forms/${cancelled.id}`, { method: 'PATCH', body: { status: 'cancelled' } })).status).toBe(200)
    const expired = await createForm(auditForm('Audit expired'))
    const expiresAt = Date.now() + 1_000
    expect(
      (await api(`/forms/${expired.id}`, { method: 'PATCH', body: { expires_at: new Date(expiresAt).toISOString() } }))
        .status,
    ).toBe(200)
    await Bun.sleep(Math.max(0, expiresAt - Date.now()) + 100) // setup: let it expire

    const runs = AUDIT_LOCALES.flatMap(({ browser, locale }) => SCHEMES.map((scheme) => ({ browser, locale, scheme })))
    const results: AuditResult[] = []
    // Two at a time: the audits are CPU-bound, and the machine may have two cores.
    for (let at = 0; at < runs.length; at += 2) {
      const batch = await Promise.all(
        runs
          .slice(at, at + 2)
          .map(({ browser, locale, scheme }) =>
            auditEveryState(browser, locale, scheme, { cancelled: cancelled.id, expired: expired.id }),
          ),
      )
      results.push(...batch.flat())
    }
    expect(results).toHaveLength(runs.length * 7)
    expectNoViolations(results)
  }, 240_000) // 42 audits: about 50 s on an idle two-core machine, twice that under load
})

// ------------------------------------------------------------------- 7. print

describe.skipIf(skipBrowser)('print', () => {
  test(
    'dark mode prints black on white, and a placeholder does not print',
    async () => {
      const form = await createForm({
        title: 'Print me',
        fields: [
          { key: 'name', type: 'text', label: 'Full name', config: { placeholder: 'Ada Lovelace' } },
          { key: 'notes', type: 'textarea', label: 'Notes', config: { placeholder: 'Anything else' } },
        ],
      })
      await withContext({ colorScheme: 'dark' }, async (context) => {
        const { page } = await open(context, pageUrl(form.id))
        const colours = () =>
          page.evaluate(() => {
            const input = document.getElementById('field-name')
            return {
              text: getComputedStyle(document.body).color as string,
              page: getComputedStyle(document.documentElement).backgroundColor as string,
              main: getComputedStyle(document.querySelector('main')).backgroundColor as string,
              label: getComputedStyle(document.querySelector('label')).color as string,
              placeholder: getComputedStyle(input, '::placeholder').color as string,
              textareaPlaceholder: getComputedStyle(document.getElementById('field-notes'), '::placeholder')
                .color as string,
            }
          })
        // On screen in dark mode: light text on dark, the placeholder shown (the test can tell the difference).
        const screen = await colours()
        expect(screen.text).not.toBe('rgb(0, 0, 0)')
        expect(screen.placeholder).not.toBe('rgba(0, 0, 0, 0)')

        await page.emulateMedia({ media: 'print', colorScheme: 'dark' })
        expect(await colours()).toEqual({
          text: 'rgb(0, 0, 0)',
          page: 'rgb(255, 255, 255)',
          main: 'rgb(255, 255, 255)',
          label: 'rgb(0, 0, 0)',
          placeholder: 'rgba(0, 0, 0, 0)',
          textareaPlaceholder: 'rgba(0, 0, 0, 0)',
        })
      })
    },
    STEP_TIMEOUT,
  )
})

// -------------------------------------------------------------- 8. screenshots

/** A realistic form, its words written in each language, as an agent would send it. */
const SHOWCASE: Record<
  'en' | 'de' | 'ar' | 'ja',
  { browser: string; form: Record<string, unknown>; answer: { name: string; email: string } }
> = {
  en: {
    browser: 'en-GB',
    answer: { name: 'Ada Lovelace', email: 'ada@example.org' },
    form: showcase({
      title: 'Book a dental appointment',
      sender: 'Riverside Dental Clinic',
      description:
        'We will confirm your appointment by email within two working days.\n- Bring your insurance card\n- Arrive 10 minutes early',
      name: ['Full name', 'As written on your insurance card.'],
      email: 'Email address',
      time: ['Preferred time of day', ['Morning', 'Afternoon', 'Evening']],
      reasons: ['Reasons for your visit', ['Check-up', 'Cleaning', 'Pain or discomfort', 'Braces']],
      date: 'Earliest date you can come',
      notes: ['Anything we should know', 'For example allergies, or if you are nervous about treatment.'],
      card: 'Photo of your insurance card',
      consent: 'I agree that the clinic may store these details to arrange my appointment',
    }),
  },
  de: {
    browser: 'de-DE',
    answer: { name: 'Jürgen Groß', email: 'juergen@example.de' },
    form: showcase({
      title: 'Zahnarzttermin vereinbaren',
      sender: 'Zahnarztpraxis am Fluss',
      description:
        'Wir bestätigen Ihren Termin innerhalb von zwei Werktagen per E-Mail.\n- Bringen Sie Ihre Versichertenkarte mit\n- Kommen Sie 10 Minuten früher',
      name: ['Vollständiger Name', 'Wie auf Ihrer Versichertenkarte.'],
      email: 'E-Mail-Adresse',
      time: ['Bevorzugte Tageszeit', ['Vormittags', 'Nachmittags', 'Abends']],
      reasons: [
        'Grund Ihres Besuchs',
        ['Kontrolluntersuchung', 'Professionelle Zahnreinigung', 'Schmerzen oder Beschwerden', 'Zahnspange'],
      ],
      date: 'Frühestmöglicher Termin',
      notes: ['Was sollten wir wissen?', 'Zum Beispiel Allergien, oder ob Sie vor der Behandlung nervös sind.'],
      card: 'Foto Ihrer Versichertenkarte',
      consent: 'Ich bin einverstanden, dass die Praxis diese Angaben zur Terminvereinbarung speichert',
    }),
  },
  ar: {
    browser: 'ar-EG',
    answer: { name: 'ليلى أحمد', email: 'layla@example.org' },
    form: showcase({
      title: 'حجز موعد لدى طبيب الأسنان',
      sender: 'عيادة النهر لطب الأسنان',
      description:
        'سنؤكد موعدك عبر البريد الإلكتروني خلال يومي عمل.\n- أحضر بطاقة التأمين الخاصة بك\n- احضر قبل الموعد بعشر دقائق',
      name: ['الاسم الكامل', 'كما هو مكتوب على بطاقة التأمين.'],
      email: 'البريد الإلكتروني',
      time: ['الوقت المفضل من اليوم', ['صباحًا', 'بعد الظهر', 'مساءً']],
      reasons: ['سبب الزيارة', ['فحص دوري', 'تنظيف', 'ألم أو انزعاج', 'تقويم الأسنان']],
      date: 'أقرب تاريخ يمكنك الحضور فيه',
      notes: ['هل هناك ما يجب أن نعرفه؟', 'مثل الحساسية، أو إن كنت تشعر بالقلق من العلاج.'],
      card: 'صورة بطاقة التأمين',
      consent: 'أوافق على أن تحفظ العيادة هذه البيانات لترتيب موعدي',
    }),
  },
  ja: {
    browser: 'ja-JP',
    answer: { name: '山田 花子', email: 'hanako@example.jp' },
    form: showcase({
      title: '歯科の予約',
      sender: 'リバーサイド歯科クリニック',
      description: 'ご予約は2営業日以内にメールで確定します。\n- 保険証をお持ちください\n- 10分前にお越しください',
      name: ['氏名', '保険証に記載のとおりに入力してください。'],
      email: 'メールアドレス',
      time: ['希望の時間帯', ['午前', '午後', '夕方']],
      reasons: ['受診の理由', ['定期検診', 'クリーニング', '痛み・違和感', '矯正']],
      date: '来院可能な最も早い日',
      notes: ['お伝えいただきたいこと', 'アレルギーや治療への不安など。'],
      card: '保険証の写真',
      consent: '予約の手配のため、クリニックがこの情報を保存することに同意します',
    }),
  },
}

function showcase(w: {
  title: string
  sender: string
  description: string
  name: [string, string]
  email: string
  time: [string, string[]]
  reasons: [string, string[]]
  date: string
  notes: [string, string]
  card: string
  consent: string
}) {
  return {
    title: w.title,
    description: w.description,
    expires_in: '7d',
    page: { sender: w.sender, time_zone: 'Europe/Berlin' },
    fields: [
      {
        key: 'name',
        type: 'text',
        label: w.name[0],
        description: w.name[1],
        required: true,
        config: { autocomplete: 'name' },
      },
      {
        key: 'email',
        type: 'email',
        label: w.email,
        required: true,
        config: { autocomplete: 'email', placeholder: 'name@example.com' },
      },
      { key: 'time', type: 'select', label: w.time[0], required: true, config: { options: w.time[1] } },
      { key: 'reasons', type: 'select', label: w.reasons[0], config: { multiple: true, options: w.reasons[1] } },
      { key: 'date', type: 'date', label: w.date, config: { min: '2026-01-01', max: '2027-12-31' } },
      { key: 'notes', type: 'textarea', label: w.notes[0], description: w.notes[1], config: { rows: 3 } },
      { key: 'card', type: 'file', label: w.card, config: { accept: 'image/*,.pdf', max_size: 5 * 1024 * 1024 } },
      { key: 'consent', type: 'checkbox', label: w.consent, required: true },
    ],
  }
}

describe.skipIf(skipBrowser)('screenshots (test-output/screenshots/, for a person to look at)', () => {
  test('the form, the 422 page and the receipt in en, de, ar and ja, at phone and desktop width', async () => {
    mkdirSync(SCREENSHOTS, { recursive: true })
    const saved: string[] = []
    const shoot = async (page: Page, locale: string, state: string, width: string) => {
      const path = join(SCREENSHOTS, `${locale}-${state}-${width}.png`)
      await page.screenshot({ path, fullPage: true })
      saved.push(path)
    }
    for (const [locale, { browser, form: body, answer }] of Object.entries(SHOWCASE)) {
      for (const [width, viewport] of [
        ['phone', PHONE],
        ['desktop', DESKTOP],
      ] as const) {
        const form = await createForm(body)
        await withContext({ locale: browser, viewport }, async (context: BrowserContext) => {
          const { page } = await open(context, pageUrl(form.id))
          expect((await languageOf(page)).lang).toBe(locale)
          await shoot(page, locale, 'form', width)

          await page.locator('#field-email').fill(answer.email.replace('.', ''))
          const refused = await send(page)
          expect(refused.status()).toBe(422)
          // The summary is focused (its ring shows in the picture, as a person would see it).
          await shoot(page, locale, '422', width)

          await page.locator('#field-name').fill(answer.name)
          await page.locator('#field-email').fill(answer.email)
          await page.locator('#field-time').check()
          await page.locator('#field-reasons-1').check()
          await page.locator('#field-consent').check()
          await page.locator('#field-notes').fill(`${answer.name}\n${answer.email}`)
          const sent = await send(page)
          expect(sent.status()).toBe(303)
          expect(await heading(page)).toBe(words(locale as Locale, 'receipt.heading'))
          await shoot(page, locale, 'receipt', width)
        })
        expect(Object.keys((await responsesOf(form.id))[0]?.data ?? {}).sort()).toEqual([
          'consent',
          'email',
          'name',
          'notes',
          'reasons',
          'time',
        ])
      }
    }
    expect(saved).toHaveLength(4 * 3 * 2)
  }, 90_000)
})

test.skipIf(skipBrowser)('no page made a request to anything but the intake server on 127.0.0.1', () => {
  expect(harness.foreignRequests).toEqual([])
})
