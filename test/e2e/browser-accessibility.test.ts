/**
 * The person's page in a real browser (issue 14, item 8): the built executable
 * driven by Debian's Chromium through playwright-core, one server and one browser
 * for the file, a context per case.
 *
 * - a followed error-summary link leaves the label and the message on screen (a phone)
 * - the summary takes focus on a 422 page (autofocus, no script)
 * - axe-core: no violation of any impact on every state of the page, in de, ar and en, light and dark
 * - print: black on white in dark mode, placeholders not printed
 *
 * Nothing leaves 127.0.0.1. Without Chromium these skip (INTAKE_REQUIRE_BROWSER=1 makes that a failure).
 */
import { describe, expect, test } from 'bun:test'
import type { Page } from 'playwright-core'
import type { Locale } from '../../src/i18n/index.ts'
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
  useBrowser,
} from './browser.ts'
import { languageOf, PHONE, send, words } from './languages.ts'

// These run inside the page (page.evaluate); the test's own tsconfig has no DOM lib.
declare const document: any
declare const innerHeight: number
declare function getComputedStyle(element: unknown, pseudo?: string): any

const skipBrowser = browserMissing()
const harness = useBrowser({ tempPrefix: 'intake-browser-languages-', skip: skipBrowser })
const { api, createForm, pageUrl, withContext } = harness

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
        // The browser applies autofocus at its next rendering step, which a busy machine may not have reached yet.
        await page
          .waitForFunction(() => document.activeElement !== document.body, null, { timeout: 5000 })
          .catch(() => {})
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
