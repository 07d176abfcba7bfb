/** @jsxImportSource @kitajs/html */
import { Elysia } from 'elysia'
import type { ConsoleDeps } from '../deps.ts'
import { ConsoleLayout, type ConsoleProblem, CsrfField, consoleHtml, ErrorSummary } from '../layout.tsx'
import { sessionTokenOf } from '../session.ts'
import type { Viewer } from '../viewer.ts'
import { type ConsoleWords, consoleWords } from '../words/index.ts'
import { NewPasswordFields, newPasswordProblem } from './setup.tsx'

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
        <NewPasswordFields words={words} />
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
            : newPasswordProblem(outcome.problem, words)
        return consoleHtml(set, <PasswordPage viewer={viewer} words={words} problems={[problem]} />, 422)
      },
      { signedIn: true },
    )
}
