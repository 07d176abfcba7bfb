/** @jsxImportSource @kitajs/html */
import { Elysia } from 'elysia'
import type { ConsoleDeps } from '../deps.ts'
import { ConsoleLayout, type ConsoleProblem, CsrfField, consoleHtml, ErrorSummary } from '../layout.tsx'
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../service.ts'
import { sessionTokenOf } from '../session.ts'
import type { Viewer } from '../viewer.ts'
import { type ConsoleWords, consoleWords } from '../words/index.ts'

function PasswordPage(props: { viewer: Viewer; words: ConsoleWords; problems?: ConsoleProblem[]; changed?: boolean }) {
  const { words } = props
  const t = words.t
  return (
    <ConsoleLayout viewer={props.viewer} title={t('password.title')} current="password" words={words}>
      <ErrorSummary problems={props.problems ?? []} words={words} />
      <h1 safe>{t('password.title')}</h1>
      {props.changed ? (
        <p class="console-notice" role="status" safe>
          {t('password.changed')}
        </p>
      ) : (
        ''
      )}
      <p safe>{t('password.intro')}</p>
      <form method="post" action="/console/password" novalidate>
        <CsrfField viewer={props.viewer} />
        <div class="field">
          <label class="label" for="current" safe>
            {t('password.current')}
          </label>
          <input id="current" name="current" type="password" autocomplete="current-password" />
        </div>
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
        <div class="actions">
          <button type="submit" safe>
            {t('password.submit')}
          </button>
        </div>
      </form>
    </ConsoleLayout>
  )
}

/** /console/password: any signed-in user changes their own password (ending their other sessions). */
export function passwordPages(deps: ConsoleDeps) {
  const { users } = deps
  const words = consoleWords()
  return new Elysia({ name: 'console-password' })
    .use(deps.session)
    .get('/console/password', ({ viewer, set }) => consoleHtml(set, <PasswordPage viewer={viewer} words={words} />), {
      signedIn: true,
    })
    .post(
      '/console/password',
      async ({ viewer, fields, request, set }) => {
        const outcome = await users.changePassword(viewer, sessionTokenOf(request)!, {
          current: fields.current ?? '',
          password: fields.password ?? '',
          again: fields.again ?? '',
        })
        if (outcome.kind === 'changed') return consoleHtml(set, <PasswordPage viewer={viewer} words={words} changed />)
        const problem: ConsoleProblem =
          outcome.kind === 'wrong-current'
            ? { text: words.t('password.wrong_current'), controlId: 'current' }
            : outcome.problem === 'mismatch'
              ? { text: words.t('setup.mismatch'), controlId: 'again' }
              : outcome.problem === 'too_long'
                ? { text: words.t('setup.too_long', { count: PASSWORD_MAX_LENGTH }), controlId: 'password' }
                : { text: words.t('setup.too_short', { count: PASSWORD_MIN_LENGTH }), controlId: 'password' }
        return consoleHtml(set, <PasswordPage viewer={viewer} words={words} problems={[problem]} />, 422)
      },
      { signedIn: true },
    )
}
