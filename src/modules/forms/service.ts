import { createHash, createHmac } from 'node:crypto'
import type { Static } from '@sinclair/typebox'
import { answersSchema, type FieldDefinition, FieldInput } from '../../fields/index.ts'
import { conflict, formNotFound, invalidAt, ProblemList } from '../../lib/errors.ts'
import { canonicalUlid, newId } from '../../lib/ids.ts'
import { canonicalJson, encodeFreeForm, utf8Length } from '../../lib/json.ts'
import { createLruCache, stringBytes } from '../../lib/lru.ts'
import { timeSlicer, yieldToLoop } from '../../lib/slices.ts'
import {
  type Clock,
  formatApiTime,
  formatOptionalApiTime,
  MAX_TIME,
  parseApiTime,
  parseDuration,
} from '../../lib/time.ts'
import { collectControlCharacters, integerQuery, prepareValidation, validate } from '../../lib/validation.ts'
import type { Store, Transaction } from '../../stores.ts'
import type { Principal } from '../auth/service.ts'
import { endedEventBody, recordDeletion, recordEnding } from '../events/endings.ts'
import { FORM_CANCELLED } from '../events/names.ts'
import { releaseHeldFiles } from '../submissions/held.ts'
import { checkCreateBody } from './create-body.ts'
import {
  CONTEXT_MAX_BYTES,
  CreateFormBody,
  DEFAULT_CALLBACK_EVENTS,
  DEFAULT_EXPIRES_IN,
  type FieldOutput as FieldOutputSchema,
  type Form,
  type FormSummary,
  ListFormsQuery,
  UpdateFormBody,
} from './model.ts'
import type { FormOfAccount, FormState, FormSummaryRecord, NewForm, StoredForm } from './store/index.ts'

/** The unchanging JSON of forms kept ready (least recently used beyond), in bytes; a larger form's is made each time. */
const DETAILS_KEPT = { maxBytes: 32 * 1024 * 1024, maxEntryBytes: 4 * 1024 * 1024 }

/** How long an Idempotency-Key holds. */
export const IDEMPOTENCY_WINDOW_MS = 24 * 3_600_000
export const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/

type FieldOutput = Static<typeof FieldOutputSchema>

/** A form's detail JSON around its changing part, and the text of the expiry last spliced in. */
interface DetailParts {
  head: string
  tail: string
  expiresAt?: number | null
  expiresAtJson?: string
}

/**
 * The per-form webhook secret: HMAC-SHA256 keyed with the creating API key's
 * plaintext, over the form id. The client, holding its key, computes the same.
 */
export const webhookSecret = (apiKey: string, formId: string) =>
  createHmac('sha256', apiKey).update(formId).digest('hex')

export interface FormPage {
  forms: FormSummary[]
  /** The cursor of the next page, when there is one. */
  nextCursor: string | undefined
}

/**
 * Moves an active, unexpired form to `completed` in the caller's transaction:
 * the one-response race. False when the form no longer takes an answer.
 */
export const completeForm = (tx: Transaction, formId: string, at: number) => tx.forms.complete(formId, at)

/**
 * `onChange` hears of every change of state this service makes (cancelled,
 * deleted), once committed with its event, so long-polls on the form and on
 * its account's feed wake; `deliveryQueued` when a webhook waits to be sent.
 */
