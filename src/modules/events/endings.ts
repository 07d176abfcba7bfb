import type { AnswerValue } from '../../fields/index.ts'
import { formatUtcTime } from '../../lib/time.ts'
import type { Transaction } from '../../stores.ts'
import { enqueueDelivery } from '../webhooks/queue.ts'
import { FORM_COMPLETED, FORM_DELETED, FORM_EXPIRED, type FormEvent } from './names.ts'

/**
 * How a form ends, told once: the events module owns the event, its payload
 * (which is the webhook body too) and the recording of both. Other modules
 * call these in the transaction that ends the form.
 */

interface CompletedEventSource {
  formId: string
  formTitle: string
  responseId: string
  submittedAt: number
  data: Record<string, AnswerValue>
  metadata: { ip: string | null; user_agent: string | null }
  /** Stored JSON text of the form's callback_metadata and context, spliced in as given. */
  callbackMetadataJson: string
  contextJson: string | null
}

/** The exact body of a form.completed webhook: built once, sent byte-for-byte on every attempt. */
export function completedEventBody(source: CompletedEventSource): string {
  const head = JSON.stringify({
    event: FORM_COMPLETED,
    form_id: source.formId,
    form_title: source.formTitle,
    completed_at: formatUtcTime(source.submittedAt),
    response_id: source.responseId,
    data: source.data,
    metadata: source.metadata,
  })
  return `${head.slice(0, -1)},"callback_metadata":${source.callbackMetadataJson},"context":${source.contextJson ?? 'null'}}`
}

interface EndedEventSource {
  event: Exclude<FormEvent, typeof FORM_COMPLETED>
  formId: string
  /** For expiry, the form's expires_at; for a cancel, when it committed. */
  occurredAt: number
  callbackMetadataJson: string
  /** The context the form had (an expired form's is kept only here: CONTRACT 12). */
  contextJson: string | null
}

/** The exact body of a form.expired or form.cancelled webhook (CONTRACT 12). */
export function endedEventBody(source: EndedEventSource): string {
  const head = JSON.stringify({
    event: source.event,
    form_id: source.formId,
    status: source.event === FORM_EXPIRED ? 'expired' : 'cancelled',
    occurred_at: formatUtcTime(source.occurredAt),
  })
  return `${head.slice(0, -1)},"callback_metadata":${source.callbackMetadataJson},"context":${source.contextJson ?? 'null'}}`
}

interface Ending {
  type: FormEvent
  form: { id: string; accountId: string; callbackUrl: string | null; callbackEvents: readonly FormEvent[] }
  /** When it happened: the answer's time, expires_at, the cancel's time. */
  occurredAt: number
  /** The webhook body, which is the event's payload too. */
  payload: string
  /** The answer a form.completed tells of. */
  responseId?: string
  now: number
}

/**
 * Records how a form ended, in the transaction that ends it (CONTRACT 12): an
 * event in the account's feed, whatever the form's subscription, and a
 * delivery when its webhook tells of this ending. A form ends once, so this
 * runs once per form. Returns whether a delivery was queued.
 */
export async function recordEnding(tx: Transaction, ending: Ending): Promise<boolean> {
  const { form } = ending
  await tx.events.append({
    accountId: form.accountId,
    formId: form.id,
    type: ending.type,
    occurredAt: ending.occurredAt,
    payload: ending.payload,
    createdAt: ending.now,
  })
  if (form.callbackUrl === null || !form.callbackEvents.includes(ending.type)) return false
  await enqueueDelivery(tx, {
    formId: form.id,
    responseId: ending.responseId ?? null,
    event: ending.type,
    url: form.callbackUrl,
    payload: ending.payload,
    now: ending.now,
  })
  return true
}

/**
 * Records a form's deletion: its other events go, and its account's feed
 * keeps only a form.deleted (`{"form_id"}`, never a webhook), so an agent
 * waiting on it hears this ending.
 */
export async function recordDeletion(tx: Transaction, form: { id: string; accountId: string }, now: number) {
  await tx.events.forgetForm(form.id)
  await tx.events.append({
    accountId: form.accountId,
    formId: form.id,
    type: FORM_DELETED,
    occurredAt: now,
    payload: JSON.stringify({ form_id: form.id }),
    createdAt: now,
  })
}

/** Drops events older than `before`, at most `limit` (the retention sweep). */
export const forgetEventsBefore = (tx: Transaction, before: number, limit: number) =>
  tx.events.forgetBefore(before, limit)
