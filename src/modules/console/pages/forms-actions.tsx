/** @jsxImportSource @kitajs/html */
import { Elysia } from 'elysia'
import { attr } from '../../../../views/attributes.ts'
import { formatApiTime } from '../../../lib/time.ts'
import { consolePrincipal } from '../../auth/service.ts'
import type { StoredForm } from '../../forms/store/index.ts'
import type { ConsoleDeps } from '../deps.ts'
import { ConsoleLayout, CsrfField, consoleHtml, ErrorSummary } from '../layout.tsx'
import type { Viewer } from '../viewer.ts'
import { type ConsoleWords, consoleWords } from '../words/index.ts'
import { accountForm, accountPath, formPath, problemsOf } from './forms-parts.tsx'

type Account = { id: string; name: string }

/** The control of the expiry page: `YYYY-MM-DDTHH:MM`, in UTC. */
const EXPIRY_INPUT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$/

/**
 * What can be done to a form, each behind a page that says what it will do
 * (GET) and a button that does it (POST), through the services the API uses:
 * cancel, change the expiry, delete; and a delivery sent again.
 */
export function formActionPages(deps: ConsoleDeps) {
  const { forms, webhooks } = deps.services
  const words = consoleWords()
  const t = words.t

  /** A confirmation page: what the action does, its button, the way back; the problems of a refused try first. */
  function confirmPage(
    props: { viewer: Viewer; account: Account; form: StoredForm; action: 'cancel' | 'delete' | 'expiry' },
    problems: Array<{ path: string; message: string }>,
    body: JSX.Element,
  ) {
    const { viewer, account, form, action } = props
    const back = formPath(account.id, form.id)
    return (
      <ConsoleLayout
        viewer={viewer}
        title={t(`form_${action}.title`, { title: form.title })}
        account={account}
        current="forms"
        words={words}
      >
        <ErrorSummary problems={problems.map((problem) => ({ text: problem.message }))} words={words} />
        <h1 safe>{t(`form_${action}.title`, { title: form.title })}</h1>
        <form method="post" action={attr(`${back}/${action}`)} class="console-confirm" novalidate>
          <CsrfField viewer={viewer} />
          {body}
          <div class="actions">
            <button type="submit" class={action === 'expiry' ? undefined : 'console-danger-button'} safe>
              {t(`form_${action}.submit`)}
            </button>
            <a href={attr(back)} safe>
              {t('form.back')}
            </a>
          </div>
        </form>
      </ConsoleLayout>
    )
  }

  const explain = (text: string) => <p safe>{text}</p>

  function expiryBody(form: StoredForm, words: ConsoleWords, typed?: { choice: string; at: string }) {
    const t = words.t
    const none = typed ? typed.choice === 'none' : form.expiresAt === null
    const at = typed?.at ?? (form.expiresAt === null ? '' : formatApiTime(form.expiresAt).slice(0, 16))
    return (
      <fieldset class="console-choices">
        <legend safe>{t('form_expiry.legend')}</legend>
        <p class="hint" safe>
          {t('form_expiry.now', {
            time: form.expiresAt === null ? t('forms.no_expiry') : words.dateTime(form.expiresAt),
          })}
        </p>
        <div class="choice">
          <input type="radio" id="expiry-at" name="choice" value="at" checked={!none} />
          <label for="expiry-at" safe>
            {t('form_expiry.at')}
          </label>
        </div>
        <div class="field">
          <label for="expiry-time" class="label" safe>
            {t('form_expiry.time')}
          </label>
          <p id="expiry-time-hint" class="hint" safe>
            {t('form_expiry.time_hint')}
          </p>
          <input
            type="datetime-local"
            id="expiry-time"
            name="at"
            value={attr(at)}
            aria-describedby="expiry-time-hint"
          />
        </div>
        <div class="choice">
          <input type="radio" id="expiry-none" name="choice" value="none" checked={none} />
          <label for="expiry-none" safe>
            {t('form_expiry.none')}
          </label>
        </div>
      </fieldset>
    )
  }

  return new Elysia({ name: 'console-form-actions' })
    .use(deps.session)
    .get(
      '/console/accounts/:account/forms/:id/cancel',
      async ({ viewer, account, params, set }) => {
        const form = await accountForm(deps, account.id, params.id)
        return consoleHtml(
          set,
          confirmPage({ viewer, account, form, action: 'cancel' }, [], explain(t('form_cancel.explain'))),
        )
      },
      { account: true },
    )
    .post(
      '/console/accounts/:account/forms/:id/cancel',
      async ({ viewer, account, params, set }) => {
        const form = await accountForm(deps, account.id, params.id)
        try {
          await forms.update(consolePrincipal(account.id), form.id, { status: 'cancelled' })
        } catch (error) {
          const page = confirmPage(
            { viewer, account, form, action: 'cancel' },
            problemsOf(error),
            explain(t('form_cancel.explain')),
          )
          return consoleHtml(set, page, 409)
        }
        set.headers.location = `${formPath(account.id, form.id)}?done=cancelled`
        return consoleHtml(set, '', 303)
      },
      { account: true },
    )
    .get(
      '/console/accounts/:account/forms/:id/expiry',
      async ({ viewer, account, params, set }) => {
        const form = await accountForm(deps, account.id, params.id)
        return consoleHtml(set, confirmPage({ viewer, account, form, action: 'expiry' }, [], expiryBody(form, words)))
      },
      { account: true },
    )
    .post(
      '/console/accounts/:account/forms/:id/expiry',
      async ({ viewer, account, params, fields, set }) => {
        const form = await accountForm(deps, account.id, params.id)
        const typed = { choice: fields.choice === 'none' ? 'none' : 'at', at: (fields.at ?? '').trim() }
        try {
          let expiresAt: string | null = null
          if (typed.choice === 'at') {
            // The same 422 the API gives for a time that is not one.
            expiresAt = EXPIRY_INPUT.test(typed.at) ? `${typed.at}:00Z` : typed.at
          }
          await forms.update(consolePrincipal(account.id), form.id, { expires_at: expiresAt })
        } catch (error) {
          const problems = problemsOf(error)
          const page = confirmPage(
            { viewer, account, form, action: 'expiry' },
            problems,
            expiryBody(form, words, typed),
          )
          return consoleHtml(set, page, 422)
        }
        set.headers.location = `${formPath(account.id, form.id)}?done=expiry`
        return consoleHtml(set, '', 303)
      },
      { account: true },
    )
    .get(
      '/console/accounts/:account/forms/:id/delete',
      async ({ viewer, account, params, set }) => {
        const form = await accountForm(deps, account.id, params.id)
        return consoleHtml(
          set,
          confirmPage({ viewer, account, form, action: 'delete' }, [], explain(t('form_delete.explain'))),
        )
      },
      { account: true },
    )
    .post(
      '/console/accounts/:account/forms/:id/delete',
      async ({ account, params, set }) => {
        await forms.delete(consolePrincipal(account.id), params.id)
        set.headers.location = `${accountPath(account.id)}/forms`
        return consoleHtml(set, '', 303)
      },
      { account: true },
    )
    .post(
      '/console/accounts/:account/forms/:id/deliveries/:delivery/redeliver',
      async ({ account, params, set }) => {
        await webhooks.redeliver(consolePrincipal(account.id), params.id, params.delivery)
        set.headers.location = `${formPath(account.id, params.id)}?done=redelivered#deliveries`
        return consoleHtml(set, '', 303)
      },
      { account: true },
    )
}
