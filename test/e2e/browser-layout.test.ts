/**
 * What only a browser shows of the page's layout (issue 26, points 7 and 8;
 * CONTRACT 14), in Chromium at a phone (390x844) and at 200% zoom on a laptop
 * (640x400), in en, de, ar, ja and pl:
 *
 * - a followed error-summary link shows the control and its message on screen,
 *   with a long description and a long label above them
 * - radios and checkboxes are at least 40x40 CSS px, their labels beside them
 *   and on the box's middle
 * - errors keep a visible mark in forced colours; print shows no focus ring
 * - axe-core: no violation of any impact on those pages
 *
 * Nothing leaves 127.0.0.1. Without Chromium these skip (INTAKE_REQUIRE_BROWSER=1 makes that a failure).
 */
import { describe, expect, test } from 'bun:test'
import type { Page } from 'playwright-core'
import type { Locale } from '../../src/i18n/index.ts'
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

// These run inside the page (page.evaluate); the test's own tsconfig has no DOM lib.
declare const document: any
declare const innerHeight: number
declare function getComputedStyle(element: unknown): any
declare function matchMedia(query: string): { matches: boolean }

const skipBrowser = browserMissing()
const harness = useBrowser({ tempPrefix: 'intake-browser-layout-', skip: skipBrowser })
const { createForm, pageUrl, withContext } = harness

const PHONE = { width: 390, height: 844 }
/** A 1280x800 laptop at 200% zoom. */
const ZOOMED = { width: 640, height: 400 }
const LOCALES: Locale[] = ['en', 'de', 'ar', 'ja', 'pl']

/** Long words above each control, in the page's language where it matters for width (Japanese takes two columns a character). */
const LONG: Record<Locale, { label: string; description: string }> = {
  ja: {
    label:
      '現在お住まいの住所に引っ越してきたのはいつですか。正確な日付がわからない場合は、おおよその時期を書いてください',
    description:
      '正確な日がわからない場合は、引っ越した月の最初の日を選んでください。これは住民税の記録を確認するために使います。\n世帯の人数には、一年の半分以上一緒に住んでいる子ども、パートナー、親族を含めてください。',
  },
} as Record<Locale, { label: string; description: string }>
const ENGLISH = {
  label: 'Your full name, as it appears on your passport, identity card or residence permit, with every family name',
  description:
    'If you have more than one family name, write all of them in the order they appear on the document.\nCount children, partners and relatives who live with you for more than half of the year. Do not count lodgers. This helps us check your council tax records and the support you may be entitled to.',
}
const long = (locale: Locale) => LONG[locale] ?? ENGLISH

/** A form whose failing fields each have a long label and description: every kind of control the page draws. */
const layoutForm = (locale: Locale) => {
  const { label, description } = long(locale)
  return {
    title: 'Layout',
    description: 'Please read each question carefully.',
    page: { locale },
    fields: [
      { key: 'code', type: 'text', label, description, required: true, config: { max_length: 40 } },
      { key: 'story', type: 'textarea', label, description, required: true },
      {
        key: 'contact',
        type: 'select',
        label,
        description,
        required: true,
        config: { options: ['Post', 'Email', 'Phone'] },
      },
      {
        key: 'income',
        type: 'select',
        label,
        description,
        config: { multiple: true, max_selected: 1, options: ['Wages', 'Pension', 'Benefits'] },
      },
      {
        key: 'country',
        type: 'select',
        label,
        description,
        required: true,
        config: { autocomplete: 'country', options: ['France', 'Germany', 'Japan'] },
      },
      { key: 'declaration', type: 'checkbox', label, description, required: true },
      { key: 'mail', type: 'email', label, description, required: true },
    ],
  }
}
const FAILING = ['code', 'story', 'contact', 'income', 'country', 'declaration', 'mail']

/** Opens the form and sends it wrong: too long a code, two incomes where one is allowed, the rest empty. */
async function refusedPage(page: Page, formId: string) {
  await page.goto(pageUrl(formId), { waitUntil: 'load' })
  await page.locator('#field-code').fill('x'.repeat(66))
  await page.locator('#field-income').check()
  await page.locator('#field-income-1').check()
  const refused = await submitWith(page, () => page.locator('button[type="submit"]').press('Enter'))
  expect(refused.status()).toBe(422)
}

interface Box {
  top: number
  bottom: number
}

/** Where a field's control and its error message are in the viewport. */
const placementOf = (page: Page, key: string) =>
  page.evaluate((key: string) => {
    const box = (el: any) => {
      const rect = el.getBoundingClientRect()
      return { top: Math.round(rect.top), bottom: Math.round(rect.bottom) }
    }
    return {
      control: box(document.getElementById(`field-${key}`)) as Box,
      message: box(document.getElementById(`field-${key}-error`)) as Box,
      height: innerHeight as number,
    }
  }, key)

describe.skipIf(skipBrowser)('a followed error link shows the control and its message', () => {
  for (const viewport of [ZOOMED, PHONE]) {
    test(
      `at ${viewport.width}x${viewport.height}, in ${LOCALES.join(', ')}, with a long description and label above each`,
      async () => {
        for (const locale of LOCALES) {
          const form = await createForm(layoutForm(locale))
          await withContext({ viewport }, async (context) => {
            const page = await context.newPage()
            await refusedPage(page, form.id)
            const links = await page
              .locator('.error-summary a')
              .evaluateAll((as: any[]) => as.map((a) => a.getAttribute('href') as string))
            expect({ locale, links }).toEqual({ locale, links: FAILING.map((key) => `#field-${key}`) })
            for (const key of FAILING) {
              await page.evaluate(() => (globalThis as any).scrollTo(0, 0))
              await page.locator(`.error-summary a[href="#field-${key}"]`).click()
              await page.waitForFunction((hash: string) => (globalThis as any).location.hash === hash, `#field-${key}`)
              const { control, message, height } = await placementOf(page, key)
              const seen = {
                locale,
                key,
                controlInView: control.top >= 0 && control.bottom <= height,
                messageInView: message.top >= 0 && message.bottom <= height,
              }
              if (!seen.controlInView || !seen.messageInView)
                console.error(
                  `after following the link: ${JSON.stringify({ locale, key, viewport, control, message })}`,
                )
              expect(seen).toEqual({ locale, key, controlInView: true, messageInView: true })
            }
          })
        }
      },
      STEP_TIMEOUT * 3,
    )
  }
})

