import { Type, type Static } from '@sinclair/typebox'
import { FieldInput } from '../../fields/index.ts'
import { ApiTime, JsonObject, ULID_PATTERN, Ulid } from '../../lib/schemas.ts'

export const FORM_STATUSES = ['active', 'completed', 'cancelled', 'expired'] as const
export type FormStatus = (typeof FORM_STATUSES)[number]

export const CONTEXT_MAX_BYTES = 65_536
export const EXPIRES_IN_MAX_MS = 365 * 86_400_000
export const DEFAULT_EXPIRES_IN = '48h'

export const CreateFormBody = Type.Object(
  {
    title: Type.String({ minLength: 1, maxLength: 255 }),
    description: Type.Optional(Type.Union([Type.String({ maxLength: 10_000 }), Type.Null()], { description: 'Shown on the form' })),
    fields: Type.Array(FieldInput, { minItems: 1, maxItems: 100 }),
    callback_url: Type.Optional(
      Type.Union([Type.String({ maxLength: 2048, description: 'Absolute http(s) URL that receives the form.completed webhook' }), Type.Null()]),
    ),
    callback_metadata: Type.Optional(Type.Union([JsonObject, Type.Null()], { description: 'Echoed in the webhook payload; null means none' })),
    context: Type.Optional(
      Type.Union([JsonObject, Type.Null()], { description: 'Opaque JSON object (at most 64 KB) returned with responses and webhooks' }),
    ),
    settings: Type.Optional(Type.Union([JsonObject, Type.Null()], { description: 'Reserved for future use; null means none' })),
    expires_in: Type.Optional(
      Type.Union(
        [
          Type.String({ pattern: '^[1-9][0-9]{0,5}[mhd]$', errorMessage: 'Expected a number and a unit, such as "90m", "48h" or "7d"' }),
          Type.Null(),
        ],
        { description: 'How long the form accepts an answer: "<n>m", "<n>h" or "<n>d", at most 365 days; null never expires. Default "48h".' },
      ),
    ),
  },
  { additionalProperties: false, title: 'CreateForm' },
)
export type CreateFormBody = Static<typeof CreateFormBody>

export const UpdateFormBody = Type.Object(
  {
    status: Type.Optional(Type.Literal('cancelled', { description: '"cancelled" cancels an active form' })),
    expires_at: Type.Optional(
      Type.Union([Type.String({ description: 'ISO 8601 datetime in the future; without a zone it is UTC' }), Type.Null()], {
        description: 'New expiry; null removes it',
      }),
    ),
  },
  { additionalProperties: false, title: 'UpdateForm' },
)
export type UpdateFormBody = Static<typeof UpdateFormBody>

export const ListFormsQuery = Type.Object(
  {
    status: Type.Optional(Type.Union(FORM_STATUSES.map((s) => Type.Literal(s)))),
    cursor: Type.Optional(
      Type.String({ pattern: ULID_PATTERN, errorMessage: 'Expected the id of the last form seen', description: 'Id of the last form seen; the page holds older forms' }),
    ),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
  },
  { additionalProperties: true },
)
export type ListFormsQuery = Static<typeof ListFormsQuery>

const FormStatusSchema = Type.Union(FORM_STATUSES.map((s) => Type.Literal(s)))

const formSummaryProperties = {
  id: Ulid,
  title: Type.String(),
  description: Type.Union([Type.String(), Type.Null()]),
  url: Type.String({ description: 'The public page to share with the human: {base_url}/f/<id>' }),
  status: FormStatusSchema,
  fields_count: Type.Integer(),
  expires_at: Type.Union([ApiTime, Type.Null()]),
  created_at: ApiTime,
}

export const FormSummary = Type.Object(formSummaryProperties, { title: 'FormSummary' })
export type FormSummary = Static<typeof FormSummary>

export const Form = Type.Object(
  { ...formSummaryProperties, context: Type.Union([JsonObject, Type.Null()]) },
  { title: 'Form' },
)
export type Form = Static<typeof Form>

export const FieldOutput = Type.Object(
  {
    key: Type.String(),
    type: Type.String(),
    label: Type.String(),
    description: Type.Union([Type.String(), Type.Null()]),
    required: Type.Boolean(),
    config: JsonObject,
  },
  { title: 'Field' },
)

export const FormDetail = Type.Object(
  {
    ...formSummaryProperties,
    context: Type.Union([JsonObject, Type.Null()]),
    fields: Type.Array(FieldOutput),
    callback_url: Type.Union([Type.String(), Type.Null()]),
    callback_metadata: JsonObject,
    settings: JsonObject,
  },
  { title: 'FormDetail' },
)
export type FormDetail = Static<typeof FormDetail>
