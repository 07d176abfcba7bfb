/**
 * The person's page in a real browser, in their language (issue 14, item 8):
 * the built executable (dist/intake) driven by Debian's Chromium through
 * playwright-core, one server and one browser for the file, a context per case.
 *
 * - languages: lang, dir, the button, an error message and the receipt, each as
 *   the catalog says, chosen by the browser's Accept-Language or by page.locale
 * - a file accepted with a refused answer is kept, sent and downloadable byte-identical; or removed
 * - radios and a multiple select answered with the keyboard alone
 *
 * Nothing leaves 127.0.0.1. Without Chromium these skip (INTAKE_REQUIRE_BROWSER=1 makes that a failure).
 */
import { describe, expect, test } from 'bun:test'
import { randomBytes } from 'node:crypto'
import type { Page } from 'playwright-core'
import { catalogOf } from '../../src/i18n/catalogs/index.ts'
import type { Locale } from '../../src/i18n/index.ts'
import { activeElement, browserMissing, heading, open, STEP_TIMEOUT, submitWith, useBrowser } from './browser.ts'
import { languageOf, send, squash, textOf, words } from './languages.ts'

// These run inside the page (page.evaluate); the test's own tsconfig has no DOM lib.
declare const document: any
declare const innerHeight: number
declare function getComputedStyle(element: unknown, pseudo?: string): any

const skipBrowser = browserMissing()
const harness = useBrowser({ tempPrefix: 'intake-browser-languages-', skip: skipBrowser })
const { createForm, onlyResponse, pageUrl, withContext } = harness

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
