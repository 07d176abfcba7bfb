/**
 * The new states of issue 26 in a real browser (CONTRACT 14), walked as a
 * person would, in Chromium at a phone (390x844) and at 200% zoom on a laptop
 * (640x400), in en, de, ar, ja and pl:
 *
 * - the German amount: `412,80` stored as 412.8; `412.80` refused with a German example
 * - a memorable date of birth: three boxes, a missing month refused, the boxes kept
 * - "Check your answers" (page.review): nothing recorded until Send; Change
 *   returns to the field with every answer and the file kept
 * - a form cancelled (410) or answered in another tab (409) while the person
 *   typed: the page shows what they sent, in a box they can copy from
 * - a deadline within 48 hours: how long is left
 * - axe-core: no violation of any impact on each of those pages
 * - screenshots of each, in test-output/screenshots/ (for a person to look at)
 *
 * Nothing leaves 127.0.0.1. Without Chromium these skip (INTAKE_REQUIRE_BROWSER=1 makes that a failure).
 */
import { describe, expect, test } from 'bun:test'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { type Locale, translator } from '../../src/i18n/index.ts'
import { intlTag } from '../../src/i18n/locales.ts'
import { PROJECT_ROOT } from './binary.ts'
import {
  type AuditResult,
  audit,
  browserMissing,
  expectNoViolations,
  open,
  STEP_TIMEOUT,
  submitWith,
  useBrowser,
} from './browser.ts'

const skipBrowser = browserMissing()
const harness = useBrowser({ tempPrefix: 'intake-browser-answers-', skip: skipBrowser })
const { api, createForm, onlyResponse, responsesOf, pageUrl, withContext } = harness

const SCREENSHOTS = join(PROJECT_ROOT, 'test-output', 'screenshots')
const PHONE = { width: 390, height: 844 }
const ZOOMED = { width: 640, height: 400 }
const LOCALES: Locale[] = ['en', 'de', 'ar', 'ja', 'pl']
/** Screenshots at both widths in these (all of them); axe on every state in all of LOCALES. */
const PICTURED: Locale[] = LOCALES

const words = (locale: Locale) => translator(locale)
const squash = (text: string) => text.replace(/\s+/g, ' ').trim()

async function shoot(page: Page, name: string) {
  mkdirSync(SCREENSHOTS, { recursive: true })
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true })
}

/** axe in light and dark on the page as it stands (a fresh context that may run axe's script), plus a screenshot where asked. */
async function check(page: Page, label: string, results: AuditResult[], picture?: string) {
  results.push(await audit(page, label, 'light', 'all'))
  if (picture) await shoot(page, picture)
}

const send = (page: Page) => submitWith(page, () => page.locator('button[type="submit"]').last().press('Enter'))

/** An expense claim a person reviews before it goes: an amount, a date of birth, a note and a receipt. */
const claimForm = (locale: Locale, extra: Record<string, unknown> = {}) => ({
  title: 'Expense claim',
  page: { locale, review: true, sender: 'Finance team' },
  fields: [
    { key: 'name', type: 'text', label: 'Full name', required: true, config: { max_length: 40 } },
    { key: 'amount', type: 'number', label: 'Amount', required: true, config: { min: 0.01, max: 100000 } },
    { key: 'born', type: 'date', label: 'Date of birth', required: true, config: { autocomplete: 'bday' } },
    { key: 'receipt', type: 'file', label: 'Receipt', config: { max_size: 1024 * 1024 } },
    { key: 'agree', type: 'checkbox', label: 'I confirm this expense was for work', required: true },
  ],
  ...extra,
})

/** 412.80 as a person on the page types it: the page language's way (Arabic digits on an Arabic page). */
const amountIn = (locale: Locale) => new Intl.NumberFormat(intlTag(locale), { minimumFractionDigits: 2 }).format(412.8)
/** A number as the page writes it back (the review, the receipt). */
const written = (locale: Locale, value: number) => new Intl.NumberFormat(intlTag(locale)).format(value)