export function createFormService(
  store: Store,
  clock: Clock,
  baseUrl: () => string,
  onChange: (form: FormOfAccount, deliveryQueued: boolean) => void,
) {
  // Compiled soon after start rather than by the first create, which would wait for it; not during
  // start itself, which it would lengthen by a third (about 35 ms) before the server answers anything.
  setTimeout(() => {
    for (const schema of [CreateFormBody, UpdateFormBody, ...FieldInput.anyOf]) prepareValidation(schema)
  }, 1000).unref()
  const detailParts = createLruCache<DetailParts>({
    ...DETAILS_KEPT,
    sizeOf: (parts) => stringBytes(parts.head) + stringBytes(parts.tail),
  })
  const summary = (form: FormSummaryRecord): FormSummary => ({
    id: form.id,
    title: form.title,
    description: form.description,
    url: `${baseUrl()}/f/${form.id}`,
    status: form.status,
    fields_count: form.fieldsCount,
    expires_at: formatOptionalApiTime(form.expiresAt),
    created_at: formatApiTime(form.createdAt),
  })
  const withContext = (form: StoredForm): Form => ({
    ...summary(form),
    context: form.context === null ? null : JSON.parse(form.context),
    page: form.page,
  })

  /** The account's form with its fields, or 404 (also for malformed ids and other accounts' forms). */
  async function ownForm(principal: Principal, formId: string, now = clock()): Promise<StoredForm> {
    const id = canonicalUlid(formId)
    const form = id && (await store.forms.findForAccount(principal.accountId, id, now))
    if (!form) throw formNotFound()
    return form
  }

  /** The state (status, expiry, context) of the account's form, or 404 as ownForm. */
  async function ownFormState(principal: Principal, formId: string): Promise<FormState> {
    const id = canonicalUlid(formId)
    const state = id && (await store.forms.findStateForAccount(principal.accountId, id, clock()))
    if (!state) throw formNotFound()
    return state
  }

  /** The JSON of a FormDetail around its changing part (state, expiry, context), which goes between. */
  function unchangingDetail(row: StoredForm): DetailParts {
    const fields: FieldOutput[] = row.fields.map((field) => ({
      key: field.key,
      type: field.type,
      label: field.label,
      description: field.description ?? null,
      required: field.required ?? false,
      config: field.config ?? {},
    }))
    const identity = JSON.stringify({
      id: row.id,
      title: row.title,
      description: row.description,
      url: `${baseUrl()}/f/${row.id}`,
    })
    return {
      head: `${identity.slice(0, -1)},`,
      tail:
        `"created_at":"${formatApiTime(row.createdAt)}","fields_count":${row.fieldsCount},"fields":${JSON.stringify(fields)},` +
        `"callback_url":${JSON.stringify(row.callbackUrl)},"callback_events":${JSON.stringify(row.callbackEvents)},` +
        `"callback_metadata":${row.callbackMetadata},"settings":${row.settings},` +
        `"page":${JSON.stringify(row.page)}}`,
    }
  }

  /** The JSON Schema of the `data` a response to this form will hold. */
  async function answersSchemaOf(principal: Principal, formId: string): Promise<Record<string, unknown>> {
    const form = await ownForm(principal, formId)
    return answersSchema(form.title, form.fields)
  }

  /**
   * The form a create body makes, or a 422 listing its problems: what create
   * writes and what the console's preview shows. A large body is checked a
   * turn of the event loop at a time: other requests go on meanwhile.
   */
  async function newForm(principal: Principal, input: unknown, slices = timeSlicer()): Promise<NewForm> {
    const body = await checkCreateBody(input, slices)
    await slices.pause()
    const context = body.context ? encodeFreeForm(body.context, '/context') : null
    if (context !== null && utf8Length(context) > CONTEXT_MAX_BYTES) {
      throw invalidAt('/context', `Must be at most ${CONTEXT_MAX_BYTES} bytes as compact UTF-8 JSON`, 'too_long')
    }
    const callbackUrl = body.callback_url ?? null
    if (callbackUrl !== null && principal.key === null) {
      throw invalidAt(
        '/callback_url',
        'A form with a callback_url is created through the API: its webhook secret is derived from the creating API key, and the console holds none',
        'invalid_value',
      )
    }
    const now = clock()
    const expiresIn = body.expires_in === null ? null : parseDuration(body.expires_in ?? DEFAULT_EXPIRES_IN)!
    const id = newId()
    await slices.pause()
    return {
      id,
      accountId: principal.accountId,
      title: body.title,
      description: body.description ?? null,
      fields: body.fields as FieldDefinition[],
      fieldsCount: body.fields.length,
      callbackUrl,
      callbackEvents: body.callback_events ?? [...DEFAULT_CALLBACK_EVENTS],
      callbackMetadata: encodeFreeForm(body.callback_metadata ?? {}, '/callback_metadata'),
      webhookSecret: callbackUrl === null || principal.key === null ? null : webhookSecret(principal.key, id),
      context,
      settings: encodeFreeForm(body.settings ?? {}, '/settings'),
      page: body.page ?? {},
      expiresAt: expiresIn === null ? null : now + expiresIn,
      createdAt: now,
    }
  }

  return {
    ownFormState,

    /** The form a create body would make, not made: the same checks as create, the same 422. */
    preview: async (principal: Principal, input: unknown): Promise<StoredForm> => ({
      ...(await newForm(principal, input)),
      status: 'active',
    }),

    /**
     * Creates a form. With an Idempotency-Key, a retry (the same key and body
     * from the same account within 24 hours) gets the form the first request
     * created instead of a second one; the same key with another body is a 422.
     */
    async create(
      principal: Principal,
      input: unknown,
      idempotencyKey?: string,
    ): Promise<{ form: Form; replayed: boolean }> {
      if (idempotencyKey !== undefined && !IDEMPOTENCY_KEY.test(idempotencyKey)) {
        throw invalidAt('', 'The Idempotency-Key header must be 1 to 255 visible ASCII characters', 'invalid_format')
      }
      const slices = timeSlicer()
      const form = await newForm(principal, input, slices)
      const { id, createdAt: now } = form
      await slices.pause()
      // The same body, whatever its key order or spacing.
      const requestHash =
        idempotencyKey === undefined ? '' : createHash('sha256').update(canonicalJson(input)).digest('hex')
      await slices.pause()
      // Looking the key up and creating the form are one unit of work: concurrent duplicates create one form.
      const { created, replayed } = await store.transaction(async (tx) => {
        if (idempotencyKey !== undefined) {
          const earlier = await tx.forms.idempotencyKeyForUpdate(principal.accountId, idempotencyKey)
          if (earlier && earlier.createdAt > now - IDEMPOTENCY_WINDOW_MS) {
            if (earlier.requestHash !== requestHash) {
              throw invalidAt(
                '',
                'This Idempotency-Key was already used with a different body; use a new key for a new form',
                'not_unique',
              )
            }
            return {
              created: (await tx.forms.findForAccount(principal.accountId, earlier.formId, now))!,
              replayed: true,
            }
          }
        }
        await tx.forms.insert(form)
        if (idempotencyKey !== undefined) {
          await tx.forms.rememberIdempotencyKey({
            accountId: principal.accountId,
            key: idempotencyKey,
            requestHash,
            formId: id,
            createdAt: now,
          })
        }
        return { created: { ...form, status: 'active' as const }, replayed: false }
      })
      return { form: withContext(created), replayed }
    },

    answersSchema: answersSchemaOf,

    /** The same as JSON text, written after a turn of the event loop: the largest form's is about 1 MB. */
    async answersSchemaJson(principal: Principal, formId: string): Promise<string> {
      const schema = await answersSchemaOf(principal, formId)
      await yieldToLoop()
      return JSON.stringify(schema)
    },

    /**
     * The form with its fields and settings, as the JSON text of a FormDetail.
     * What never changes after creation is serialised once per form and kept;
     * the state, expiry and context are read and spliced in every time.
     */
    async get(principal: Principal, formId: string): Promise<string> {
      const id = canonicalUlid(formId)
      let parts = id ? detailParts.get(id) : undefined
      let state: FormState
      if (parts) {
        // Only what can change need be read; the query still checks the form is the caller's.
        state = await ownFormState(principal, formId)
      } else {
        const form = await ownForm(principal, formId)
        parts = detailParts.set(form.id, unchangingDetail(form))
        state = form
      }
      // The expiry rarely changes: its text is kept with the parts while it does not.
      if (parts.expiresAt !== state.expiresAt || parts.expiresAtJson === undefined) {
        parts.expiresAt = state.expiresAt
        parts.expiresAtJson = state.expiresAt === null ? 'null' : `"${formatApiTime(state.expiresAt)}"`
      }
      const expiresAt = parts.expiresAtJson
      return `${parts.head}"status":"${state.status}","expires_at":${expiresAt},"context":${state.context ?? 'null'},${parts.tail}`
    },

    /** A page of the account's forms, newest first; the console also searches titles (`titleContains`). */
    async list(principal: Principal, rawQuery: Record<string, unknown>, titleContains?: string): Promise<FormPage> {
      const query = validate(ListFormsQuery, integerQuery(rawQuery, ['limit']))
      const limit = query.limit ?? 20
      // One extra row tells whether another page exists.
      const rows = await store.forms.list({
        accountId: principal.accountId,
        status: query.status,
        before: canonicalUlid(query.cursor),
        limit: limit + 1,
        now: clock(),
        titleContains,
      })
      const forms = rows.slice(0, limit).map(summary)
      return { forms, nextCursor: rows.length > limit ? forms.at(-1)!.id : undefined }
    },

    /**
     * Cancels and/or changes the expiry of an active form. Both changes are
     * judged against the form as it was before the request, and apply together.
     */
    async update(principal: Principal, formId: string, input: unknown): Promise<Form> {
      const body = validate(UpdateFormBody, input)
      const problems = new ProblemList()
      collectControlCharacters(body, problems)
      problems.throwIfAny()
      let expiresAt: number | null | undefined
      if (body.expires_at !== undefined && body.expires_at !== null) {
        expiresAt = parseApiTime(body.expires_at)
        if (expiresAt === undefined || expiresAt > MAX_TIME)
          throw invalidAt('/expires_at', 'Expected an ISO 8601 datetime such as 2026-12-01T12:00:00Z', 'invalid_format')
        if (expiresAt <= clock()) throw invalidAt('/expires_at', 'Must be in the future', 'too_small')
      } else {
        expiresAt = body.expires_at
      }
      const id = canonicalUlid(formId)
      if (!id) throw formNotFound()
      const { updated, deliveryQueued } = await store.transaction(async (tx) => {
        const now = clock()
        const form = await tx.forms.findForAccountForUpdate(principal.accountId, id, now)
        if (!form) throw formNotFound()
        if (body.status === 'cancelled' && form.status !== 'active' && form.status !== 'cancelled') {
          throw conflict(`A ${form.status} form cannot be cancelled`)
        }
        if (expiresAt !== undefined && form.status !== 'active') {
          throw conflict(`The expiry of a ${form.status} form cannot be changed`)
        }
        if (expiresAt !== undefined) await tx.forms.setExpiry(form.id, expiresAt, now)
        let deliveryQueued = false
        // A cancelled form is cancelled once: a repeated cancel changes nothing and tells no one.
        if (body.status === 'cancelled' && form.status === 'active') {
          await tx.forms.setStatus(form.id, 'cancelled', now)
          const payload = endedEventBody({
            event: FORM_CANCELLED,
            formId: form.id,
            occurredAt: now,
            callbackMetadataJson: form.callbackMetadata,
            contextJson: form.context,
          })
          deliveryQueued = await recordEnding(tx, { type: FORM_CANCELLED, form, occurredAt: now, payload, now })
          // Files kept across a 422 wait for an answer that can no longer come.
          await releaseHeldFiles(tx, form.id)
        }
        return {
          updated: withContext((await tx.forms.findForAccount(principal.accountId, form.id, now))!),
          deliveryQueued,
        }
      })
      if (updated.status !== 'active') onChange({ id: updated.id, accountId: principal.accountId }, deliveryQueued)
      return updated
    },

    /**
     * Deletes the form with everything it holds, its events too: its account's
     * feed keeps only a form.deleted, so an agent waiting on it hears this ending.
     */
    async delete(principal: Principal, formId: string): Promise<void> {
      const id = canonicalUlid(formId)
      if (!id) throw formNotFound()
      const deleted = await store.transaction(async (tx) => {
        if (!(await tx.forms.delete(principal.accountId, id))) return false
        await recordDeletion(tx, { id, accountId: principal.accountId }, clock())
        return true
      })
      if (!deleted) throw formNotFound()
      detailParts.delete(id)
      onChange({ id, accountId: principal.accountId }, false)
    },
  }
}

export type FormService = ReturnType<typeof createFormService>
