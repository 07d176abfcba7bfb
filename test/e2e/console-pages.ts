/**
 * Every console page the Chromium walk visits (browser-console.test.ts), at
 * phone and desktop width, with axe: one entry per page. A page group's
 * author appends its pages here.
 */

/** The world the walk builds before it visits (browser-console.test.ts's `consoleWorld`). */
export interface ConsoleWalkContext {
  /** The account "default" (the first start's key): forms, an answer, events. */
  accountId: string
  /** An active form of that account with a field of every kind (test/e2e/every-field.ts). */
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
  /** Who looks: an operator unless told (`signed-out` for sign-in and set-up pages, `member` of "default"). */
  as?: 'operator' | 'member' | 'signed-out'
}

export const CONSOLE_PAGES: ConsolePage[] = [
  { name: 'sign-in', path: () => '/console/sign-in', as: 'signed-out' },
  { name: 'setup', path: (ctx) => ctx.setupPath, as: 'signed-out' },
  { name: 'accounts', path: () => '/console' },
  { name: 'users', path: () => '/console/users' },
  { name: 'server', path: () => '/console/server' },
  { name: 'password', path: () => '/console/password', as: 'member' },
  // Forms (cforms)
  { name: 'forms', path: (ctx) => `/console/accounts/${ctx.accountId}/forms` },
  { name: 'forms-search', path: (ctx) => `/console/accounts/${ctx.accountId}/forms?status=active&q=a`, as: 'member' },
  { name: 'form', path: (ctx) => `/console/accounts/${ctx.accountId}/forms/${ctx.formId}` },
  { name: 'form-answered', path: (ctx) => `/console/accounts/${ctx.accountId}/forms/${ctx.answeredFormId}` },
  { name: 'form-preview', path: (ctx) => `/console/accounts/${ctx.accountId}/forms/${ctx.formId}/preview?lang=ar` },
  { name: 'form-cancel', path: (ctx) => `/console/accounts/${ctx.accountId}/forms/${ctx.formId}/cancel` },
  { name: 'form-expiry', path: (ctx) => `/console/accounts/${ctx.accountId}/forms/${ctx.formId}/expiry` },
  { name: 'form-delete', path: (ctx) => `/console/accounts/${ctx.accountId}/forms/${ctx.formId}/delete` },
  { name: 'new-form', path: (ctx) => `/console/accounts/${ctx.accountId}/forms/new`, as: 'member' },
  { name: 'overview', path: (ctx) => `/console/accounts/${ctx.accountId}`, as: 'member' },
  { name: 'keys', path: (ctx) => `/console/accounts/${ctx.accountId}/keys` },
  { name: 'deliveries', path: (ctx) => `/console/accounts/${ctx.accountId}/deliveries`, as: 'member' },
  { name: 'events', path: (ctx) => `/console/accounts/${ctx.accountId}/events` },
]
