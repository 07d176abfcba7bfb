import { Elysia } from 'elysia'
import { apiDoc } from '../../lib/openapi.ts'
import { principalOf } from '../auth/index.ts'
import { EventPage, ListEventsQuery } from './model.ts'
import { feedPageJson, type EventService } from './service.ts'

export function eventRoutes(events: EventService, baseUrl: () => string) {
  return new Elysia({ name: 'events' }).get(
    '/api/v1/events',
    async ({ request, query, set }) => {
      const page = await events.list(principalOf(set), query, request.signal)
      set.headers.link = `<${baseUrl()}/api/v1/events?${new URLSearchParams({ after: page.next, limit: String(page.limit) })}>; rel="next"`
      set.headers['content-type'] = 'application/json;charset=utf-8'
      return feedPageJson(page)
    },
    {
      detail: apiDoc({
        tag: 'Events',
        summary: "The account's event feed",
        description: [
          'Every ending of every form of the account, oldest first, in the order they committed: form.completed, form.expired, form.cancelled (whatever the form\'s callback_events), and form.deleted (deleting a form removes its other events). Each event\'s `payload` is the body of the webhook it sends.',
          'Follow `next` (always present; also in the `Link` header, rel="next") and no event is ever skipped or repeated. `after=latest` starts from now. With `wait=N` (1..60) a read with nothing new is held until an event commits, through any instance, or the time is up (then `events` is empty). Events are kept 7 days; a cursor past an event since removed is still a position.',
        ].join('\n\n'),
        query: ListEventsQuery,
        responses: { 200: EventPage },
        errors: [422],
        headers: { 200: { Link: 'rel="next": the same query from `next` on' } },
      }),
    },
  )
}
