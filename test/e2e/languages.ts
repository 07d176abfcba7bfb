/**
 * What the browser tests of the person's page in their language share: the
 * catalog's words, text squashed as a person reads it, sending with the keyboard,
 * the page's language and direction, and the sizes of a phone and a desktop.
 */
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { type Locale, type MessageKey, type MessageParams, translator } from '../../src/i18n/index.ts'
import { PROJECT_ROOT } from './binary.ts'
import { submitWith } from './browser.ts'

// These run inside the page (page.evaluate); the test's own tsconfig has no DOM lib.
declare const document: any
declare function getComputedStyle(element: unknown, pseudo?: string): any

export const SCREENSHOTS = join(PROJECT_ROOT, 'test-output', 'screenshots')
export const PHONE = { width: 390, height: 844 }
export const DESKTOP = { width: 1280, height: 900 }

/** A catalog's words, as the page should write them. */
export const words = (locale: Locale, key: MessageKey, params?: MessageParams) => translator(locale).t(key, params)

/** Text with each run of white space (no-break ones too, as French puts before a colon) made one plain space. */
export const squash = (text: string) => text.replace(/\s+/g, ' ').trim()

/** The text of an element, squashed. */
export const textOf = async (page: Page, selector: string) =>
  squash((await page.locator(selector).first().textContent()) ?? '')

/** Sends the form with the keyboard: Enter on its button. */
export const send = (page: Page) => submitWith(page, () => page.locator('button[type="submit"]').press('Enter'))

/** What `html` says of the page's language and direction. */
export const languageOf = (page: Page) =>
  page.evaluate(() => ({
    lang: document.documentElement.getAttribute('lang') as string | null,
    dir: document.documentElement.getAttribute('dir') as string | null,
    direction: getComputedStyle(document.body).direction as string,
  }))
