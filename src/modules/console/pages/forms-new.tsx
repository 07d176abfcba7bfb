/** @jsxImportSource @kitajs/html */
import { Elysia } from 'elysia'
import { attr } from '../../../../views/attributes.ts'
import { renderFormPage } from '../../../../views/FormPage.tsx'
import { languageOfTag, translator } from '../../../i18n/index.ts'
import type { PageBytes } from '../../../lib/http.ts'
import { consolePrincipal } from '../../auth/service.ts'
import type { StoredForm } from '../../forms/store/index.ts'
import { formView } from '../../submissions/pages.tsx'
import type { ConsoleDeps } from '../deps.ts'
import { ConsoleLayout, CsrfField, consoleHtml, ErrorSummary } from '../layout.tsx'
import type { Viewer } from '../viewer.ts'
import { consoleWords } from '../words/index.ts'
import { accountPath, formPath, problemsOf } from './forms-parts.tsx'

/** What the box holds at first: a small form that shows the shape of a create body (docs/api.md has them all). */
const EXAMPLE = `{
  "title": "Approve the deploy",
  "description": "Release 2.4 goes to production tonight.",
  "fields": [
    { "key": "approve", "type": "select", "label": "Go ahead?", "required": true,
      "config": { "options": ["yes", "no"] } },
    { "key": "note", "type": "textarea", "label": "Anything to add?" }
  ],
  "expires_in": "24h"
}`

const JSON_BOX = 'form-json'

type Problem = { path: string; message: string }

/** The person's page within the console's: its <main>, rendered (and escaped) by the page's own views. */
interface PagePreview {
  safeHtml: string
  locale: string
  dir: string
}

/** The person's page inside the console's, in its own language and direction. */
function PageFrame({ preview }: { preview: PagePreview }) {
  const { safeHtml, locale, dir } = preview
  return (
    <div class="console-page-frame" lang={locale} dir={dir}>
      {safeHtml}
    </div>
  )
}

/** The text of a rendered page. */
async function pageText(page: PageBytes): Promise<string> {
  if ('blob' in page) return page.blob.text()
  return Buffer.concat(page.pieces).toString('utf8')
}

/**
 * /console/accounts/:account/forms/new: a create body pasted as JSON (the
 * API's), previewed as the page it makes or created, through the forms
 * service's own checks: its 422 problems are listed beside the JSON, kept as
 * typed. A callback_url is refused (its secret derives from an API key, which
 * the console does not hold): such forms are made through the API.
 */
export function newFormPages(deps: ConsoleDeps) {
  const { forms } = deps.services
  const words = consoleWords()
  const t = words.t

  /** The person's page for `form`, as it will render, within the console's page: its <main> and its language. */
  async function previewOf(form: StoredForm): Promise<PagePreview> {
    const chosen = form.page.locale === undefined ? undefined : languageOfTag(form.page.locale)
    const page = translator(chosen?.locale ?? 'en', chosen?.region)
    const text = await pageText(
      await renderFormPage({
        form: formView(form),
        t: page,
        preview: (
          <p lang="en" dir="ltr" safe>
            {t('preview.banner')}
          </p>
        ),
      }),
    )
    const main = text.slice(text.indexOf('<main>') + '<main>'.length, text.lastIndexOf('</main>'))
    return { safeHtml: main, locale: page.locale, dir: page.dir }
  }

  function newFormPage(
    viewer: Viewer,
    account: { id: string; name: string },
    json: string,
    problems: Problem[],
    preview?: PagePreview,
  ) {
    const action = `${accountPath(account.id)}/forms/new`
    return (
      <ConsoleLayout viewer={viewer} title={t('new_form.title')} account={account} current="new-form" words={words}>
        <ErrorSummary
          problems={problems.map((problem) => ({
            text: problem.path ? `${problem.path}: ${problem.message}` : problem.message,
            controlId: JSON_BOX,
          }))}
          words={words}
        />
        <h1 safe>{t('new_form.title')}</h1>
        <p safe>{t('new_form.intro')}</p>
        <div class="console-new-form">
          <form method="post" action={attr(action)} class="console-json-form" novalidate>
            <CsrfField viewer={viewer} />
            <div class={problems.length > 0 ? 'field field-error' : 'field'}>
              <label for={JSON_BOX} class="label" safe>
                {t('new_form.json')}
              </label>
              <p id={`${JSON_BOX}-hint`} class="hint" safe>
                {t('new_form.json_hint')}
              </p>
              {/* The HTML parser drops one newline right after <textarea>: give it one, keep the text's own. */}
              <textarea
                id={JSON_BOX}
                name="body"
                rows="20"
                spellcheck="false"
                autocapitalize="off"
                aria-describedby={`${JSON_BOX}-hint`}
                aria-invalid={problems.length > 0 ? 'true' : undefined}
                safe
              >
                {`\n${json}`}
              </textarea>
            </div>
            <div class="actions">
              <button type="submit" name="action" value="preview" class="console-secondary" safe>
                {t('new_form.preview')}
              </button>
              <button type="submit" name="action" value="create" safe>
                {t('new_form.create')}
              </button>
            </div>
          </form>
          {problems.length > 0 ? (
            <section aria-labelledby="new-problems" class="console-problems">
              <h2 id="new-problems" safe>
                {t('new_form.problems', { count: problems.length })}
              </h2>
              <ul>
                {problems.map((problem) => (
                  <li>
                    <code safe>{problem.path === '' ? t('new_form.whole_body') : problem.path}</code>{' '}
                    <span safe>{problem.message}</span>
                  </li>
                ))}
              </ul>
            </section>
          ) : (
            ''
          )}
        </div>
        {preview ? (
          <section aria-labelledby="new-preview" class="console-page-preview">
            <h2 id="new-preview" safe>
              {t('new_form.preview_heading')}
            </h2>
            <p safe>{t('new_form.preview_explain')}</p>
            <PageFrame preview={preview} />
          </section>
        ) : (
          ''
        )}
      </ConsoleLayout>
    )
  }

  return new Elysia({ name: 'console-new-form' })
    .use(deps.session)
    .get(
      '/console/accounts/:account/forms/new',
      ({ viewer, account, set }) => consoleHtml(set, newFormPage(viewer, account, EXAMPLE, [])),
      { account: true },
    )
    .post(
      '/console/accounts/:account/forms/new',
      async ({ viewer, account, fields, set }) => {
        const json = fields.body ?? ''
        let body: unknown
        try {
          body = JSON.parse(json)
        } catch (error) {
          const problem = { path: '', message: t('new_form.not_json', { reason: (error as Error).message }) }
          return consoleHtml(set, newFormPage(viewer, account, json, [problem]), 422)
        }
        const principal = consolePrincipal(account.id)
        try {
          if (fields.action === 'create') {
            const { form } = await forms.create(principal, body)
            set.headers.location = formPath(account.id, form.id)
            return consoleHtml(set, '', 303)
          }
          const preview = await previewOf(await forms.preview(principal, body))
          return consoleHtml(set, newFormPage(viewer, account, json, [], preview))
        } catch (error) {
          return consoleHtml(set, newFormPage(viewer, account, json, problemsOf(error)), 422)
        }
      },
      { account: true },
    )
}
