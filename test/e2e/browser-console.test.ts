/**
 * The console in a real browser (Debian's Chromium through playwright-core,
 * the built executable): every page of CONSOLE_PAGES at phone (390 px) and
 * desktop (1280 px) width, light and dark, axe-clean (WCAG 2.x A and AA), no
 * horizontal scroll, every control reached with Tab; screenshots in
 * test-output/console/<name>-<width>.png for a person to look at.
 *
 * Nothing leaves 127.0.0.1. Without Chromium these skip (INTAKE_REQUIRE_BROWSER=1 makes that a failure).
 */
import { beforeAll, describe, expect, test } from 'bun:test'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { PROJECT_ROOT } from './binary.ts'
import {
  type AuditResult,
  audit,
  browserMissing,
  expectNoViolations,
  open,
  SCHEMES,
  STEP_TIMEOUT,
  useBrowser,
} from './browser.ts'
import { CONSOLE_PAGES, type ConsolePage, type ConsoleWalkContext } from './console-pages.ts'
import { everyFieldForm, VALID_JSON_ANSWER } from './every-field.ts'

// These run inside the page (page.evaluate); the test's own tsconfig has no DOM lib.
declare const document: any

const SHOTS = join(PROJECT_ROOT, 'test-output', 'console')
const WIDTHS = [390, 1280] as const
const PASSWORD = 'correct horse battery staple'

const skipBrowser = browserMissing()
const harness = useBrowser({ tempPrefix: 'intake-browser-console-', skip: skipBrowser })

/** A browser's request to the server under test, redirects not followed. */
const browse = (path: string, options: { cookie?: string; fields?: Record<string, string> } = {}) =>
  fetch(`${harness.server.url}${path}`, {
    method: options.fields ? 'POST' : 'GET',
    headers: { accept: 'text/html', ...(options.cookie ? { cookie: options.cookie } : {}) },
    body: options.fields ? new URLSearchParams(options.fields) : undefined,
    redirect: 'manual',
  })

const cookieOf = (response: Response) => {
  const pair = response.headers.get('set-cookie')?.split(';')[0]
  if (!pair) throw new Error(`no session cookie (${response.status})`)
  return pair
}

/** Signs in through a set-up link's path (the first operator's asks an email too). */
async function setUp(path: string, email?: string) {
  return cookieOf(await browse(path, { fields: { ...(email ? { email } : {}), password: PASSWORD, again: PASSWORD } }))
}

/** Adds a user through the operator's Users page: the set-up link's path it shows once. */
async function addUser(operator: string, email: string, role: string) {
  const page = await (await browse('/console/password', { cookie: operator })).text()
  const csrf = /name="csrf" value="([^"]+)"/.exec(page)![1]!
  const added = await (await browse('/console/users', { cookie: operator, fields: { csrf, email, role } })).text()
  return new URL(/value="(http[^"]+\/console\/setup\/[^"]+)"/.exec(added)![1]!).pathname
}

const world = {} as ConsoleWalkContext
const cookies = {} as Record<'operator' | 'member', string>

beforeAll(async () => {
  if (skipBrowser) return
  const firstLink = /(http:\/\/\S+\/console\/setup\/[A-Za-z0-9_-]{43})/.exec(harness.server.stdout())![1]!
  cookies.operator = await setUp(new URL(firstLink).pathname, 'ops@example.com')
  const accounts = await (await browse('/console', { cookie: cookies.operator })).text()
  world.accountId = /href="\/console\/accounts\/([0-9A-Z]{26})">default</.exec(accounts)![1]!
  cookies.member = await setUp(await addUser(cookies.operator, 'member@example.com', 'default'))
  world.setupPath = await addUser(cookies.operator, 'pending@example.com', ':operator')
  world.formId = (await harness.createForm(everyFieldForm('Walk: every field'))).id
  world.answeredFormId = (await harness.createForm(everyFieldForm('Walk: answered'))).id
  await harness.answerByJson(world.answeredFormId, VALID_JSON_ANSWER)
}, STEP_TIMEOUT)

