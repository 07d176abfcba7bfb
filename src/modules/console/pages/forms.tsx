/** @jsxImportSource @kitajs/html */
import { Elysia } from 'elysia'
import { attr } from '../../../../views/attributes.ts'
import { HttpError } from '../../../lib/errors.ts'
import { parseApiTime } from '../../../lib/time.ts'
import { consolePrincipal } from '../../auth/service.ts'
import { FORM_STATUSES, type FormSummary } from '../../forms/model.ts'
import type { ConsoleDeps } from '../deps.ts'
import { ConsoleLayout, consoleHtml, ErrorSummary } from '../layout.tsx'
import { consoleWords } from '../words/index.ts'
import { formActionPages } from './forms-actions.tsx'
import { formPages } from './forms-form.tsx'
import { newFormPages } from './forms-new.tsx'
import { accountPath, StatusTag, statusWord } from './forms-parts.tsx'

/** Forms a page of the list shows. */
const FORMS_PER_PAGE = 25

/** The console's form pages: the list, a new form, a form, and what can be done to it. */
export const consoleFormPages = (deps: ConsoleDeps) =>
  new Elysia({ name: 'console-forms' })
    .use(formListPage(deps))
    .use(newFormPages(deps))
    .use(formPages(deps))
    .use(formActionPages(deps))

/** /console/accounts/:account/forms: the account's forms, newest first, by status and title, a page at a time. */
function formListPage(deps: ConsoleDeps) {
  const { forms } = deps.services
  const words = consoleWords()
  const t = words.t
  return new Elysia({ name: 'console-form-list' }).use(deps.session).get(
    '/console/accounts/:account/forms',
    async ({ viewer, account, query, set }) => {
      const status = typeof query.status === 'string' && query.status !== '' ? query.status : undefined
      const search = typeof query.q === 'string' ? query.q.trim() : ''
      const cursor = typeof query.cursor === 'string' && query.cursor !== '' ? query.cursor : undefined
      const base = `${accountPath(account.id)}/forms`
      let listed: { forms: FormSummary[]; nextCursor: string | undefined } = { forms: [], nextCursor: undefined }
      let problems: string[] = []
      try {
        listed = await forms.list(
          consolePrincipal(account.id),
          { status, cursor, limit: String(FORMS_PER_PAGE) },
          search === '' ? undefined : search,
        )
      } catch (error) {
        // A status or cursor edited into the URL: said on the page, which still offers the filter.
        if (!(error instanceof HttpError) || error.status !== 422) throw error
        problems = (error.problems ?? []).map((problem) => `${problem.path.slice(1)}: ${problem.message}`)
      }
      const keep = (more: Record<string, string>) => {
        const params = new URLSearchParams()
        if (status) params.set('status', status)
        if (search) params.set('q', search)
        for (const [name, value] of Object.entries(more)) params.set(name, value)
        const text = params.toString()
        return text === '' ? base : `${base}?${text}`
      }
      const filtered = status !== undefined || search !== ''
      return consoleHtml(
        set,
        <ConsoleLayout viewer={viewer} title={t('forms.title')} account={account} current="forms" words={words}>
          <ErrorSummary problems={problems.map((text) => ({ text }))} words={words} />
          <h1 safe>{t('forms.title')}</h1>
          <form method="get" action={attr(base)} class="console-filter">
            <div class="field">
              <label for="forms-status" class="label" safe>
                {t('forms.filter_status')}
              </label>
              <select id="forms-status" name="status">
                <option value="" selected={status === undefined} safe>
                  {t('forms.status_any')}
                </option>
                {FORM_STATUSES.map((one) => (
                  <option value={one} selected={status === one} safe>
                    {statusWord(words, one)}
                  </option>
                ))}
              </select>
            </div>
            <div class="field">
              <label for="forms-search" class="label" safe>
                {t('forms.search')}
              </label>
              <input id="forms-search" name="q" type="search" value={attr(search)} />
            </div>
            <div class="actions">
              <button type="submit" safe>
                {t('forms.filter_submit')}
              </button>
            </div>
          </form>
          {listed.forms.length === 0 ? (
            <p safe>{t(cursor ? 'forms.none_more' : filtered ? 'forms.none_found' : 'forms.none')}</p>
          ) : (
            <div class="console-table-wrap">
              <table class="console-table">
                <caption safe>{t(filtered ? 'forms.caption_filtered' : 'forms.caption')}</caption>
                <thead>
                  <tr>
                    <th scope="col" safe>
                      {t('forms.col_title')}
                    </th>
                    <th scope="col" safe>
                      {t('forms.col_status')}
                    </th>
                    <th scope="col" class="console-number" safe>
                      {t('forms.col_fields')}
                    </th>
                    <th scope="col" safe>
                      {t('forms.col_created')}
                    </th>
                    <th scope="col" safe>
                      {t('forms.col_expires')}
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {listed.forms.map((form) => (
                    <tr>
                      <th scope="row">
                        <a href={`${base}/${attr(form.id)}`} dir="auto" safe>
                          {form.title}
                        </a>
                      </th>
                      <td>
                        <StatusTag status={form.status} words={words} />
                      </td>
                      <td class="console-number" safe>
                        {words.number(form.fields_count)}
                      </td>
                      <td safe>{words.dateTime(parseApiTime(form.created_at)!)}</td>
                      <td safe>
                        {form.expires_at === null
                          ? t('forms.no_expiry')
                          : words.dateTime(parseApiTime(form.expires_at)!)}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
          <nav class="console-pages" aria-label={attr(t('forms.pages'))}>
            {cursor ? (
              <a href={attr(keep({}))} safe>
                {t('forms.first_page')}
              </a>
            ) : (
              ''
            )}
            {listed.nextCursor ? (
              <a href={attr(keep({ cursor: listed.nextCursor }))} rel="next" safe>
                {t('forms.next_page')}
              </a>
            ) : (
              ''
            )}
          </nav>
        </ConsoleLayout>,
      )
    },
    { account: true },
  )
}