describe.skipIf(skipBrowser)('radios and checkboxes', () => {
  test(
    "are at least 40x40 CSS px, each label beside its box and its first line on the box's middle (ltr and rtl)",
    async () => {
      for (const locale of ['en', 'ar'] as const) {
        const form = await createForm(layoutForm(locale))
        await withContext({ viewport: PHONE }, async (context) => {
          const { page } = await open(context, pageUrl(form.id))
          const boxes = await page.evaluate(() =>
            [...document.querySelectorAll('input[type="radio"], input[type="checkbox"]')].map((input: any) => {
              const box = input.getBoundingClientRect()
              const label = document.querySelector(`label[for="${input.id}"]`)
              const range = document.createRange()
              range.selectNodeContents(label)
              const line = range.getClientRects()[0]
              return {
                id: input.id as string,
                width: Math.round(box.width),
                height: Math.round(box.height),
                middleOff: Math.abs((line.top + line.bottom) / 2 - (box.top + box.bottom) / 2),
                beside: (getComputedStyle(document.documentElement).direction === 'rtl'
                  ? line.right <= box.left
                  : line.left >= box.right) as boolean,
              }
            }),
          )
          expect(boxes.length).toBe(7)
          for (const box of boxes) {
            expect({
              locale,
              id: box.id,
              big: box.width >= 40 && box.height >= 40,
              beside: box.beside,
              aligned: box.middleOff <= 3,
            }).toEqual({
              locale,
              id: box.id,
              big: true,
              beside: true,
              aligned: true,
            })
          }
        })
      }
    },
    STEP_TIMEOUT,
  )
})

describe.skipIf(skipBrowser)('errors in forced colours and in print', () => {
  test(
    'forced colours keep a mark on each invalid field: its bar and a thicker border than a valid control',
    async () => {
      const form = await createForm({
        ...layoutForm('en'),
        fields: [...layoutForm('en').fields, { key: 'fine', type: 'text', label: 'Fine' }],
      })
      await withContext({ viewport: PHONE }, async (context) => {
        const page = await context.newPage()
        await page.emulateMedia({ forcedColors: 'active' })
        await refusedPage(page, form.id)
        const styles = await page.evaluate(() => {
          const width = (el: any, side: string) => parseFloat(getComputedStyle(el)[`border${side}Width`])
          const field = document.getElementById('field-code').closest('.field')
          return {
            forced: matchMedia('(forced-colors: active)').matches,
            bar: {
              style: getComputedStyle(field).borderInlineStartStyle as string,
              width: parseFloat(getComputedStyle(field).borderInlineStartWidth),
            },
            invalid: ['code', 'story', 'country', 'mail'].map((key) =>
              width(document.getElementById(`field-${key}`), 'Top'),
            ),
            valid: width(document.getElementById('field-fine'), 'Top'),
            summary: {
              style: getComputedStyle(document.querySelector('.error-summary')).borderTopStyle as string,
              width: width(document.querySelector('.error-summary'), 'Top'),
            },
          }
        })
        expect(styles.forced).toBe(true)
        expect(styles.bar.style).toBe('solid')
        expect(styles.bar.width).toBeGreaterThanOrEqual(3)
        for (const width of styles.invalid) expect(width).toBeGreaterThan(styles.valid)
        expect(styles.summary.style).toBe('solid')
        expect(styles.summary.width).toBeGreaterThanOrEqual(2)
      })
    },
    STEP_TIMEOUT,
  )

  test(
    'printed, the focused summary has no focus ring',
    async () => {
      const form = await createForm(layoutForm('en'))
      await withContext({ viewport: PHONE }, async (context) => {
        const page = await context.newPage()
        await refusedPage(page, form.id)
        const ring = () =>
          page.evaluate(() => {
            const summary = document.querySelector('.error-summary')
            const style = getComputedStyle(summary)
            return {
              focused: document.activeElement === summary,
              outline: style.outlineStyle === 'none' ? 'none' : `${style.outlineStyle} ${style.outlineWidth}`,
              shadow: style.boxShadow as string,
            }
          })
        expect((await ring()).outline).not.toBe('none')
        await page.emulateMedia({ media: 'print' })
        expect(await ring()).toEqual({ focused: true, outline: 'none', shadow: 'none' })
      })
    },
    STEP_TIMEOUT,
  )
})

describe.skipIf(skipBrowser)('axe-core', () => {
  test(
    'no violation of any impact on the refused page, at both sizes, in en, ar and ja',
    async () => {
      const results: AuditResult[] = []
      for (const locale of ['en', 'ar', 'ja'] as const) {
        const form = await createForm(layoutForm(locale))
        for (const viewport of [PHONE, ZOOMED]) {
          await withContext({ viewport, bypassCSP: true }, async (context) => {
            const page = await context.newPage()
            await refusedPage(page, form.id)
            results.push(await audit(page, `422 ${locale} ${viewport.width}x${viewport.height}`, 'light', 'all'))
          })
        }
      }
      expectNoViolations(results)
    },
    STEP_TIMEOUT * 2,
  )
})
