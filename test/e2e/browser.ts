/**
 * What the browser tests share: the built executable (dist/intake) started
 * once per test file, Debian's Chromium launched once and driven through
 * playwright-core, a fresh context per case, axe-core injected into a page,
 * and the guard that no page makes a request anywhere but 127.0.0.1.
 *
 * Without Chromium at /usr/bin/chromium the tests skip, with a line saying how
 * to run them; with INTAKE_REQUIRE_BROWSER=1 (as .ci/run sets) that is a failure.
 */
import { afterAll, beforeAll, expect } from 'bun:test'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { type Browser, type BrowserContext, chromium, type Page, type Response as PageResponse } from 'playwright-core'
import { skipWithout } from '../prerequisites.ts'
import { killAllChildren, PROJECT_ROOT, type RunningIntake, request, startIntake, useBuiltBinary } from './binary.ts'

// These run inside the page (page.evaluate); the test's own tsconfig has no DOM lib.
declare const document: any
declare const axe: any
declare function getComputedStyle(element: unknown): any
declare function matchMedia(query: string): { matches: boolean }

export const STEP_TIMEOUT = 30_000
const LAUNCH_TIMEOUT = 60_000
const CHROMIUM = '/usr/bin/chromium'
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking']
const AXE_SOURCE = readFileSync(join(PROJECT_ROOT, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8')
const AXE_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa']
export const SCHEMES = ['light', 'dark'] as const
export type Scheme = (typeof SCHEMES)[number]

/** Whether the browser tests skip (no Chromium); a failing test instead where INTAKE_REQUIRE_BROWSER=1. Call once per test file. */
export const browserMissing = () =>
  skipWithout({
    tests: 'the browser tests',
    present: existsSync(CHROMIUM),
    missing: `Chromium is not installed at ${CHROMIUM}`,
    toRun: "install Debian's chromium (sudo apt-get install chromium)",
    requiredBy: 'INTAKE_REQUIRE_BROWSER',
  })

interface ResponseObject {
  id: string
  form_id: string
  data: Record<string, unknown>
  submitted_at: string
  metadata: { ip: string | null; user_agent: string | null }
  context: unknown
}

interface ContextOptions {
  colorScheme?: Scheme
  /** Only for the axe audit: lets the injected axe script run despite the page's CSP. */
  bypassCSP?: boolean
  /** The browser's language (it sends it as Accept-Language); en-US unless given. */
  locale?: string
  viewport?: { width: number; height: number }
}

export interface BrowserHarness {
  /** The intake server under test (once the file's tests run). */
  readonly server: RunningIntake
  /** The API key it printed at its first start. */
  readonly key: string
  /** Every request a page made to anything but the intake server under test. */
  readonly foreignRequests: string[]
  api(path: string, options?: { method?: string; body?: unknown }): ReturnType<typeof request>
  createForm(body: Record<string, unknown>): Promise<{ id: string; url: string }>
  responsesOf(formId: string): Promise<ResponseObject[]>
  /** The answer the browser posted, as the API reads it back: exactly one. */
  onlyResponse(formId: string): Promise<ResponseObject>
  /** Answers a form through the JSON submission (no browser); the first answer wins. */
  answerByJson(formId: string, data: Record<string, unknown>): Promise<void>
  /** Where the page lives for the browser: the server under test, on 127.0.0.1. */
  pageUrl(formId: string): string
  /** Downloads a file answer's bytes through the API, with the key. */
  download(fileUrl: string): Promise<{ status: number; bytes: Buffer; headers: Headers }>
  newContext(options?: ContextOptions): Promise<BrowserContext>
  /** Runs `body` with fresh contexts, closing them whatever happens. */
  withContexts<T>(options: ContextOptions[], body: (contexts: BrowserContext[]) => Promise<T>): Promise<T>
  withContext<T>(options: ContextOptions, body: (context: BrowserContext) => Promise<T>): Promise<T>
}

/**
 * For a browser test file: builds and starts one intake (with `env`) and one
 * Chromium before the file's tests, stops both after them. `skip` is the
 * file's `browserMissing()`.
 */
export function useBrowser(options: {
  tempPrefix: string
  skip: boolean
  env?: Record<string, string>
}): BrowserHarness {
  const intake = useBuiltBinary(options.tempPrefix)
  let server: RunningIntake | undefined
  let key = ''
  let browser: Browser | undefined
  const foreignRequests: string[] = []

  beforeAll(async () => {
    if (options.skip) return
    server = await startIntake(intake.path, {
      cwd: intake.tempDir(),
      env: { SERVICE_PUBLIC_RATE_LIMIT: '0', ...options.env },
    })
    if (!server.apiKey) throw new Error(`intake printed no "API key:" line\n${server.stdout()}`)
    key = server.apiKey
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, timeout: LAUNCH_TIMEOUT })
  }, LAUNCH_TIMEOUT)

  afterAll(async () => {
    try {
      const closing = browser?.close().catch(() => undefined)
      browser = undefined
      await closeChromium(closing)
    } finally {
      await killAllChildren()
    }
  }, STEP_TIMEOUT)

  const running = () => {
    if (!server) throw new Error('intake is not running')
    return server
  }

  const harness: BrowserHarness = {
    get server() {
      return running()
    },
    get key() {
      return key
    },
    foreignRequests,
    api: (path, init = {}) => request(`${running().url}/api/v1${path}`, { key, ...init }),
    async createForm(body) {
      const res = await harness.api('/forms', { body })
      expect({ status: res.status, body: res.body }).toMatchObject({ status: 201, body: { status: 'active' } })
      return res.body
    },
    async responsesOf(formId) {
      const res = await harness.api(`/forms/${formId}/responses`)
      expect(res.status).toBe(200)
      expect(Array.isArray(res.body)).toBe(true)
      return res.body
    },
    async onlyResponse(formId) {
      const list = await harness.responsesOf(formId)
      expect(list).toHaveLength(1)
      return list[0]!
    },
    async answerByJson(formId, data) {
      const res = await request(harness.pageUrl(formId), { method: 'POST', body: data })
      expect({ status: res.status, body: res.body }).toMatchObject({ status: 201, body: { form_id: formId } })
    },
    pageUrl: (formId) => `${running().url}/f/${formId}`,
    async download(fileUrl) {
      const res = await fetch(`${running().url}${new URL(fileUrl).pathname}`, {
        headers: { authorization: `Bearer ${key}` },
      })
      return { status: res.status, bytes: Buffer.from(await res.arrayBuffer()), headers: res.headers }
    },
    async newContext(init = {}) {
      if (!browser) throw new Error('Chromium is not running')
      const context = await browser.newContext({
        locale: init.locale ?? 'en-US',
        colorScheme: init.colorScheme ?? 'light',
        bypassCSP: init.bypassCSP ?? false,
        viewport: init.viewport ?? { width: 1024, height: 900 },
      })
      context.setDefaultTimeout(10_000)
      context.setDefaultNavigationTimeout(10_000)
      const own = `${running().url}/`
      context.on('request', (req) => {
        const url = req.url()
        if (!url.startsWith(own) && !url.startsWith('data:') && url !== 'about:blank') foreignRequests.push(url)
      })
      return context
    },
    async withContexts(list, body) {
      const contexts: BrowserContext[] = []
      try {
        for (const option of list) contexts.push(await harness.newContext(option))
        return await body(contexts)
      } finally {
        await Promise.all(contexts.map((context) => context.close().catch(() => undefined)))
      }
    },
    withContext: (init, body) => harness.withContexts([init], ([context]) => body(context!)),
  }
  return harness
}

