/**
 * The human's page in a real browser: the built executable (dist/intake), run
 * from a temp dir, driven by Debian's Chromium through playwright-core.
 *
 * - every field type filled by keyboard alone, the answer read back over the API
 * - a refused answer (422): summary, errors tied to fields, every value kept
 * - a file with random bytes and a non-ASCII name, downloaded back byte-identical
 * - (axe-core on every page a person can see: browser-axe.test.ts)
 * - no scripts, the stylesheet applies, focus is visible
 *
 * Nothing leaves 127.0.0.1: every request a page makes is recorded, and any to
 * another address fails the run.
 *
 * Without Chromium at /usr/bin/chromium they skip, with a line saying how to
 * run them; with INTAKE_REQUIRE_BROWSER=1 (as .ci/run sets) that is a failure.
 */
import { describe, expect, test } from 'bun:test'
import { randomBytes } from 'node:crypto'
import { activeElement, browserMissing, heading, open, STEP_TIMEOUT, submitWith, tabTo, useBrowser } from './browser.ts'
import {
  ANSWERED_HEADING,
  controlValues,
  EVERY_FIELD_TAB_ORDER,
  everyFieldForm,
  RECEIPT_HEADING,
} from './every-field.ts'

// These run inside the page (page.evaluate); the test's own tsconfig has no DOM lib.
declare const document: any
declare function getComputedStyle(element: unknown): any

const skipBrowser = browserMissing()
const harness = useBrowser({ tempPrefix: 'intake-browser-', skip: skipBrowser })
const { createForm, responsesOf, onlyResponse, pageUrl, withContext } = harness

