/**
 * axe-core (WCAG 2.0/2.1/2.2 A and AA) on every page a person can see, light and
 * dark, in a real browser: the built executable driven by Debian's Chromium
 * through playwright-core. Nothing leaves 127.0.0.1. Without Chromium these skip
 * (INTAKE_REQUIRE_BROWSER=1 makes that a failure).
 */
import { describe, expect, test } from 'bun:test'
import type { Page } from 'playwright-core'
import {
  type AuditResult,
  audit,
  browserMissing,
  expectNoViolations,
  heading,
  open,
  SCHEMES,
  STEP_TIMEOUT,
  submitWith,
  useBrowser,
} from './browser.ts'
import { ANSWERED_HEADING, everyFieldForm, RECEIPT_HEADING, VALID_JSON_ANSWER } from './every-field.ts'

// These run inside the page (page.evaluate); the test's own tsconfig has no DOM lib.
declare const document: any
declare function getComputedStyle(element: unknown): any

const skipBrowser = browserMissing()
const harness = useBrowser({ tempPrefix: 'intake-browser-', skip: skipBrowser })
const { api, createForm, onlyResponse, answerByJson, pageUrl, withContext, withContexts } = harness

// ------------------------------------------------------------------- axe-core

/** Serious and critical violations only: the every-field pages (browser-languages.test.ts holds every state to no violation of any impact). */
const expectNoSeriousViolations = expectNoViolations

/** Opens `url` in a fresh light and a fresh dark context, checks what was served, audits each. */
async function auditUrlInBothSchemes(
  label: string,
  url: string,
  expected: { status: number; heading: string },
): Promise<AuditResult[]> {
  const results: AuditResult[] = []
  for (const scheme of SCHEMES) {
    results.push(
      await withContext({ colorScheme: scheme, bypassCSP: true }, async (context) => {
        const { page, response } = await open(context, url)
        expect({ label, status: response.status(), heading: await heading(page) }).toEqual({ label, ...expected })
        return audit(page, label, scheme)
      }),
    )
  }
  return results
}

// ---------------------------------------------------------------------- tests

