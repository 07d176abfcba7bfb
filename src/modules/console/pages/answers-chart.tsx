/** @jsxImportSource @kitajs/html */
import type { AnswersOnDay } from '../../responses/store/index.ts'
import { DAY_MS } from '../../responses/store/index.ts'
import type { ConsoleWords } from '../words/index.ts'

/** Days the overview's chart covers, today (UTC) the last. */
const CHART_DAYS = 30

// The drawing's own units: the svg scales to its box's width (CSS), keeping these proportions.
const BAR_STEP = 10
const BAR_WIDTH = 8
const PLOT_HEIGHT = 100
const LABEL_ROOM = 16
const WIDTH = CHART_DAYS * BAR_STEP
const HEIGHT = PLOT_HEIGHT + LABEL_ROOM

/** The first millisecond of the UTC day `CHART_DAYS - 1` days before the one `now` falls in: what the chart counts from. */
export const chartStart = (now: number): number => Math.floor(now / DAY_MS) * DAY_MS - (CHART_DAYS - 1) * DAY_MS

/** Every day of the chart, oldest first, with its answers (0 for days the store left out). */
export function chartDays(start: number, counted: AnswersOnDay[]): AnswersOnDay[] {
  const byDay = new Map(counted.map((entry) => [entry.day, entry.answers]))
  return Array.from({ length: CHART_DAYS }, (_, i) => {
    const day = start + i * DAY_MS
    return { day, answers: byDay.get(day) ?? 0 }
  })
}

const dayLabel = (day: number) => new Date(day).toISOString().slice(0, 10)

/**
 * Answers per day as bars drawn on the server (no script), and the same
 * numbers as a table. The drawing is an image whose title says what it shows
 * in a sentence; the table, in a <details> anyone may open, holds every day.
 */
export function AnswersChart({ days, words }: { days: AnswersOnDay[]; words: ConsoleWords }) {
  const most = Math.max(1, ...days.map((entry) => entry.answers))
  const total = days.reduce((sum, entry) => sum + entry.answers, 0)
  const summary = words.t('overview.answers_total', { count: total })
  return (
    <figure class="console-chart">
      <svg
        viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
        role="img"
        aria-labelledby="answers-chart-title"
        preserveAspectRatio="none"
        xmlns="http://www.w3.org/2000/svg"
      >
        <title id="answers-chart-title" safe>
          {summary}
        </title>
        <line class="console-chart-axis" x1="0" y1={PLOT_HEIGHT} x2={WIDTH} y2={PLOT_HEIGHT} />
        {days.map((entry, i) => {
          const height = entry.answers === 0 ? 0 : Math.max(1, (entry.answers / most) * (PLOT_HEIGHT - 4))
          return (
            <rect
              class="console-chart-bar"
              x={i * BAR_STEP + (BAR_STEP - BAR_WIDTH) / 2}
              y={PLOT_HEIGHT - height}
              width={BAR_WIDTH}
              height={height}
            />
          )
        })}
      </svg>
      <div class="console-chart-days" aria-hidden="true">
        <span safe>{dayLabel(days[0]!.day)}</span>
        <span safe>{dayLabel(days.at(-1)!.day)}</span>
      </div>
      <figcaption safe>{summary}</figcaption>
      <details class="console-chart-table">
        <summary safe>{words.t('overview.answers_table')}</summary>
        <table>
          <thead>
            <tr>
              <th scope="col" safe>
                {words.t('overview.answers_day')}
              </th>
              <th scope="col" safe>
                {words.t('overview.answers_count')}
              </th>
            </tr>
          </thead>
          <tbody>
            {days.map((entry) => (
              <tr>
                <th scope="row" safe>
                  {dayLabel(entry.day)}
                </th>
                <td safe>{words.number(entry.answers)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </figure>
  )
}
