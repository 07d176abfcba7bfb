import { type Static, Type } from '@sinclair/typebox'
import { ApiTime, JsonObject, Ulid } from '../../lib/schemas.ts'

const SubmitterMetadata = Type.Object(
  {
    ip: Type.Union([Type.String(), Type.Null()], {
      description: 'Address of the submitter (from X-Forwarded-For when SERVICE_TRUST_PROXY is on)',
    }),
    user_agent: Type.Union([Type.String(), Type.Null()]),
  },
  { title: 'SubmitterMetadata' },
)

export const ResponseObject = Type.Object(
  {
    id: Ulid,
    form_id: Ulid,
    data: Type.Record(
      Type.String(),
      Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Array(Type.String())]),
      {
        description:
          'Field key to the submitted value; optional fields left empty are absent, an unticked checkbox is false, a multiple select is the chosen option values',
      },
    ),
    submitted_at: ApiTime,
    metadata: SubmitterMetadata,
    context: Type.Union([JsonObject, Type.Null()], { description: "The form's context, as given at creation" }),
  },
  { title: 'Response' },
)
export type ResponseObject = Static<typeof ResponseObject>

export const ListResponsesQuery = Type.Object(
  {
    wait: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 60,
        description:
          'Seconds to hold the request while the form is active and unanswered: it answers as soon as a response arrives or the form leaves active, else when the time is up (possibly with []).',
      }),
    ),
  },
  { additionalProperties: true },
)