describe.skipIf(skipBrowser)(
  'axe-core audit (WCAG 2.x A and AA), light and dark: no serious or critical violation',
  () => {
    test(
      'the form page with every field type',
      async () => {
        const form = await createForm(everyFieldForm('Audit: the form'))
        expectNoSeriousViolations(
          await auditUrlInBothSchemes('form', pageUrl(form.id), { status: 200, heading: 'Audit: the form' }),
        )
      },
      STEP_TIMEOUT,
    )

    test(
      'the 422 page',
      async () => {
        const form = await createForm(everyFieldForm('Audit: errors'))
        const results: AuditResult[] = []
        for (const scheme of SCHEMES) {
          results.push(
            await withContext({ colorScheme: scheme, bypassCSP: true }, async (context) => {
              const { page } = await open(context, pageUrl(form.id))
              expect(await page.locator('form').getAttribute('novalidate')).not.toBeNull()
              await page.locator('#field-name').fill('Al')
              await page.locator('#field-email').fill('ada@localhost')
              await page.locator('#field-amount').fill('20000')
              await page.locator('#field-start').fill('2031-02-03')
              const posted = await submitWith(page, () => page.locator('button[type="submit"]').press('Enter'))
              expect(posted.status()).toBe(422)
              expect(await page.locator('.error-summary').count()).toBe(1)
              return audit(page, '422', scheme)
            }),
          )
        }
        expectNoSeriousViolations(results)
      },
      STEP_TIMEOUT,
    )

    test(
      'the 422 page keeping a file, and the receipt',
      async () => {
        const results: AuditResult[] = []
        for (const scheme of SCHEMES) {
          // A form per scheme: the receipt needs an answer of its own.
          const form = await createForm({
            title: 'Audit: kept file and receipt',
            fields: [
              { key: 'name', type: 'text', label: 'Your name', required: true },
              { key: 'document', type: 'file', label: 'Document', required: true },
              { key: 'agree', type: 'checkbox', label: 'I agree' },
            ],
          })
          results.push(
            ...(await withContext({ colorScheme: scheme, bypassCSP: true }, async (context) => {
              const { page } = await open(context, pageUrl(form.id))
              expect(await page.locator('form').getAttribute('novalidate')).not.toBeNull()
              await page
                .locator('#field-document')
                .setInputFiles({ name: 'scan.pdf', mimeType: 'application/pdf', buffer: Buffer.from('%PDF kept') })
              const refused = await submitWith(page, () => page.locator('button[type="submit"]').press('Enter'))
              expect(refused.status()).toBe(422)
              expect(await page.locator('.held-file').count()).toBe(1)
              const kept = await audit(page, '422 keeping a file', scheme)
              // The kept file is sent with the answer: no file chosen again.
              await page.locator('#field-name').fill('Ada')
              const sent = await submitWith(page, () => page.locator('button[type="submit"]').press('Enter'))
              expect(sent.status()).toBe(303)
              expect(await heading(page)).toBe(RECEIPT_HEADING)
              expect(await page.locator('.receipt').textContent()).toContain('scan.pdf')
              return [kept, await audit(page, 'receipt', scheme)]
            })),
          )
        }
        expectNoSeriousViolations(results)
      },
      STEP_TIMEOUT,
    )

    test(
      'the answered page (a later visit)',
      async () => {
        const form = await createForm(everyFieldForm('Audit: thanks'))
        await answerByJson(form.id, VALID_JSON_ANSWER)
        expectNoSeriousViolations(
          await auditUrlInBothSchemes('answered', pageUrl(form.id), { status: 200, heading: ANSWERED_HEADING }),
        )
      },
      STEP_TIMEOUT,
    )

    test(
      'the 409 page: a tab opened before the first answer sends a second one',
      async () => {
        const form = await createForm(everyFieldForm('Audit: answered'))
        const results = await withContexts(
          [
            { colorScheme: 'light', bypassCSP: true },
            { colorScheme: 'dark', bypassCSP: true },
          ],
          async ([light, dark]) => {
            // Three tabs on the active form: the first answers, the other two are late.
            const first = (await open(light!, pageUrl(form.id))).page
            const late = [
              { scheme: 'light' as const, page: (await open(light!, pageUrl(form.id))).page },
              { scheme: 'dark' as const, page: (await open(dark!, pageUrl(form.id))).page },
            ]
            const fillValid = async (page: Page, name: string) => {
              await page.locator('#field-name').fill(name)
              await page.locator('#field-email').fill('late@example.org')
              await page.locator('#field-plan').selectOption('plan-basic')
              await page.locator('#field-agree').check()
            }
            await fillValid(first, 'First Person')
            const won = await submitWith(first, () => first.locator('button[type="submit"]').press('Enter'))
            expect(won.status()).toBe(303)

            const audits: AuditResult[] = []
            for (const { scheme, page } of late) {
              await fillValid(page, `Late ${scheme}`)
              const refused = await submitWith(page, () => page.locator('button[type="submit"]').press('Enter'))
              expect(refused.status()).toBe(409)
              expect(await heading(page)).toBe('This form was already answered')
              audits.push(await audit(page, '409', scheme))
            }
            return audits
          },
        )
        expect((await onlyResponse(form.id)).data.name).toBe('First Person')
        expectNoSeriousViolations(results)
      },
      STEP_TIMEOUT,
    )

    test(
      'the cancelled page (410)',
      async () => {
        const form = await createForm(everyFieldForm('Audit: cancelled'))
        const res = await api(`/forms/${form.id}`, { method: 'PATCH', body: { status: 'cancelled' } })
        expect({ status: res.status, formStatus: res.body.status }).toEqual({ status: 200, formStatus: 'cancelled' })
        expectNoSeriousViolations(
          await auditUrlInBothSchemes('cancelled', pageUrl(form.id), {
            status: 410,
            heading: 'This form was cancelled',
          }),
        )
      },
      STEP_TIMEOUT,
    )

    test(
      'the expired page (410)',
      async () => {
        const form = await createForm(everyFieldForm('Audit: expired'))
        const expiresAt = Date.now() + 2_000
        const res = await api(`/forms/${form.id}`, {
          method: 'PATCH',
          body: { expires_at: new Date(expiresAt).toISOString() },
        })
        expect(res.status).toBe(200)
        // Still answerable until then.
        expect((await fetch(pageUrl(form.id))).status).toBe(200)
        await Bun.sleep(Math.max(0, expiresAt - Date.now()) + 250)
        expectNoSeriousViolations(
          await auditUrlInBothSchemes('expired', pageUrl(form.id), { status: 410, heading: 'This form has expired' }),
        )
      },
      STEP_TIMEOUT,
    )

    test(
      'the 404 page',
      async () => {
        const unknown = '01ARZ3NDEKTSV4RRFFQ69G5FAV'
        expect((await api(`/forms/${unknown}`)).status).toBe(404)
        expectNoSeriousViolations(
          await auditUrlInBothSchemes('404', pageUrl(unknown), { status: 404, heading: 'Form not found' }),
        )
      },
      STEP_TIMEOUT,
    )
  },
)

test.skipIf(skipBrowser)('no page made a request to anything but the intake server on 127.0.0.1', () => {
  expect(harness.foreignRequests).toEqual([])
})
