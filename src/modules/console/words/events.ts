/** The words of an account's event feed page, in English (placeholders and plurals as overview.ts says). */
export const events = {
  'events.title': 'Events',
  'events.intro':
    'What happened to this account’s forms, in the order it happened, as GET /api/v1/events reads it. Events are kept 7 days.',
  'events.none': 'No event here.',
  'events.body_summary': 'Body as JSON',
  'events.deleted_form': 'Deleted form {id}',
  'events.pages': 'Pages of events',
  'events.earlier': 'Earlier events',
  'events.later': 'Later events',
  'events.latest': 'Latest events',
} as const
