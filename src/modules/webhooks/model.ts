import { type Static, Type } from '@sinclair/typebox'
import { ApiTime } from '../../lib/schemas.ts'
import { FORM_EVENTS } from '../events/names.ts'

export const DeliveryObject = Type.Object(
  {
    id: Type.String({ description: 'Delivery id: X-Service-Delivery and webhook-id, the same on every attempt' }),
    event: Type.Union(
      FORM_EVENTS.map((event) => Type.Literal(event)),
      { description: 'The ending it tells of (X-Service-Event)' },
    ),
    status: Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed')]),
    attempts: Type.Integer({ description: 'Attempts made in total, redeliveries included' }),
    last_status_code: Type.Union([Type.Integer(), Type.Null()]),
    last_error: Type.Union([Type.String(), Type.Null()]),
    next_attempt_at: Type.Union([ApiTime, Type.Null()]),
    delivered_at: Type.Union([ApiTime, Type.Null()]),
    created_at: ApiTime,
  },
  { title: 'Delivery' },
)
export type DeliveryObject = Static<typeof DeliveryObject>
