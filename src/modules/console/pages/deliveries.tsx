/** @jsxImportSource @kitajs/html */
import { Elysia } from 'elysia'
import { attr } from '../../../../views/attributes.ts'
import { consolePrincipal } from '../../auth/service.ts'
import type { FailingDelivery } from '../../webhooks/store/index.ts'
import type { ConsoleDeps } from '../deps.ts'
import { ConsoleLayout, CsrfField, consoleHtml } from '../layout.tsx'
import type { Viewer } from '../viewer.ts'
import { type ConsoleWords, consoleWords } from '../words/index.ts'

/** The most failing deliveries the page lists (the newest). */
const LISTED = 100

function lastOutcome(delivery: FailingDelivery, words: ConsoleWords): string {
  const parts = [
    delivery.lastStatusCode === null
      ? ''
      : words.t('deliveries.status_code', { code: String(delivery.lastStatusCode) }),
    delivery.lastError ?? '',
  ].filter((part) => part !== '')
  return parts.length === 0 ? words.t('deliveries.no_outcome') : parts.join(': ')
}

function DeliveryRow(props: { delivery: FailingDelivery; base: string; words: ConsoleWords; viewer: Viewer }) {
  const { delivery, base, words } = props
  return (
    <tr>
      <th scope="row">
        <a href={attr(`${base}/forms/${encodeURIComponent(delivery.formId)}`)} safe>
          {delivery.formTitle}
        </a>
      </th>
      <td>
        <code>{delivery.event}</code>
      </td>
      <td safe>{words.number(delivery.attempts)}</td>
      <td class="console-wrap" safe>
        {lastOutcome(delivery, words)}
      </td>
      <td safe>
        {delivery.nextAttemptAt === null ? words.t('deliveries.given_up') : words.dateTime(delivery.nextAttemptAt)}
      </td>
      <td safe>{words.dateTime(delivery.createdAt)}</td>
      <td>
        {delivery.status === 'failed' && (
          <form method="post" action={attr(`${base}/deliveries/${encodeURIComponent(delivery.id)}/redeliver`)}>
            <CsrfField viewer={props.viewer} />
            <input type="hidden" name="form" value={attr(delivery.formId)} />
            <button
              type="submit"
              aria-label={attr(
                words.t('deliveries.redeliver_label', { event: delivery.event, form: delivery.formTitle }),
              )}
              safe
            >
              {words.t('deliveries.redeliver')}
            </button>
          </form>
        )}
      </td>
    </tr>
  )
}

/**
 * The account's deliveries failing now (given up, or retrying after a failed
 * attempt), newest first, each with Redeliver through the webhooks service.
 */
export const deliveryPages = (deps: ConsoleDeps) =>
  new Elysia({ name: 'console-deliveries' })
    .use(deps.session)
    .get(
      '/console/accounts/:account/deliveries',
      async ({ viewer, account, query, set }) => {
        const words = consoleWords()
        const [total, failing] = await Promise.all([
          deps.store.deliveries.countFailing(account.id),
          deps.services.webhooks.failing(consolePrincipal(account.id), LISTED),
        ])
        const base = `/console/accounts/${encodeURIComponent(account.id)}`
        return consoleHtml(
          set,
          <ConsoleLayout
            viewer={viewer}
            title={words.t('deliveries.title')}
            account={account}
            current="deliveries"
            words={words}
          >
            <h1 safe>{words.t('deliveries.title')}</h1>
            {query.redelivered !== undefined && (
              <p class="notice" role="status" safe>
                {words.t('deliveries.redelivered')}
              </p>
            )}
            <p safe>{words.t('deliveries.intro')}</p>
            {failing.length === 0 ? (
              <p safe>{words.t('deliveries.none')}</p>
            ) : (
              <>
                {total > failing.length && <p safe>{words.t('deliveries.more', { count: failing.length })}</p>}
                <div class="console-table-scroll">
                  <table class="console-table">
                    <thead>
                      <tr>
                        {(
                          [
                            'deliveries.form',
                            'deliveries.event',
                            'deliveries.attempts',
                            'deliveries.last',
                            'deliveries.next',
                            'deliveries.created',
                          ] as const
                        ).map((heading) => (
                          <th scope="col" safe>
                            {words.t(heading)}
                          </th>
                        ))}
                        <td />
                      </tr>
                    </thead>
                    <tbody>
                      {failing.map((delivery) => (
                        <DeliveryRow delivery={delivery} base={base} words={words} viewer={viewer} />
                      ))}
                    </tbody>
                  </table>
                </div>
              </>
            )}
          </ConsoleLayout>,
        )
      },
      { account: true },
    )
    .post(
      '/console/accounts/:account/deliveries/:delivery/redeliver',
      async ({ account, params, fields, set }) => {
        await deps.services.webhooks.redeliver(consolePrincipal(account.id), fields.form ?? '', params.delivery)
        set.status = 303
        set.headers.location = `/console/accounts/${encodeURIComponent(account.id)}/deliveries?redelivered=1`
        return ''
      },
      { account: true },
    )
