import { type Static, Type } from '@sinclair/typebox'
import { ApiTime, Ulid } from '../../lib/schemas.ts'
import { EVENT_TYPES } from './names.ts'

export const EVENTS_LIMIT = { default: 20, max: 100 } as const
const EVENTS_WAIT_MAX_S = 60

export const ListEventsQuery = Type.Object(
  {
    after: Type.Optional(
      Type.String({
        maxLength: 64,
        description:
          'Events after this cursor (an earlier `next`, or an event id). Omitted: from the oldest kept. `latest`: none now; `next` is the head, to listen from now on.',
      }),
    ),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: EVENTS_LIMIT.max, default: EVENTS_LIMIT.default })),
    wait: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: EVENTS_WAIT_MAX_S,
        default: 0,
        description:
          'Seconds to hold the request while there is no event after the cursor: it answers as soon as one commits, else with none when the time is up.',
      }),
    ),
  },
  { additionalProperties: true },
)
export type ListEventsQuery = Static<typeof ListEventsQuery>

const EventObject = Type.Object(
  {
    id: Type.String({ description: 'Opaque; as a cursor, it stands for this event' }),
    type: Type.Union(EVENT_TYPES.map((type) => Type.Literal(type))),
    form_id: Ulid,
    occurred_at: ApiTime,
    payload: Type.Object(
      {},
      {
        additionalProperties: true,
        description:
          'The body of the webhook this event sends (form.completed, form.expired, form.cancelled); form.deleted has {"form_id"} only',
      },
    ),
  },
  { title: 'Event' },
)

export const EventPage = Type.Object(
  {
    events: Type.Array(EventObject, { description: 'Oldest first, in the order they committed' }),
    next: Type.String({
      description: 'Opaque. Pass as `after` for the events that follow; equal to `after` when none was new',
    }),
  },
  { title: 'EventPage' },
)
