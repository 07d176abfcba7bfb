/** @jsxImportSource @kitajs/html */
import { Elysia } from 'elysia'
import { attr } from '../../../../views/attributes.ts'
import { renderFormPage, withTimeLeft } from '../../../../views/FormPage.tsx'
import { languageOfTag, SUPPORTED_LOCALES, translator } from '../../../i18n/index.ts'
import { attachmentDisposition, htmlPage } from '../../../lib/http.ts'
import { consolePrincipal } from '../../auth/service.ts'
import { encodeNumber } from '../../events/position.ts'
import { formView } from '../../submissions/pages.tsx'
import type { ConsoleDeps } from '../deps.ts'
import { ConsoleLayout, consoleHtml } from '../layout.tsx'
import { consoleWords } from '../words/index.ts'
import {
  type AnswerFile,
  AnswerSection,
  accountForm,
  DeliveriesTable,
  EventsList,
  FieldsTable,
  formPath,
  JsonBlock,
  StatusTag,
  statusWord,
} from './forms-parts.tsx'
import { QrCode } from './forms-qr.tsx'

/** Events of a form its page lists: a form has a handful (its ending, perhaps a delete). */
const FORM_EVENTS_SHOWN = 50

/** What a change made, said once on the form's page after its POST (`?done=`). */
const DONE = ['cancelled', 'expiry', 'redelivered'] as const

const englishNames = new Intl.DisplayNames(['en'], { type: 'language' })
/** The languages of the person's page, by their English name and their own, for the preview's picker. */
const PAGE_LANGUAGES = SUPPORTED_LOCALES.map((locale) => {
  const english = englishNames.of(locale) ?? locale
  const own = new Intl.DisplayNames([locale], { type: 'language' }).of(locale) ?? locale
  return { locale, name: own === english ? english : `${english} (${own})` }
})

/**
 * /console/accounts/:account/forms/:id: a form, its link and QR code, fields,
 * context, answer, files, deliveries and events; its preview in any language
 * of the page; and its files.
 */