/** Waits (at most 10 s) for Chromium to close; then SIGKILLs the Chromium processes this test process started (by pid). */
async function closeChromium(closing: Promise<unknown> | undefined) {
  if (closing) await Promise.race([closing, Bun.sleep(10_000)])
  for (const pid of ownChromiumChildren()) {
    try {
      process.kill(pid, 'SIGKILL')
    } catch {}
  }
}

/** Pids of processes whose parent is this test process and whose executable is Chromium. */
function ownChromiumChildren(): number[] {
  const pids: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
      if (ppid !== process.pid) continue
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8')
      if (cmdline.includes('chrom')) pids.push(Number(entry))
    } catch {}
  }
  return pids
}

// ------------------------------------------------------------- page helpers

export async function open(context: BrowserContext, url: string): Promise<{ page: Page; response: PageResponse }> {
  const page = await context.newPage()
  const response = await page.goto(url, { waitUntil: 'load' })
  if (!response) throw new Error(`no response for ${url}`)
  return { page, response }
}

/** The focused element, as `#id`, or `tag:text` when it has no id. */
export const activeElement = (page: Page): Promise<string> =>
  page.evaluate(() => {
    const el = document.activeElement
    if (!el || el === document.body) return 'body'
    return el.id ? `#${el.id}` : `${el.tagName.toLowerCase()}:${(el.textContent ?? '').trim()}`
  })

/**
 * Presses Tab until focus leaves the current element (a date control has a tab
 * stop per part), and expects it on `expected`. Focus stuck after several
 * presses is a keyboard trap.
 */