describe.skipIf(skipBrowser)('the form page in Chromium', () => {
  test(
    'every field type filled by keyboard alone arrives through the API with its type; a reload sends nothing again',
    async () => {
      const form = await createForm(everyFieldForm('Keyboard only'))
      const typed = {
        name: `Ada "Lovelace" <&> 'Ünïcødé' ✓`,
        email: 'ada@example.org',
        notes: 'First line\nSecond line\n\nFourth line ✓',
      }
      const upload = { name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('plain text attachment\n') }

      await withContext({}, async (context) => {
        const { page, response } = await open(context, pageUrl(form.id))
        expect(response.status()).toBe(200)
        expect(await activeElement(page)).toBe('body')

        // From the page start, Tab reaches the first field.
        await page.keyboard.press('Tab')
        expect(await activeElement(page)).toBe('#field-name')
        await page.keyboard.type(typed.name)

        await tabTo(page, '#field-email')
        await page.keyboard.type(typed.email)

        await tabTo(page, '#field-notes')
        await page.keyboard.type(typed.notes) // "\n" is the Enter key: a line break in a textarea

        await tabTo(page, '#field-amount')
        await page.keyboard.type('1234.5')

        await tabTo(page, '#field-plan')
        await page.keyboard.press('ArrowDown') // Basic
        await page.keyboard.press('ArrowDown') // Professional

        await tabTo(page, '#field-agree')
        await page.keyboard.press('Space')

        await tabTo(page, '#field-newsletter') // left unticked

        await tabTo(page, '#field-start')
        await page.keyboard.type('03152024') // en-US: month, day, year; each part moves on by itself

        await tabTo(page, '#field-attachment')
        await page.locator('#field-attachment').setInputFiles(upload) // the one control not driven by keys

        await tabTo(page, 'button:Send answer')

        // What the controls hold before sending.
        expect(await controlValues(page)).toEqual({
          ...typed,
          amount: '1234.5',
          plan: 'plan-pro',
          agree: true,
          newsletter: false,
          start: '2024-03-15',
        })

        const posted = await submitWith(page, () => page.keyboard.press('Enter'))
        expect(posted.status()).toBe(303)
        expect(posted.headers().location).toBe(`/f/${form.id}`)
        expect(page.url()).toBe(pageUrl(form.id))
        // The receipt, once: what was sent, the file by its name.
        expect(await heading(page)).toBe(RECEIPT_HEADING)
        const receipt = await page.locator('main').innerText()
        for (const shown of [typed.email, 'Professional', upload.name]) expect(receipt).toContain(shown)

        // A reload asks for the page again (a GET), records nothing, and says only that the form was answered.
        const reloaded = await page.reload({ waitUntil: 'load' })
        expect(reloaded?.request().method()).toBe('GET')
        expect(reloaded?.status()).toBe(200)
        expect(await heading(page)).toBe(ANSWERED_HEADING)
        expect(await page.locator('main').innerText()).not.toContain(typed.email)

        const answer = await onlyResponse(form.id)
        expect(answer.form_id).toBe(form.id)
        const fileUrl = `http://localhost:${harness.server.port}/api/v1/forms/${form.id}/responses/${answer.id}/files/attachment`
        expect(answer.data).toEqual({
          name: typed.name,
          email: typed.email,
          notes: typed.notes,
          amount: 1234.5,
          plan: 'plan-pro',
          agree: true,
          newsletter: false,
          start: '2024-03-15',
          attachment: fileUrl,
        })
        expect(typeof answer.data.amount).toBe('number')
        expect(answer.metadata.user_agent).toBe(
          await page.evaluate(() => (globalThis as any).navigator.userAgent as string),
        )

        const download = await fetch(`${harness.server.url}${new URL(fileUrl).pathname}`, {
          headers: { authorization: `Bearer ${harness.key}` },
        })
        expect(download.status).toBe(200)
        expect(Buffer.from(await download.arrayBuffer()).equals(upload.buffer)).toBe(true)

        // Still exactly one response after the reload.
        expect((await responsesOf(form.id)).map((r) => r.id)).toEqual([answer.id])
      })
    },
    STEP_TIMEOUT,
  )

  test(
    'a refused answer comes back as 422 with a summary, errors tied to each bad field, and every value kept',
    async () => {
      const form = await createForm(everyFieldForm('Second try'))
      await withContext({}, async (context) => {
        const { page } = await open(context, pageUrl(form.id))

        // "ada@localhost" is valid to the browser and refused by the server (no dot in the domain).
        await page.locator('#field-email').fill('ada@localhost')
        expect(await page.locator('#field-email').evaluate((el: any) => el.checkValidity() as boolean)).toBe(true)
        // The other bad values the browser would stop itself, but the form is novalidate: the server's messages report every check.
        expect(await page.locator('form').getAttribute('novalidate')).not.toBeNull()
        await page.locator('#field-name').fill('Al') // min_length 3
        await page.locator('#field-notes').fill('Kept line one\nKept line two')
        await page.locator('#field-amount').fill('20000') // max 10000
        await page.locator('#field-plan').selectOption('plan-team & "co" <x>')
        await page.locator('#field-newsletter').check() // agree stays unticked, though required
        await page.locator('#field-start').fill('2031-02-03') // max 2030-12-31

        const posted = await submitWith(page, () => page.locator('button[type="submit"]').press('Enter'))
        expect(posted.status()).toBe(422)
        expect(page.url()).toBe(pageUrl(form.id))
        expect(await page.title()).toStartWith('Error:')

        const invalid = ['name', 'email', 'amount', 'agree', 'start']
        const valid = ['notes', 'plan', 'newsletter', 'attachment']

        // The summary comes first in the page, before the heading, and links to each bad field.
        const summary = await page.evaluate(() => {
          const first = document.querySelector('main').firstElementChild
          return {
            firstInMain: first?.className as string | undefined,
            role: first?.getAttribute('role') as string | null,
            title: (first?.querySelector('h2')?.textContent ?? '') as string,
            links: [...document.querySelectorAll('.error-summary a')].map((a: any) => ({
              href: a.getAttribute('href') as string,
              text: a.textContent as string,
            })),
          }
        })
        expect(summary.firstInMain).toBe('error-summary')
        expect(summary.role).toBe('alert')
        expect(summary.title).toBe('There is a problem')
        expect(summary.links.map((l) => l.href)).toEqual(invalid.map((k) => `#field-${k}`))
        // Each link repeats its field's own message (GOV.UK's summary), not "Label: message".
        const messages = await page.evaluate(
          (keys: string[]) =>
            keys.map(
              (k) => (document.querySelector(`#field-${k}-error span[dir="auto"]`)?.textContent ?? '') as string,
            ),
          invalid,
        )
        expect(summary.links.map((l) => l.text)).toEqual(messages)
        expect(messages.every((message) => message !== '')).toBe(true)

        // Each bad field: aria-invalid, and a message beside it that aria-describedby points to.
        for (const k of invalid) {
          const state = await page.locator(`#field-${k}`).evaluate((control: any) => {
            const describedBy = (control.getAttribute('aria-describedby') ?? '')
              .split(/\s+/)
              .filter(Boolean) as string[]
            const errors = describedBy
              .map((id) => document.getElementById(id))
              .filter((el: any) => el?.classList.contains('error-message'))
            const message = errors[0]
            return {
              ariaInvalid: control.getAttribute('aria-invalid') as string | null,
              errorInDescribedBy: errors.length,
              messageText: ((message?.textContent ?? '') as string).trim(),
              sameField: Boolean(message) && message.closest('.field') === control.closest('.field'),
              messageVisible: Boolean(message) && message.getBoundingClientRect().height > 0,
            }
          })
          expect({ field: k, ...state, messageText: state.messageText.length > 'Error: '.length }).toEqual({
            field: k,
            ariaInvalid: 'true',
            errorInDescribedBy: 1,
            messageText: true,
            sameField: true,
            messageVisible: true,
          })
          expect(state.messageText).toStartWith('Error: ')
        }
        for (const k of valid) {
          expect({ field: k, ariaInvalid: await page.locator(`#field-${k}`).getAttribute('aria-invalid') }).toEqual({
            field: k,
            ariaInvalid: null,
          })
        }

        // A summary link takes the person to the field.
        await page.locator('.error-summary a[href="#field-amount"]').click()
        expect(await page.evaluate(() => document.querySelector(':target')?.id as string | undefined)).toBe(
          'field-amount',
        )

        // Every value typed is still in its control.
        expect(await controlValues(page)).toEqual({
          name: 'Al',
          email: 'ada@localhost',
          notes: 'Kept line one\nKept line two',
          amount: '20000',
          plan: 'plan-team & "co" <x>',
          agree: false,
          newsletter: true,
          start: '2031-02-03',
        })
        expect(await responsesOf(form.id)).toEqual([])

        // Fixing only the bad fields is enough: what was kept is sent again as it was.
        await page.locator('#field-name').fill('Alan Turing')
        await page.locator('#field-email').fill('alan@example.org')
        await page.locator('#field-amount').fill('42')
        await page.locator('#field-agree').check()
        await page.locator('#field-start').fill('2030-12-31')
        const fixed = await submitWith(page, () => page.locator('button[type="submit"]').press('Space'))
        expect(fixed.status()).toBe(303)
        expect(await heading(page)).toBe(RECEIPT_HEADING)
        expect((await onlyResponse(form.id)).data).toEqual({
          name: 'Alan Turing',
          email: 'alan@example.org',
          notes: 'Kept line one\nKept line two',
          amount: 42,
          plan: 'plan-team & "co" <x>',
          agree: true,
          newsletter: true,
          start: '2030-12-31',
        })
      })
    },
    STEP_TIMEOUT,
  )

  test(
    'on a German page, 412,80 typed into the amount is stored as 412.8 and the receipt says 412,8',
    async () => {
      const form = await createForm({
        title: 'Spesen',
        fields: [{ key: 'amount', type: 'number', label: 'Betrag', config: { min: 0.01, max: 100000 } }],
      })
      await withContext({ locale: 'de-DE' }, async (context) => {
        const { page } = await open(context, pageUrl(form.id))
        const amount = page.locator('#field-amount')
        expect({ type: await amount.getAttribute('type'), inputmode: await amount.getAttribute('inputmode') }).toEqual({
          type: 'text',
          inputmode: 'decimal',
        })
        await amount.click()
        await page.keyboard.type('412,80')
        const posted = await submitWith(page, () => page.locator('button[type="submit"]').press('Enter'))
        expect(posted.status()).toBe(303)
        expect((await onlyResponse(form.id)).data).toEqual({ amount: 412.8 })
        expect(await page.locator('.receipt-answer').innerText()).toBe('412,8')
      })
    },
    STEP_TIMEOUT,
  )

  test(
    'a file of random bytes with a non-ASCII name downloads back byte-identical through the API',
    async () => {
      const form = await createForm({
        title: 'Upload',
        fields: [
          {
            key: 'document',
            type: 'file',
            label: 'Signed contract',
            required: true,
            config: { max_size: 2 * 1024 * 1024 },
          },
          { key: 'comment', type: 'text', label: 'Comment' },
        ],
      })
      const upload = {
        name: 'Überweisung – 日本語 ✓ ü.bin',
        mimeType: 'application/octet-stream',
        buffer: randomBytes(300_000),
      }
      await withContext({}, async (context) => {
        const { page } = await open(context, pageUrl(form.id))
        expect(await page.locator('form').getAttribute('enctype')).toBe('multipart/form-data')
        await page.locator('#field-document').setInputFiles(upload)
        await page.locator('#field-comment').fill('Zürich')
        const posted = await submitWith(page, () => page.locator('button[type="submit"]').press('Enter'))
        expect(posted.status()).toBe(303)
        expect(await heading(page)).toBe(RECEIPT_HEADING)
        expect(await page.locator('main').innerText()).toContain(upload.name)
      })

      const answer = await onlyResponse(form.id)
      const fileUrl = answer.data.document
      expect(fileUrl).toBe(
        `http://localhost:${harness.server.port}/api/v1/forms/${form.id}/responses/${answer.id}/files/document`,
      )
      expect(answer.data.comment).toBe('Zürich')
      const path = new URL(String(fileUrl)).pathname

      // Without the key: refused.
      expect((await fetch(`${harness.server.url}${path}`)).status).toBe(403)

      const res = await fetch(`${harness.server.url}${path}`, { headers: { authorization: `Bearer ${harness.key}` } })
      expect(res.status).toBe(200)
      const bytes = Buffer.from(await res.arrayBuffer())
      expect(bytes.length).toBe(upload.buffer.length)
      expect(bytes.equals(upload.buffer)).toBe(true)
      expect(res.headers.get('content-type')).toBe(upload.mimeType)
      const disposition = res.headers.get('content-disposition') ?? ''
      expect(disposition).toMatch(/^attachment;/)
      const exact = /filename\*=UTF-8''([^;\s]+)/i.exec(disposition)
      expect(exact).not.toBeNull()
      expect(decodeURIComponent(exact![1]!)).toBe(upload.name)
    },
    STEP_TIMEOUT,
  )

  test(
    'no scripts, the stylesheet applies under the real CSP, and every tab stop shows a visible focus ring',
    async () => {
      const form = await createForm(everyFieldForm('Looks and focus'))
      await withContext({}, async (context) => {
        // The browser's own look of a button, for comparison.
        const blank = await context.newPage()
        await blank.setContent('<button>plain</button>')
        const defaultButton = await blank
          .locator('button')
          .evaluate((el: any) => getComputedStyle(el).backgroundColor as string)
        await blank.close()

        const page = await context.newPage()
        const consoleErrors: string[] = []
        page.on('console', (message) => {
          if (message.type() === 'error') consoleErrors.push(message.text())
        })
        const stylesheets: { url: string; status: number; type: string | undefined }[] = []
        page.on('response', (res) => {
          if (res.request().resourceType() === 'stylesheet')
            stylesheets.push({ url: res.url(), status: res.status(), type: res.headers()['content-type'] })
        })
        const response = await page.goto(pageUrl(form.id), { waitUntil: 'load' })
        expect(response?.status()).toBe(200)
        const csp = response?.headers()['content-security-policy'] ?? ''
        expect(csp).toContain("default-src 'none'")
        expect(csp).toContain("style-src 'self'")
        expect(csp).not.toContain('unsafe-inline')

        // No script of any kind, and no inline event handler.
        expect(await response!.text()).not.toMatch(/<script/i)
        const scripting = await page.evaluate(() => ({
          scripts: document.querySelectorAll('script').length as number,
          handlers: [...document.querySelectorAll('*')].flatMap((el: any) =>
            [...el.attributes].filter((a: any) => /^on/i.test(a.name)).map((a: any) => `${el.tagName}[${a.name}]`),
          ) as string[],
        }))
        expect(scripting).toEqual({ scripts: 0, handlers: [] })

        // The one stylesheet loaded, from the app, and its rules apply.
        expect(stylesheets).toHaveLength(1)
        expect(stylesheets[0]!.url).toMatch(
          new RegExp(`^${harness.server.url.replace(/\./g, '\\.')}/assets/style-[0-9a-z]+\\.css$`),
        )
        expect(stylesheets[0]!.status).toBe(200)
        expect(stylesheets[0]!.type).toMatch(/^text\/css/)
        const applied = await page.evaluate(() => ({
          sheets: document.styleSheets.length as number,
          rules: document.styleSheets[0]?.cssRules.length as number,
          button: getComputedStyle(document.querySelector('button[type="submit"]')).backgroundColor as string,
        }))
        expect(applied.sheets).toBe(1)
        expect(applied.rules).toBeGreaterThan(10)
        expect(applied.button).not.toBe(defaultButton)
        expect(applied.button).not.toBe('rgba(0, 0, 0, 0)')
        expect(consoleErrors.filter((text) => /Content Security Policy|Refused to/i.test(text))).toEqual([])

        // Tab through the whole form: each stop in order, each with a visible focus indicator.
        const seen: { at: string; outlineStyle: string; outlineWidth: string; focusVisible: boolean }[] = []
        for (const stop of EVERY_FIELD_TAB_ORDER) {
          if (seen.length === 0) {
            await page.keyboard.press('Tab')
            expect(await activeElement(page)).toBe(stop)
          } else {
            await tabTo(page, stop)
          }
          seen.push(
            await page.evaluate(() => {
              const el = document.activeElement
              const style = getComputedStyle(el)
              return {
                at: el.id ? `#${el.id}` : `${el.tagName.toLowerCase()}:${el.textContent.trim()}`,
                outlineStyle: style.outlineStyle as string,
                outlineWidth: style.outlineWidth as string,
                focusVisible: el.matches(':focus-visible') as boolean,
              }
            }),
          )
        }
        for (const stop of seen) {
          expect({
            at: stop.at,
            focusVisible: stop.focusVisible,
            outlineNone: stop.outlineStyle === 'none',
            outlineWide: parseFloat(stop.outlineWidth) >= 2,
          }).toEqual({
            at: stop.at,
            focusVisible: true,
            outlineNone: false,
            outlineWide: true,
          })
        }
        // Past the button, focus leaves the form: no trap.
        await page.keyboard.press('Tab')
        expect(await activeElement(page)).not.toBe('button:Send answer')
      })
    },
    STEP_TIMEOUT,
  )
})
