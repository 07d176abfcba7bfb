/** @jsxImportSource @kitajs/html */
import type { PropsWithChildren } from '@kitajs/html'
import { STYLESHEET } from '../../../views/assets.ts'
import { attr } from '../../../views/attributes.ts'
import { htmlPage, type ResponseSet } from '../../lib/http.ts'
import type { Viewer } from './viewer.ts'
import type { ConsoleWords } from './words/index.ts'

/** The pages of an account's navigation, and the operator's own. */
export type ConsolePlace =
  | 'overview'
  | 'forms'
  | 'new-form'
  | 'keys'
  | 'deliveries'
  | 'events'
  | 'accounts'
  | 'users'
  | 'server'
  | 'password'

interface LayoutProps {
  viewer: Viewer
  /** The page's own name (the document title is "<title> · intake console"). */
  title: string
  /** The account the page is about: its navigation is shown. */
  account?: { id: string; name: string }
  current?: ConsolePlace
  words: ConsoleWords
}

/** Sends a console page: HTML, never stored by a browser or a proxy. */
export function consoleHtml(set: ResponseSet, html: JSX.Element, status?: number): string {
  set.headers['cache-control'] = 'no-store'
  return htmlPage(set, html, status)
}

/** The hidden field every console POST form carries: the session's CSRF token. */
export function CsrfField({ viewer }: { viewer: Viewer }) {
  return <input type="hidden" name="csrf" value={attr(viewer.csrf)} />
}

/** One problem with what was sent: its words, and the id of the control it is about (linked), if any. */
export interface ConsoleProblem {
  text: string
  controlId?: string
}

// Focus starts on the summary of a refused try (autofocus: no script needed), so it is read first.
const AUTOFOCUS = { autofocus: true } as Record<string, unknown>

/** What was wrong with the last try, first on the page, each problem linked to its control. */
export function ErrorSummary({ problems, words }: { problems: ConsoleProblem[]; words: ConsoleWords }) {
  if (problems.length === 0) return ''
  return (
    <div class="error-summary" role="alert" aria-labelledby="error-summary-title" tabindex="-1" {...AUTOFOCUS}>
      <h2 id="error-summary-title" safe>
        {words.t('error.summary')}
      </h2>
      <ul>
        {problems.map((problem) =>
          problem.controlId ? (
            <li>
              <a href={`#${attr(problem.controlId)}`} safe>
                {problem.text}
              </a>
            </li>
          ) : (
            <li safe>{problem.text}</li>
          ),
        )}
      </ul>
    </div>
  )
}

/** The frame of a page for a signed-out visitor (sign-in, set-up links): no navigation. */
export function ConsoleBareLayout({
  title,
  words,
  children,
}: PropsWithChildren<{ title: string; words: ConsoleWords }>) {
  return (
    <Document title={title} words={words}>
      <header class="console-header">
        <span class="console-name" safe>
          {words.t('console.name')}
        </span>
      </header>
      <main id="content">{children}</main>
    </Document>
  )
}

/**
 * The frame of every signed-in console page: the account's navigation (when
 * the page is about one), the operator's (Accounts, Users, Server), and Sign
 * out as a POST form.
 */
export function ConsoleLayout({ viewer, title, account, current, words, children }: PropsWithChildren<LayoutProps>) {
  const t = words.t
  const link = (place: ConsolePlace, href: string, label: string) => (
    <li>
      <a href={href} aria-current={place === current ? 'page' : undefined} safe>
        {label}
      </a>
    </li>
  )
  const base = account ? `/console/accounts/${attr(encodeURIComponent(account.id))}` : ''
  return (
    <Document title={title} words={words}>
      <a class="console-skip" href="#content" safe>
        {t('console.skip')}
      </a>
      <header class="console-header">
        <a class="console-name" href="/console" safe>
          {t('console.name')}
        </a>
        <nav aria-label={t('nav.label')} class="console-nav">
          {viewer.operator ? (
            <ul>
              {link('accounts', '/console', t('nav.accounts'))}
              {link('users', '/console/users', t('nav.users'))}
              {link('server', '/console/server', t('nav.server'))}
            </ul>
          ) : (
            ''
          )}
          <form method="post" action="/console/sign-out" class="console-sign-out">
            <CsrfField viewer={viewer} />
            <span class="console-who" safe>
              {t('nav.signed_in_as', { email: viewer.email })}
            </span>
            <a href="/console/password" aria-current={current === 'password' ? 'page' : undefined} safe>
              {t('nav.password')}
            </a>
            <button type="submit" class="console-link-button" safe>
              {t('nav.sign_out')}
            </button>
          </form>
        </nav>
        {account ? (
          <nav
            aria-label={attr(t('nav.account_label', { account: account.name }))}
            class="console-nav console-account-nav"
          >
            <p class="console-account-name" safe>
              {account.name}
            </p>
            <ul>
              {link('overview', base, t('nav.overview'))}
              {link('forms', `${base}/forms`, t('nav.forms'))}
              {link('new-form', `${base}/forms/new`, t('nav.new_form'))}
              {link('keys', `${base}/keys`, t('nav.keys'))}
              {link('deliveries', `${base}/deliveries`, t('nav.deliveries'))}
              {link('events', `${base}/events`, t('nav.events'))}
            </ul>
          </nav>
        ) : (
          ''
        )}
      </header>
      <main id="content">{children}</main>
    </Document>
  )
}

function Document({ title, words, children }: PropsWithChildren<{ title: string; words: ConsoleWords }>) {
  return (
    <>
      {'<!doctype html>'}
      <html lang={words.locale} dir="ltr">
        <head>
          <meta charset="utf-8" />
          <meta name="viewport" content="width=device-width, initial-scale=1" />
          <meta name="robots" content="noindex, nofollow" />
          <meta name="color-scheme" content="light dark" />
          <title safe>{words.t('console.title', { page: title })}</title>
          <link rel="stylesheet" href={STYLESHEET.path} />
        </head>
        <body class="console">{children}</body>
      </html>
    </>
  )
}
