import { Elysia } from 'elysia'
import { apiDoc } from '../../lib/openapi.ts'
import type { ApiKeyAuth } from '../auth/index.ts'
import { EventPage, ListEventsQuery } from './model.ts'
import type { EventService } from './service.ts'

export function eventRoutes(events: EventService, baseUrl: () => string, apiKey: ApiKeyAuth) {
  return new Elysia({ name: 'events' }).use(apiKey).get(
    '/api/v1/events',
    async ({ request, query, set, principal }) => {
      const page = await events.read(principal, query, request.signal)
      set.headers.link = `<${baseUrl()}/api/v1/events?${new URLSearchParams({ after: page.next, limit: String(page.limit) })}>; rel="next"`
      // Streamed as the client reads it (service.ts): a page is at most 1 MiB of JSON, but for one larger event.
      return new Response(page.body, { headers: { 'content-type': 'application/json;charset=utf-8' } })
    },
    {
      apiKey: true,
      detail: apiDoc({
        tag: 'Events',
        summary: "The account's event feed",
        description: [
          "Every ending of every form of the account, oldest first, in the order they committed: form.completed, form.expired, form.cancelled (whatever the form's callback_events), and form.deleted (deleting a form removes its other events). Each event's `payload` is the body of the webhook it sends.",
          'Follow `next` (always present; also in the `Link` header, rel="next") and no event is ever skipped or repeated. `after=latest` starts from now. With `wait=N` (1..60) a read with nothing new is held until an event commits, through any instance, or the time is up (then `events` is empty). Events are kept 7 days; a cursor past an event since removed is still a position.',
          'A page holds at most `limit` events and at most 1 MiB of JSON: an event larger than that comes alone. `next` is the last event sent, so following it reads the rest. While the server is sending as much as it may hold, a read is refused with 503 and `Retry-After`.',
        ].join('\n\n'),
        query: ListEventsQuery,
        responses: { 200: EventPage },
        errors: [422],
        headers: { 200: { Link: 'rel="next": the same query from `next` on' } },
      }),
    },
  )
}