/** Whether the page scrolls sideways (wider than its viewport). */
/** Whether the page scrolls sideways, and if so the elements sticking out past the viewport's right edge. */
const scrollsSideways = (page: Page) =>
  page.evaluate(() => {
    const width = document.documentElement.clientWidth
    if (document.documentElement.scrollWidth <= width) return false
    return [...document.querySelectorAll('body *')]
      .filter((el) => el.getBoundingClientRect().right > width + 1)
      .slice(0, 4)
      .map((el) => `${el.tagName.toLowerCase()}.${el.className}: ${(el.textContent ?? '').trim().slice(0, 40)}`)
  })

/** The controls Tab never reached, pressing Tab once more than there are controls. */
async function controlsTabMisses(page: Page): Promise<string[]> {
  const controls: string[] = await page.evaluate(() => {
    const found = [
      ...document.querySelectorAll('a[href], button, input:not([type="hidden"]), select, textarea, summary'),
      // A disabled control (the preview's fieldset) is out of the tab order by design.
    ].filter(
      (el: any) =>
        (!el.matches(':disabled') && el.getClientRects().length > 0) || el.classList.contains('console-skip'),
    )
    return found.map((el: any) => {
      // A radio group is one tab stop (arrow keys move within it): any of its radios reaches it.
      const walk =
        el.type === 'radio'
          ? `radio ${el.name}`
          : `${el.tagName.toLowerCase()} ${(el.getAttribute('href') ?? el.getAttribute('name') ?? el.textContent ?? '').trim().slice(0, 40)}`
      el.setAttribute('data-walk', walk)
      return walk
    })
  })
  const wanted = new Set(controls)
  const reached = new Set<string>()
  // A date-and-time input takes a stop for each of its parts: room for them, until every control is reached.
  for (let press = 0; press <= controls.length * 4 && reached.size < wanted.size; press++) {
    await page.keyboard.press('Tab')
    const walk = await page.evaluate(() => document.activeElement?.getAttribute('data-walk') ?? null)
    if (walk !== null) reached.add(walk)
  }
  return [...wanted].filter((walk) => !reached.has(walk))
}

async function walk(entry: ConsolePage) {
  mkdirSync(SHOTS, { recursive: true })
  const results: AuditResult[] = []
  const as = entry.as ?? 'operator'
  const url = `${harness.server.url}${entry.path(world)}`
  for (const width of WIDTHS) {
    for (const scheme of SCHEMES) {
      await harness.withContext(
        { colorScheme: scheme, bypassCSP: true, viewport: { width, height: 900 } },
        async (context) => {
          if (as !== 'signed-out') {
            const [name, value] = cookies[as].split('=') as [string, string]
            await context.addCookies([{ name, value, url: `${harness.server.url}/console` }])
          }
          const { page, response } = await open(context, url)
          const label = `${entry.name} at ${width}px`
          expect({ label, status: response.status() }).toEqual({ label, status: 200 })
          expect({ label, scrollsSideways: await scrollsSideways(page) }).toEqual({ label, scrollsSideways: false })
          if (scheme === 'light') {
            await page.screenshot({ path: join(SHOTS, `${entry.name}-${width}.png`), fullPage: true })
            expect({ label, missedByTab: await controlsTabMisses(page) }).toEqual({ label, missedByTab: [] })
          }
          results.push(await audit(page, label, scheme, 'all'))
        },
      )
    }
  }
  expectNoViolations(results)
}

describe.skipIf(skipBrowser)(
  'every console page, at 390 and 1280 px, light and dark: axe, no sideways scroll, Tab',
  () => {
    for (const entry of CONSOLE_PAGES) test(entry.name, () => walk(entry), STEP_TIMEOUT * 2)
    test('nothing was fetched from anywhere else', () => expect(harness.foreignRequests).toEqual([]))
  },
)
