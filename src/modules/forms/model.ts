import { type Static, Type } from '@sinclair/typebox'
import { FieldInput } from '../../fields/index.ts'
import { SUPPORTED_LOCALES } from '../../i18n/locales.ts'
import { ApiTime, JsonObject, ULID_PATTERN, Ulid } from '../../lib/schemas.ts'
import { FORM_COMPLETED, FORM_EVENTS, type FormEvent } from '../events/names.ts'

export const FORM_STATUSES = ['active', 'completed', 'cancelled', 'expired'] as const
export type FormStatus = (typeof FORM_STATUSES)[number]

export const DEFAULT_CALLBACK_EVENTS: readonly FormEvent[] = [FORM_COMPLETED]

const CallbackEvents = Type.Array(Type.Union(FORM_EVENTS.map((event) => Type.Literal(event))), {
  minItems: 1,
  uniqueItems: true,
  description:
    'The endings the webhook tells of: form.completed (answered), form.expired, form.cancelled. Default ["form.completed"].',
})

export const CONTEXT_MAX_BYTES = 65_536
export const EXPIRES_IN_MAX_MS = 365 * 86_400_000
export const DEFAULT_EXPIRES_IN = '48h'

export const PAGE_LIMITS = { submitLabel: 60, successMessage: 2000, sender: 100 } as const

/**
 * How the person's page speaks (CONTRACT 11): returned as given (`time_zone`
 * in its canonical spelling, CONTRACT 13a), `{}` when none. Its checks are
 * made by `checkPage` (forms/create-body.ts), which gives each problem a code;
 * this schema documents it.
 */
export const PageSettings = Type.Object(
  {
    locale: Type.Optional(
      Type.String({
        description: `BCP 47 tag for the page's built-in words, matched after CLDR likely subtags (de-AT is de, zh-TW is zh-Hant). Supported: ${SUPPORTED_LOCALES.join(', ')}. Without it the page follows the browser's Accept-Language.`,
      }),
    ),
    submit_label: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: PAGE_LIMITS.submitLabel,
        description: "The button's words instead of the built-in ones",
      }),
    ),
    success_message: Type.Optional(
      Type.String({
        maxLength: PAGE_LIMITS.successMessage,
        description: 'What the page says once the answer is sent: on the receipt and on later visits',
      }),
    ),
    sender: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: PAGE_LIMITS.sender,
        description: 'Who is asking, shown at the top as their claim ("Asked by …")',
      }),
    ),
    time_zone: Type.Optional(
      Type.String({
        description:
          'IANA time zone for the dates the page writes, such as Europe/Berlin; default UTC. Matched in any case and kept as Intl spells it: europe/berlin is Europe/Berlin.',
      }),
    ),
    review: Type.Optional(
      Type.Boolean({
        description:
          'true: a valid form post first shows a "Check your answers" page (each answer with a Change link back to the form); only its Send records the answer. JSON submissions are recorded at once.',
      }),
    ),
  },
  { additionalProperties: false, title: 'PageSettings' },
)
export type PageSettings = Static<typeof PageSettings>

export const CreateFormBody = Type.Object(
  {
    title: Type.String({ minLength: 1, maxLength: 255 }),
    description: Type.Optional(
      Type.Union([Type.String({ maxLength: 10_000 }), Type.Null()], { description: 'Shown on the form' }),
    ),
    fields: Type.Array(FieldInput, { minItems: 1, maxItems: 100 }),
    callback_url: Type.Optional(
      Type.Union([
        Type.String({
          maxLength: 2048,
          description: 'Absolute http(s) URL that receives the webhooks of callback_events',
        }),
        Type.Null(),
      ]),
    ),
    callback_events: Type.Optional(CallbackEvents),
    callback_metadata: Type.Optional(
      Type.Union([JsonObject, Type.Null()], { description: 'Echoed in the webhook payload; null means none' }),
    ),
    context: Type.Optional(
      Type.Union([JsonObject, Type.Null()], {
        description: 'Opaque JSON object (at most 64 KB) returned with responses and webhooks',
      }),
    ),
    settings: Type.Optional(
      Type.Union([JsonObject, Type.Null()], { description: 'Reserved for future use; null means none' }),
    ),
    page: Type.Optional(
      Type.Union([PageSettings, Type.Null()], {
        description: "The page's language, words and time zone; null means none",
      }),
    ),
    expires_in: Type.Optional(
      Type.Union(
        [
          Type.String({
            pattern: '^[1-9][0-9]{0,5}[mhd]$',
            errorMessage: 'Expected a number and a unit, such as "90m", "48h" or "7d"',
          }),
          Type.Null(),
        ],
        {
          description:
            'How long the form accepts an answer: "<n>m", "<n>h" or "<n>d", at most 365 days; null never expires. Default "48h".',
        },
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
      Type.Union(
        [Type.String({ description: 'ISO 8601 datetime in the future; without a zone it is UTC' }), Type.Null()],
        {
          description: 'New expiry; null removes it',
        },
      ),
    ),
  },
  { additionalProperties: false, title: 'UpdateForm' },
)
export type UpdateFormBody = Static<typeof UpdateFormBody>

export const ListFormsQuery = Type.Object(
  {
    status: Type.Optional(Type.Union(FORM_STATUSES.map((s) => Type.Literal(s)))),
    cursor: Type.Optional(
      Type.String({
        pattern: ULID_PATTERN,
        errorMessage: 'Expected the id of the last form seen',
        description: 'Id of the last form seen; the page holds older forms',
      }),
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
  { ...formSummaryProperties, context: Type.Union([JsonObject, Type.Null()]), page: PageSettings },
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
    callback_events: CallbackEvents,
    callback_metadata: JsonObject,
    settings: JsonObject,
    page: PageSettings,
  },
  { title: 'FormDetail' },
)
export type FormDetail = Static<typeof FormDetail>
