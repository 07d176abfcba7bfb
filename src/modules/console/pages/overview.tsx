/** @jsxImportSource @kitajs/html */
import { Elysia } from 'elysia'
import { attr } from '../../../../views/attributes.ts'
import { consolePrincipal } from '../../auth/service.ts'
import type { FeedEvent } from '../../events/service.ts'
import { FORM_STATUSES } from '../../forms/model.ts'
import type { ConsoleDeps } from '../deps.ts'
import { ConsoleLayout, consoleHtml } from '../layout.tsx'
import { type ConsoleWords, consoleWords } from '../words/index.ts'
import { AnswersChart, chartDays, chartStart } from './answers-chart.tsx'
import { EventList } from './events.tsx'

/** Events the overview shows, newest first. */
const RECENT_EVENTS = 10

const UNITS = [
  ['day', 86_400_000],
  ['hour', 3_600_000],
  ['minute', 60_000],
  ['second', 1000],
] as const
const unitFormats = UNITS.map(([unit]) => new Intl.NumberFormat('en', { style: 'unit', unit, unitDisplay: 'short' }))
const unitList = new Intl.ListFormat('en', { type: 'unit', style: 'short' })

/** A span of time in its two largest units from the first that is not zero ("1 day, 2 hr"; "12 sec"). */
function shortDuration(ms: number): string {
  let left = Math.round(ms / 1000) * 1000
  const first = UNITS.findIndex(([, size]) => left >= size)
  if (first === -1) return unitFormats[UNITS.length - 1]!.format(0)
  const parts: string[] = []
  for (let i = first; i < Math.min(first + 2, UNITS.length); i++) {
    const amount = Math.floor(left / UNITS[i]![1])
    left -= amount * UNITS[i]![1]
    if (amount > 0) parts.push(unitFormats[i]!.format(amount))
  }
  return unitList.format(parts)
}

/** The account's overview: forms by status, answers per day, median time to answer, failing deliveries, recent events. */
export const overviewPages = (deps: ConsoleDeps) =>
  new Elysia({ name: 'console-overview' }).use(deps.session).get(
    '/console/accounts/:account',
    async ({ viewer, account, set }) => {
      const words = consoleWords()
      const now = deps.clock()
      const since = chartStart(now)
      const [counts, perDay, median, failing, recent] = await Promise.all([
        deps.store.forms.countByStatus(account.id, now),
        deps.store.responses.answersPerDay(account.id, since),
        deps.store.responses.medianTimeToAnswer(account.id, since),
        deps.store.deliveries.countFailing(account.id),
        deps.services.events.browse(consolePrincipal(account.id), undefined, RECENT_EVENTS),
      ])
      const base = `/console/accounts/${encodeURIComponent(account.id)}`
      return consoleHtml(
        set,
        <ConsoleLayout
          viewer={viewer}
          title={words.t('overview.title')}
          account={account}
          current="overview"
          words={words}
        >
          <h1 safe>{account.name}</h1>
          <section aria-labelledby="overview-forms">
            <h2 id="overview-forms" safe>
              {words.t('overview.forms')}
            </h2>
            <dl class="console-counts">
              {FORM_STATUSES.map((status) => (
                <div>
                  <dt>
                    <a href={attr(`${base}/forms?status=${status}`)} safe>
                      {words.t(`overview.status.${status}`)}
                    </a>
                  </dt>
                  <dd safe>{words.number(counts[status])}</dd>
                </div>
              ))}
            </dl>
            <p>
              <a href={attr(`${base}/forms`)} safe>
                {words.t('overview.forms_link')}
              </a>
            </p>
          </section>
          <section aria-labelledby="overview-answers">
            <h2 id="overview-answers" safe>
              {words.t('overview.answers')}
            </h2>
            <AnswersChart days={chartDays(since, perDay)} words={words} />
          </section>
          <section aria-labelledby="overview-median">
            <h2 id="overview-median" safe>
              {words.t('overview.median')}
            </h2>
            <p class="console-figure" safe>
              {median === null
                ? words.t('overview.median_none')
                : words.t('overview.median_value', { duration: shortDuration(median) })}
            </p>
          </section>
          <section aria-labelledby="overview-failing">
            <h2 id="overview-failing" safe>
              {words.t('overview.failing')}
            </h2>
            <p class="console-figure" safe>
              {failing === 0 ? words.t('overview.failing_none') : words.t('overview.failing_count', { count: failing })}
            </p>
            {failing > 0 && (
              <p>
                <a href={attr(`${base}/deliveries`)} safe>
                  {words.t('overview.failing_link')}
                </a>
              </p>
            )}
          </section>
          <section aria-labelledby="overview-events">
            <h2 id="overview-events" safe>
              {words.t('overview.events')}
            </h2>
            <RecentEvents events={recent.events} base={base} words={words} />
          </section>
        </ConsoleLayout>,
      )
    },
    { account: true },
  )

function RecentEvents({ events, base, words }: { events: FeedEvent[]; base: string; words: ConsoleWords }) {
  if (events.length === 0) return <p safe>{words.t('overview.events_none')}</p>
  return (
    <>
      <EventList events={events.toReversed()} base={base} words={words} withBodies={false} />
      <p>
        <a href={attr(`${base}/events`)} safe>
          {words.t('overview.events_link')}
        </a>
      </p>
    </>
  )
}
