/** @jsxImportSource @kitajs/html */
import { Elysia } from 'elysia'
import { attr } from '../../../../views/attributes.ts'
import { consolePrincipal } from '../../auth/service.ts'
import { EVENTS_LIMIT } from '../../events/model.ts'
import type { FeedEvent } from '../../events/service.ts'
import type { ConsoleDeps } from '../deps.ts'
import { ConsoleLayout, consoleHtml } from '../layout.tsx'
import { type ConsoleWords, consoleWords } from '../words/index.ts'

/** The body of an event as JSON laid out to read (as stored, it is one line). */
const readableJson = (payload: string) => JSON.stringify(JSON.parse(payload), null, 2)

/** Events as a list: type, form (a link while the form exists), time, and with `withBodies` the body as JSON. */
export function EventList(props: { events: FeedEvent[]; base: string; words: ConsoleWords; withBodies: boolean }) {
  const { events, base, words, withBodies } = props
  return (
    <ol class="console-events">
      {events.map((event) => (
        <li>
          <p class="console-event-head">
            <code>{event.type}</code>{' '}
            {event.type === 'form.deleted' ? (
              <span safe>{words.t('events.deleted_form', { id: event.formId })}</span>
            ) : (
              <a href={attr(`${base}/forms/${encodeURIComponent(event.formId)}`)} safe>
                {event.formId}
              </a>
            )}{' '}
            <time datetime={attr(new Date(event.occurredAt).toISOString())} safe>
              {words.dateTime(event.occurredAt)}
            </time>
          </p>
          {withBodies && (
            <details>
              <summary safe>{words.t('events.body_summary')}</summary>
              <pre class="console-json" safe>
                {readableJson(event.payload)}
              </pre>
            </details>
          )}
        </li>
      ))}
    </ol>
  )
}

/**
 * The account's event feed, a page at a time as GET /api/v1/events reads it
 * (oldest first, the feed's cursors in the address): by default its latest
 * page, with links to the pages before and after.
 */
export const eventPages = (deps: ConsoleDeps) =>
  new Elysia({ name: 'console-events' }).use(deps.session).get(
    '/console/accounts/:account/events',
    async ({ viewer, account, query, set }) => {
      const words = consoleWords()
      const after = typeof query.after === 'string' && query.after !== '' ? query.after : undefined
      // Only the earlier link sets a limit (fewer events than a page, at the feed's start); the feed checks its range.
      const limit = /^\d{1,3}$/.test(query.limit ?? '') ? Number(query.limit) : EVENTS_LIMIT.default
      const page = await deps.services.events.browse(consolePrincipal(account.id), after, limit)
      const base = `/console/accounts/${encodeURIComponent(account.id)}`
      const here = `${base}/events`
      return consoleHtml(
        set,
        <ConsoleLayout viewer={viewer} title={words.t('events.title')} account={account} current="events" words={words}>
          <h1 safe>{words.t('events.title')}</h1>
          <p safe>{words.t('events.intro')}</p>
          {page.events.length === 0 ? (
            <p safe>{words.t('events.none')}</p>
          ) : (
            <EventList events={page.events} base={base} words={words} withBodies />
          )}
          <nav class="console-pager" aria-label={attr(words.t('events.pages'))}>
            {page.earlier !== null && (
              <a
                href={attr(`${here}?after=${encodeURIComponent(page.earlier.after)}&limit=${page.earlier.limit}`)}
                rel="prev"
                safe
              >
                {words.t('events.earlier')}
              </a>
            )}
            {page.later !== null && (
              <a href={attr(`${here}?after=${encodeURIComponent(page.later)}`)} rel="next" safe>
                {words.t('events.later')}
              </a>
            )}
            {after !== undefined && (
              <a href={attr(here)} safe>
                {words.t('events.latest')}
              </a>
            )}
          </nav>
        </ConsoleLayout>,
      )
    },
    { account: true },
  )
