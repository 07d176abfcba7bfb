/**
 * Every console page the Chromium walk visits (browser-console.test.ts), at
 * phone and desktop width, with axe: one entry per page. A page group's
 * author appends its pages here.
 */

/** The world the walk builds before it visits (browser-console.test.ts's `consoleWorld`). */
export interface ConsoleWalkContext {
  /** The account "research": keys, forms in several states, answers, events. */
  accountId: string
  /** An active form of that account with a field of every kind. */
  formId: string
  /** An answered form of that account. */
  answeredFormId: string
  /** An unused set-up link's path (/console/setup/<token>). */
  setupPath: string
}

export interface ConsolePage {
  /** Names the screenshots: test-output/console/<name>-<width>.png. */
  name: string
  path(ctx: ConsoleWalkContext): string
  /** Who looks: an operator unless told (`signed-out` for sign-in and set-up pages, `member` of "research"). */
  as?: 'operator' | 'member' | 'signed-out'
}

export const CONSOLE_PAGES: ConsolePage[] = [
  { name: 'sign-in', path: () => '/console/sign-in', as: 'signed-out' },
  { name: 'setup', path: (ctx) => ctx.setupPath, as: 'signed-out' },
  { name: 'accounts', path: () => '/console' },
  { name: 'password', path: () => '/console/password', as: 'member' },
  { name: 'overview', path: (ctx) => `/console/accounts/${ctx.accountId}`, as: 'member' },
  { name: 'keys', path: (ctx) => `/console/accounts/${ctx.accountId}/keys` },
  { name: 'deliveries', path: (ctx) => `/console/accounts/${ctx.accountId}/deliveries`, as: 'member' },
  { name: 'events', path: (ctx) => `/console/accounts/${ctx.accountId}/events` },
]
