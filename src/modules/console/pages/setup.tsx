/** @jsxImportSource @kitajs/html */
import { Elysia } from 'elysia'
import { attr } from '../../../../views/attributes.ts'
import { HttpError } from '../../../lib/errors.ts'
import { isCrossSite } from '../../submissions/form-post.ts'
import type { ConsoleDeps } from '../deps.ts'
import { ConsoleBareLayout, type ConsoleProblem, consoleHtml, ErrorSummary } from '../layout.tsx'
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH, type PasswordProblem, type SetupOutcome } from '../service.ts'
import { readConsoleFields, sessionCookie } from '../session.ts'
import type { SetupGrant } from '../store/index.ts'
import { type ConsoleWords, consoleWords } from '../words/index.ts'

function SetupPage(props: {
  words: ConsoleWords
  token: string
  grant: SetupGrant
  email?: string
  problems?: ConsoleProblem[]
}) {
  const { words, grant } = props
  const t = words.t
  const first = grant.userId === null
  const title = first ? t('setup.first_title') : t('setup.title')
  return (
    <ConsoleBareLayout title={title} words={words}>
      <ErrorSummary problems={props.problems ?? []} words={words} />
      <h1 safe>{title}</h1>
      <p safe>{first ? t('setup.first_intro') : t('setup.intro', { email: grant.email ?? '' })}</p>
      <form method="post" action={`/console/setup/${attr(encodeURIComponent(props.token))}`} novalidate>
        {first ? (
          <div class="field">
            <label class="label" for="email" safe>
              {t('setup.email')}
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
        ) : (
          <input type="hidden" name="username" autocomplete="username" value={attr(grant.email ?? '')} />
        )}
        <NewPasswordFields words={words} />
        <div class="actions">
          <button type="submit" safe>
            {t('setup.submit')}
          </button>
        </div>
      </form>
    </ConsoleBareLayout>
  )
}

function GonePage({ words }: { words: ConsoleWords }) {
  return (
    <ConsoleBareLayout title={words.t('setup.gone_title')} words={words}>
      <h1 safe>{words.t('setup.gone_title')}</h1>
      <p safe>{words.t('setup.gone')}</p>
    </ConsoleBareLayout>
  )
}

/** What a refused set-up says, and which control it is about. */
function problemOf(
  outcome: Exclude<SetupOutcome, { kind: 'signed-in' } | { kind: 'gone' }>,
  words: ConsoleWords,
): ConsoleProblem {
  switch (outcome.kind) {
    case 'email-invalid':
      return { text: words.t('setup.email_invalid'), controlId: 'email' }
    case 'email-taken':
      return { text: words.t('setup.email_taken'), controlId: 'email' }
    case 'password':
      return newPasswordProblem(outcome.problem, words)
  }
}

/** What a refused new password says (set-up and Change password alike), at its control. */
export function newPasswordProblem(problem: PasswordProblem, words: ConsoleWords): ConsoleProblem {
  if (problem === 'mismatch') return { text: words.t('setup.mismatch'), controlId: 'again' }
  if (problem === 'too_long')
    return { text: words.t('setup.too_long', { count: PASSWORD_MAX_LENGTH }), controlId: 'password' }
  return { text: words.t('setup.too_short', { count: PASSWORD_MIN_LENGTH }), controlId: 'password' }
}

/** One-time set-up links: GET shows the form, POST sets the password and signs the person in. */
export function setupPages(deps: ConsoleDeps) {
  const { users, bodies, baseUrl } = deps
  const words = consoleWords()
  return new Elysia({ name: 'console-setup' })
    .get('/console/setup/:token', async ({ params, set }) => {
      const grant = await users.setupGrant(params.token)
      if (!grant) return consoleHtml(set, <GonePage words={words} />, 404)
      return consoleHtml(set, <SetupPage words={words} token={params.token} grant={grant} />)
    })
    .post('/console/setup/:token', async ({ params, request, set }) => {
      if (isCrossSite(request, baseUrl())) throw new HttpError(403, 'Cross-site requests are refused')
      const fields = await readConsoleFields(bodies, request)
      const outcome = await users.completeSetup(params.token, {
        email: fields.email,
        password: fields.password ?? '',
        again: fields.again ?? '',
      })
      if (outcome.kind === 'signed-in') {
        set.headers['set-cookie'] = sessionCookie(outcome.sessionToken, baseUrl())
        set.headers.location = '/console'
        return consoleHtml(set, '', 303)
      }
      const grant = outcome.kind === 'gone' ? undefined : await users.setupGrant(params.token)
      if (!grant || outcome.kind === 'gone') return consoleHtml(set, <GonePage words={words} />, 404)
      const problems = [problemOf(outcome, words)]
      return consoleHtml(
        set,
        <SetupPage words={words} token={params.token} grant={grant} email={fields.email} problems={problems} />,
        422,
      )
    })
}

/** A new password and its confirmation: the set-up link's page and the change-password page. */
export function NewPasswordFields({ words }: { words: ConsoleWords }) {
  const t = words.t
  return (
    <>
      <div class="field">
        <label class="label" for="password" safe>
          {t('setup.password')}
        </label>
        <p class="hint" id="password-hint" safe>
          {t('setup.password_hint', { count: PASSWORD_MIN_LENGTH })}
        </p>
        <input
          id="password"
          name="password"
          type="password"
          autocomplete="new-password"
          aria-describedby="password-hint"
        />
      </div>
      <div class="field">
        <label class="label" for="again" safe>
          {t('setup.confirm')}
        </label>
        <input id="again" name="again" type="password" autocomplete="new-password" />
      </div>
    </>
  )
}