export function formPages(deps: ConsoleDeps) {
  const { responses, webhooks } = deps.services
  const { store } = deps
  const words = consoleWords()
  const t = words.t
  return new Elysia({ name: 'console-form' })
    .use(deps.session)
    .get(
      '/console/accounts/:account/forms/:id',
      async ({ viewer, account, params, query, set }) => {
        const form = await accountForm(deps, account.id, params.id)
        const principal = consolePrincipal(account.id)
        const base = formPath(account.id, form.id)
        const [answers, deliveries, events] = await Promise.all([
          responses.list(principal, form.id),
          webhooks.list(principal, form.id),
          store.events.ofForm(account.id, form.id, FORM_EVENTS_SHOWN),
        ])
        const response = answers[0]
        const files = new Map<string, AnswerFile>()
        if (response) {
          for (const file of await store.responses.files(form.id, response.id)) {
            const href = `${base}/files/${response.id}/${encodeURIComponent(file.fieldKey)}`
            files.set(file.fieldKey, { name: file.name, size: file.size, href })
          }
        }
        const url = `${deps.baseUrl()}/f/${form.id}`
        const done = DONE.find((one) => one === query.done)
        const language = form.page.locale === undefined ? undefined : languageOfTag(form.page.locale)?.locale
        return consoleHtml(
          set,
          <ConsoleLayout viewer={viewer} title={form.title} account={account} current="forms" words={words}>
            {done ? (
              <div class="notice" role="status">
                <p safe>{t(`form.done_${done}`)}</p>
              </div>
            ) : (
              ''
            )}
            <h1 dir="auto" safe>
              {form.title}
            </h1>
            <p>
              <StatusTag status={form.status} words={words} />
            </p>
            <section aria-labelledby="form-link">
              <h2 id="form-link" safe>
                {t('form.link')}
              </h2>
              <p>
                <a href={attr(url)} class="console-form-url" safe>
                  {url}
                </a>
              </p>
              <QrCode text={url} label={t('form.qr_label', { url })} />
              <p class="hint" safe>
                {t('form.qr_hint')}
              </p>
            </section>
            <section aria-labelledby="form-about">
              <h2 id="form-about" safe>
                {t('form.about')}
              </h2>
              <dl class="console-facts">
                <dt safe>{t('form.status')}</dt>
                <dd safe>{statusWord(words, form.status)}</dd>
                <dt safe>{t('form.created')}</dt>
                <dd safe>{words.dateTime(form.createdAt)}</dd>
                <dt safe>{t('form.expires')}</dt>
                <dd safe>{form.expiresAt === null ? t('forms.no_expiry') : words.dateTime(form.expiresAt)}</dd>
                <dt safe>{t('form.id')}</dt>
                <dd>
                  <code safe>{form.id}</code>
                </dd>
                <dt safe>{t('form.webhook')}</dt>
                <dd safe>{form.callbackUrl === null ? t('form.no_webhook') : form.callbackEvents.join(', ')}</dd>
              </dl>
              {form.description ? (
                <p class="console-description" dir="auto" safe>
                  {form.description}
                </p>
              ) : (
                ''
              )}
            </section>
            <section aria-labelledby="form-actions">
              <h2 id="form-actions" safe>
                {t('form.actions')}
              </h2>
              <form method="get" action={attr(`${base}/preview`)} class="console-inline-form">
                <div class="field">
                  <label for="preview-lang" class="label" safe>
                    {t('form.preview_language')}
                  </label>
                  <select id="preview-lang" name="lang">
                    {PAGE_LANGUAGES.map(({ locale, name }) => (
                      <option value={locale} selected={locale === (language ?? 'en')} safe>
                        {name}
                      </option>
                    ))}
                  </select>
                </div>
                <button type="submit" safe>
                  {t('form.preview')}
                </button>
              </form>
              <ul class="console-actions">
                {form.status === 'active' ? (
                  <>
                    <li>
                      <a href={attr(`${base}/expiry`)} safe>
                        {t('form.change_expiry')}
                      </a>
                    </li>
                    <li>
                      <a href={attr(`${base}/cancel`)} safe>
                        {t('form.cancel')}
                      </a>
                    </li>
                  </>
                ) : (
                  ''
                )}
                <li>
                  <a href={attr(`${base}/delete`)} class="console-danger" safe>
                    {t('form.delete')}
                  </a>
                </li>
              </ul>
            </section>
            <section aria-labelledby="form-fields">
              <h2 id="form-fields" safe>
                {t('form.fields', { count: form.fieldsCount })}
              </h2>
              <FieldsTable fields={form.fields} words={words} />
            </section>
            <section aria-labelledby="form-context">
              <h2 id="form-context" safe>
                {t('form.context')}
              </h2>
              {form.context === null ? (
                <p safe>{t(form.status === 'expired' ? 'form.context_gone' : 'form.no_context')}</p>
              ) : (
                <JsonBlock value={JSON.parse(form.context)} label={t('form.context')} />
              )}
            </section>
            <section aria-labelledby="form-answer">
              <h2 id="form-answer" safe>
                {t('form.answer')}
              </h2>
              {response ? (
                <AnswerSection fields={form.fields} response={response} files={files} words={words} />
              ) : (
                <p safe>{t('form.no_answer')}</p>
              )}
            </section>
            <section aria-labelledby="form-deliveries" id="deliveries">
              <h2 id="form-deliveries" safe>
                {t('form.deliveries')}
              </h2>
              <DeliveriesTable
                deliveries={deliveries}
                action={(id) => `${base}/deliveries/${id}/redeliver`}
                viewer={viewer}
                words={words}
              />
            </section>
            <section aria-labelledby="form-events">
              <h2 id="form-events" safe>
                {t('form.events')}
              </h2>
              <EventsList
                events={events.map((event) => ({ ...event, id: encodeNumber(event.number) }))}
                words={words}
              />
            </section>
          </ConsoleLayout>,
        )
      },
      { account: true },
    )
    .get(
      '/console/accounts/:account/forms/:id/preview',
      async ({ account, params, query, set }) => {
        const form = await accountForm(deps, account.id, params.id)
        const chosen =
          (typeof query.lang === 'string' ? languageOfTag(query.lang) : undefined) ??
          (form.page.locale === undefined ? undefined : languageOfTag(form.page.locale))
        const page = translator(chosen?.locale ?? 'en', chosen?.region)
        const banner = (
          <p lang="en" dir="ltr">
            <strong safe>{t('preview.banner')}</strong>{' '}
            <span safe>{t('preview.explain', { language: englishNames.of(page.locale) ?? page.locale })}</span>{' '}
            <a href={attr(formPath(account.id, form.id))} safe>
              {t('preview.back')}
            </a>
          </p>
        )
        const rendered = await renderFormPage({ form: formView(form), t: page, preview: banner })
        set.headers['cache-control'] = 'no-store'
        return htmlPage(set, withTimeLeft(rendered, deps.clock(), page))
      },
      { account: true },
    )
    .get(
      '/console/accounts/:account/forms/:id/files/:response/:key',
      async ({ account, params }) => {
        const { file, bytes } = await responses.file(
          consolePrincipal(account.id),
          params.id,
          params.response,
          params.key,
        )
        // The API's file route's headers: the browser's type, never shown inline.
        return new Response(bytes, {
          headers: {
            'content-type': file.contentType,
            'content-length': String(file.size),
            'content-disposition': attachmentDisposition(file.name),
            'cache-control': 'no-store',
          },
        })
      },
      { account: true },
    )
}
