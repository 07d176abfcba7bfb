/**
 * The words of an account's overview, in English: `{name}` is a placeholder;
 * an object holds the plural forms `Intl.PluralRules` names, chosen by `{count}`.
 */
export const overview = {
  'overview.title': 'Overview',
  'overview.forms': 'Forms by status',
  'overview.status.active': 'Active',
  'overview.status.completed': 'Completed',
  'overview.status.cancelled': 'Cancelled',
  'overview.status.expired': 'Expired',
  'overview.forms_link': 'See the forms',
  'overview.answers': 'Answers in the last 30 days',
  'overview.answers_total': {
    one: '{count} answer in the last 30 days (UTC days).',
    other: '{count} answers in the last 30 days (UTC days).',
  },
  'overview.answers_table': 'Answers per day, as a table',
  'overview.answers_day': 'Day (UTC)',
  'overview.answers_count': 'Answers',
  'overview.median': 'Median time to answer',
  'overview.median_value': '{duration}, from a form’s creation to its answer, over the last 30 days.',
  'overview.median_none': 'No answer in the last 30 days.',
  'overview.failing': 'Deliveries failing now',
  'overview.failing_count': {
    one: '{count} webhook delivery is failing.',
    other: '{count} webhook deliveries are failing.',
  },
  'overview.failing_none': 'No webhook delivery is failing.',
  'overview.failing_link': 'See the failing deliveries',
  'overview.events': 'Recent events',
  'overview.events_none': 'No event yet (events are kept 7 days).',
  'overview.events_link': 'See the event feed',
} as const
