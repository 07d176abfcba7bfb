/** @jsxImportSource @kitajs/html */
import { Elysia } from 'elysia'
import { attr } from '../../../../views/attributes.ts'
import { HttpError } from '../../../lib/errors.ts'
import { isCrossSite } from '../../submissions/form-post.ts'
import type { ConsoleDeps } from '../deps.ts'
import { ConsoleBareLayout, type ConsoleProblem, consoleHtml, ErrorSummary } from '../layout.tsx'
import { consoleClientAddress, readConsoleFields, sessionCookie, sessionTokenOf } from '../session.ts'
import { type ConsoleWords, consoleWords } from '../words/index.ts'

/** Where to go once signed in: a console path the visitor asked for, never another site. */
function consoleDestination(next: string | undefined): string {
  if (next === undefined || !/^\/console(?:[/?]|$)/.test(next) || /[\\\s]/.test(next)) return '/console'
  return next
}

function SignInPage(props: {
  words: ConsoleWords
  next: string
  email?: string
  problems?: ConsoleProblem[]
  notice?: string
}) {
  const { words } = props
  const t = words.t
  return (
    <ConsoleBareLayout title={t('sign_in.title')} words={words}>
      <ErrorSummary problems={props.problems ?? []} words={words} />
      <h1 safe>{t('sign_in.title')}</h1>
      {props.notice ? <p safe>{props.notice}</p> : ''}
      <form method="post" action="/console/sign-in" novalidate>
        <input type="hidden" name="next" value={attr(props.next)} />
        <div class="field">
          <label class="label" for="email" safe>
            {t('sign_in.email')}
          </label>
          <input
            id="email"
            name="email"
            type="email"
            autocomplete="username"
            spellcheck="false"
            value={attr(props.email ?? '')}
          />
        </div>
        <div class="field">
          <label class="label" for="password" safe>
            {t('sign_in.password')}
          </label>
          <input id="password" name="password" type="password" autocomplete="current-password" />
        </div>
        <div class="actions">
          <button type="submit" safe>
            {t('sign_in.submit')}
          </button>
        </div>
      </form>
      <p class="muted" safe>
        {t('sign_in.forgot')}
      </p>
    </ConsoleBareLayout>
  )
}

/** Signing in and out: GET and POST /console/sign-in, POST /console/sign-out. */
export function signInPages(deps: ConsoleDeps) {
  const { users, bodies, baseUrl, config } = deps
  const words = consoleWords()
  return new Elysia({ name: 'console-sign-in' })
    .get('/console/sign-in', async ({ request, query, set }) => {
      const next = consoleDestination(typeof query.next === 'string' ? query.next : undefined)
      const token = sessionTokenOf(request)
      if (token !== undefined && (await users.viewerOf(token))) {
        set.headers.location = next
        return consoleHtml(set, '', 303)
      }
      const notice = query.signed_out === '1' ? words.t('sign_in.signed_out') : undefined
      return consoleHtml(set, <SignInPage words={words} next={next} notice={notice} />)
    })
    .post('/console/sign-in', async ({ request, set, server }) => {
      if (isCrossSite(request, baseUrl())) throw new HttpError(403, 'Cross-site requests are refused')
      const fields = await readConsoleFields(bodies, request)
      const next = consoleDestination(fields.next)
      const email = fields.email ?? ''
      const client = consoleClientAddress(request, server, config.trustProxy)
      const outcome = await users.signIn(email, fields.password ?? '', client)
      if (outcome.kind === 'signed-in') {
        set.headers['set-cookie'] = sessionCookie(outcome.sessionToken, baseUrl())
        set.headers.location = next
        return consoleHtml(set, '', 303)
      }
      // The same words and status whether or not the email names a user.
      if (outcome.kind === 'throttled') {
        set.headers['retry-after'] = String(outcome.retryAfterSeconds)
        const text = words.t('sign_in.throttled', { count: outcome.retryAfterSeconds })
        return consoleHtml(set, <SignInPage words={words} next={next} email={email} problems={[{ text }]} />, 429)
      }
      const problems = [{ text: words.t('sign_in.failed'), controlId: 'email' }]
      return consoleHtml(set, <SignInPage words={words} next={next} email={email} problems={problems} />, 401)
    })
    .use(deps.session)
    .post(
      '/console/sign-out',
      async ({ request, set }) => {
        await users.signOut(sessionTokenOf(request)!)
        set.headers['set-cookie'] = sessionCookie(undefined, baseUrl())
        set.headers.location = '/console/sign-in?signed_out=1'
        return consoleHtml(set, '', 303)
      },
      { signedIn: true },
    )
}