export async function tabTo(page: Page, expected: string) {
  const from = await activeElement(page)
  let now = from
  for (let press = 0; press < 6 && now === from; press++) {
    await page.keyboard.press('Tab')
    now = await activeElement(page)
  }
  expect({ from, tabbedTo: now }).toEqual({ from, tabbedTo: expected })
}

/**
 * Does `action` (a key press that sends the form) and waits for the POST's
 * response and the new document's load. Returns the POST's response (303, 409, 422...).
 */
export async function submitWith(page: Page, action: () => Promise<void>): Promise<PageResponse> {
  const posted = page.waitForResponse((res) => res.request().method() === 'POST' && res.request().isNavigationRequest())
  const loaded = page.waitForEvent('load')
  await action()
  const response = await posted
  await loaded
  return response
}

export const heading = (page: Page) => page.locator('h1').innerText()

// ------------------------------------------------------------------- axe-core

interface AxeRule {
  id: string
  impact: string | null
  description: string
  help: string
  helpUrl: string
  nodes: { target: unknown; html: string; failureSummary?: string }[]
}

interface AxeViolation {
  id: string
  impact: string | null
  help: string
  description: string
  nodes: { target: unknown; html: string; failureSummary?: string }[]
}

export interface AuditResult {
  page: string
  scheme: Scheme
  /** The violations of the impacts asked for. */
  violations: AxeViolation[]
}

/**
 * Injects axe-core (the context must bypass CSP: the page itself allows no
 * script) and runs the WCAG 2.x A/AA rules. Returns the violations of the
 * impacts asked for (`serious`: serious and critical; `all`: any impact),
 * printed in full when there are any.
 */
export async function audit(
  page: Page,
  label: string,
  scheme: Scheme,
  impacts: 'serious' | 'all' = 'serious',
): Promise<AuditResult> {
  // The scheme really is in effect, and the stylesheet follows it.
  const media = await page.evaluate(() => ({
    dark: matchMedia('(prefers-color-scheme: dark)').matches,
    background: getComputedStyle(document.documentElement).backgroundColor as string,
  }))
  expect({ label, dark: media.dark }).toEqual({ label, dark: scheme === 'dark' })
  expect({ label, scheme, background: media.background }).toEqual({
    label,
    scheme,
    background: scheme === 'dark' ? 'rgb(17, 19, 22)' : 'rgb(243, 244, 246)',
  })

  await page.addScriptTag({ content: AXE_SOURCE })
  // resultTypes: every node of a violation; one example node of each passed rule (much faster; passes are only counted).
  const results = (await page.evaluate(
    async (tags) => await axe.run(document, { runOnly: { type: 'tag', values: tags }, resultTypes: ['violations'] }),
    AXE_TAGS,
  )) as { violations: AxeRule[]; passes: AxeRule[]; incomplete: AxeRule[] }

  // axe ran for real: rules passed, and colour contrast was actually measured on this page. (axe
  // measures none on a page whose every text is in a script such as Arabic's: its rule finds
  // nothing to apply to there; the same page in a Latin-script language is measured.)
  expect(results.passes.length).toBeGreaterThan(0)
  const measured = [...results.passes, ...results.violations].some((rule) => rule.id === 'color-contrast')
  const latinText = await page.evaluate(() => /[A-Za-z0-9]/.test(document.body.innerText as string))
  if (latinText)
    expect({ label, scheme, contrastMeasured: measured }).toEqual({ label, scheme, contrastMeasured: true })

  const violations = results.violations
    .filter((rule) => impacts === 'all' || rule.impact === 'serious' || rule.impact === 'critical')
    .map((rule) => ({
      id: rule.id,
      impact: rule.impact,
      help: rule.help,
      description: rule.description,
      nodes: rule.nodes.map((node) => ({ target: node.target, html: node.html, failureSummary: node.failureSummary })),
    }))
  if (violations.length > 0) {
    const kind = impacts === 'all' ? '' : ' serious/critical'
    console.error(
      `axe-core: ${violations.length}${kind} violation(s) on the ${label} page (${scheme}):\n${JSON.stringify(violations, null, 2)}`,
    )
  }
  return { page: label, scheme, violations }
}

/** Every audit clean: compared as a whole, so a failure lists every page and scheme at once. */
export function expectNoViolations(results: AuditResult[]) {
  expect(results.map((r) => ({ page: r.page, scheme: r.scheme, violations: r.violations }))).toEqual(
    results.map((r) => ({ page: r.page, scheme: r.scheme, violations: [] })),
  )
}
