/** The words of an account's failing deliveries page, in English (placeholders and plurals as overview.ts says). */
export const deliveries = {
  'deliveries.title': 'Failing deliveries',
  'deliveries.intro':
    'Webhook deliveries whose last attempt failed: given up after every retry, or waiting for the next one. Redeliver starts a new round with every retry.',
  'deliveries.none': 'No webhook delivery is failing.',
  'deliveries.more': {
    one: 'The newest {count} is shown.',
    other: 'The newest {count} are shown.',
  },
  'deliveries.form': 'Form',
  'deliveries.event': 'Event',
  'deliveries.attempts': 'Attempts',
  'deliveries.last': 'Last outcome',
  'deliveries.status_code': 'HTTP {code}',
  'deliveries.no_outcome': 'None yet',
  'deliveries.next': 'Next attempt',
  'deliveries.given_up': 'None: given up',
  'deliveries.created': 'Queued',
  'deliveries.redeliver': 'Redeliver',
  'deliveries.redeliver_label': 'Redeliver the {event} delivery of {form}',
  'deliveries.redelivered': 'The delivery is queued again: a new round of attempts starts now.',
} as const