async function fillClaim(page: Page, locale: Locale, options: { month?: string } = {}) {
  await page.locator('#field-name').fill('Zofia Nowak-Łęcka')
  await page.locator('#field-amount').fill(amountIn(locale))
  await page.locator('[name="_day_born"]').fill('27')
  await page.locator('[name="_month_born"]').fill(options.month ?? '3')
  await page.locator('[name="_year_born"]').fill('1987')
  await page
    .locator('#field-receipt')
    .setInputFiles({ name: 'rachunek-taxi.pdf', mimeType: 'application/pdf', buffer: Buffer.from('%PDF-1.7 receipt') })
  await page.locator('#field-agree').check()
}

describe.skipIf(skipBrowser)('issue 26 in Chromium', () => {
  test(
    'review: nothing recorded before Send; Change keeps every answer and the file; memorable date; the amount in the page language',
    async () => {
      const results: AuditResult[] = []
      for (const locale of LOCALES) {
        for (const [width, viewport] of [
          ['phone', PHONE],
          ['zoomed', ZOOMED],
        ] as const) {
          const pictured = PICTURED.includes(locale) ? `${locale}-${width}` : undefined
          const form = await createForm(claimForm(locale))
          await withContext({ viewport, bypassCSP: true }, async (context) => {
            const { page } = await open(context, pageUrl(form.id))
            expect(await page.locator('[name="_day_born"]').getAttribute('autocomplete')).toBe('bday-day')
            if (width === 'phone')
              await check(page, `${locale} memorable date`, results, pictured && `${pictured}-form-review`)

            // A missing month: the date is refused, every box kept as typed, the rest too.
            await fillClaim(page, locale, { month: '' })
            expect((await send(page)).status()).toBe(422)
            expect(await page.locator('[name="_day_born"]').inputValue()).toBe('27')
            expect(await page.locator('#field-name').inputValue()).toBe('Zofia Nowak-Łęcka')
            expect(await page.locator('#field-amount').inputValue()).toBe(amountIn(locale))
            if (width === 'phone')
              await check(page, `${locale} memorable date refused`, results, pictured && `${pictured}-memorable-422`)

            // Complete it (the file is kept from the refused try): the review page, nothing recorded.
            await page.locator('[name="_month_born"]').fill('3')
            await page.locator('#field-agree').check()
            const reviewed = await send(page)
            if (reviewed.status() !== 200)
              throw new Error(
                `${locale} ${width}: ${reviewed.status()} ${squash(await page.locator('.error-summary').innerText())}`,
              )
            expect(squash(await page.locator('h1').innerText())).toBe(squash(words(locale).t('review.heading')))
            const review = squash(await page.locator('main').innerText())
            expect(review).toContain(squash(written(locale, 412.8)))
            expect(review).toContain('rachunek-taxi.pdf')
            expect(await responsesOf(form.id)).toEqual([])
            if (width === 'phone') await check(page, `${locale} review`, results, pictured && `${pictured}-review`)
            else if (pictured) await shoot(page, `${pictured}-review`)

            // Change the amount: the form, filled, with the file still kept.
            await page.locator('.review-change a').nth(1).click()
            await page.waitForLoadState()
            expect(await page.locator('#field-amount').inputValue()).toBe(amountIn(locale))
            expect(await page.locator('#field-name').inputValue()).toBe('Zofia Nowak-Łęcka')
            expect(squash(await page.locator('main').innerText())).toContain('rachunek-taxi.pdf')
            await page.locator('#field-amount').fill(written(locale, 1234.5))
            const again = await send(page)
            if (again.status() !== 200)
              throw new Error(
                `${locale} ${width}: ${again.status()} ${squash(await page.locator('.error-summary').innerText())}`,
              )

            // Only Send records, exactly what the review showed.
            expect((await send(page)).status()).toBe(303)
            const { data } = await onlyResponse(form.id)
            expect({ amount: data.amount, born: data.born, name: data.name, agree: data.agree }).toEqual({
              amount: 1234.5,
              born: '1987-03-27',
              name: 'Zofia Nowak-Łęcka',
              agree: true,
            })
            expect(typeof data.receipt).toBe('string')
          })
        }
      }
      expectNoViolations(results)
    },
    10 * STEP_TIMEOUT,
  )

  test(
    'a German 412.80 is refused with a German example; the page then takes 412,80',
    async () => {
      const form = await createForm({
        title: 'Spesen',
        page: { locale: 'de' },
        fields: [{ key: 'amount', type: 'number', label: 'Betrag', required: true, config: { min: 0.01, max: 5000 } }],
      })
      const results: AuditResult[] = []
      await withContext({ viewport: PHONE, bypassCSP: true }, async (context) => {
        const { page } = await open(context, pageUrl(form.id))
        await page.locator('#field-amount').fill('412.80')
        expect((await send(page)).status()).toBe(422)
        expect(squash(await page.locator('.error-message').innerText())).toContain('1.234,5')
        await check(page, 'de amount refused', results, 'de-phone-amount-422')
        await page.locator('#field-amount').fill('412,80')
        expect((await send(page)).status()).toBe(303)
        expect((await onlyResponse(form.id)).data).toEqual({ amount: 412.8 })
      })
      expectNoViolations(results)
    },
    STEP_TIMEOUT,
  )

  test(
    'cancelled (410) or answered in another tab (409) while typing: what was sent is shown, ready to copy',
    async () => {
      const results: AuditResult[] = []
      for (const locale of LOCALES) {
        const pictured = PICTURED.includes(locale) ? locale : undefined
        const fields = [
          { key: 'name', type: 'text', label: 'Full name', required: true },
          { key: 'story', type: 'textarea', label: 'What happened?' },
          {
            key: 'contact',
            type: 'select',
            label: 'How should we reply?',
            config: { options: ['Post', 'Email', 'Phone'] },
          },
        ]
        const story = 'The train was late.\nI took a taxi to the airport.'
        for (const ending of ['cancelled', 'answered'] as const) {
          const form = await createForm({ title: 'Complaint', page: { locale }, fields })
          await withContext({ viewport: PHONE, bypassCSP: true }, async (context) => {
            const { page } = await open(context, pageUrl(form.id))
            await page.locator('#field-name').fill('Ada Lovelace')
            await page.locator('#field-story').fill(story)
            await page.locator('label', { hasText: 'Email' }).click()
            if (ending === 'cancelled')
              expect((await api(`/forms/${form.id}`, { method: 'PATCH', body: { status: 'cancelled' } })).status).toBe(
                200,
              )
            else await harness.answerByJson(form.id, { name: 'Someone else' })
            expect((await send(page)).status()).toBe(ending === 'cancelled' ? 410 : 409)
            const copy = await page.locator('textarea[readonly]').inputValue()
            expect(copy).toContain('Ada Lovelace')
            expect(copy).toContain('I took a taxi to the airport.')
            expect(copy).toContain('Email')
            expect(squash(await page.locator('main').innerText())).toContain('Ada Lovelace')
            await check(
              page,
              `${locale} ${ending} with what was sent`,
              results,
              pictured && `${pictured}-phone-${ending}-sent`,
            )
          })
        }
      }
      expectNoViolations(results)
    },
    5 * STEP_TIMEOUT,
  )

  test(
    'a deadline within 48 hours says how long is left, in the page language',
    async () => {
      const results: AuditResult[] = []
      for (const locale of LOCALES) {
        const form = await createForm({
          title: 'Approval',
          page: { locale },
          expires_in: '2h',
          fields: [{ key: 'ok', type: 'checkbox', label: 'Approve' }],
        })
        await withContext({ viewport: ZOOMED, bypassCSP: true }, async (context) => {
          const { page } = await open(context, pageUrl(form.id))
          const left = squash(await page.locator('.closes-in').innerText())
          // 1 hour and some minutes (rounded down), as the language writes it.
          const t = words(locale)
          const expected = Array.from({ length: 30 }, (_, minutes) =>
            squash(t.t('page.closes_in', { duration: t.duration((120 - minutes) * 60_000) })),
          )
          expect(expected).toContain(left)
          await check(
            page,
            `${locale} closes in`,
            results,
            PICTURED.includes(locale) ? `${locale}-zoomed-closes-in` : undefined,
          )
        })
      }
      expectNoViolations(results)
    },
    3 * STEP_TIMEOUT,
  )
})
