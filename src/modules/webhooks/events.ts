import type { AnswerValue } from '../../fields/index.ts'
import { formatUtcTime } from '../../lib/time.ts'
import type { FormEvent } from '../forms/model.ts'

export const FORM_COMPLETED = 'form.completed'
export const FORM_EXPIRED = 'form.expired'
export const FORM_CANCELLED = 'form.cancelled'
export const FORM_DELETED = 'form.deleted'

export interface CompletedEventSource {
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

export interface EndedEventSource {
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

/** The payload of a form.deleted event: the feed's alone, never a webhook. */
export const deletedEventBody = (formId: string) => JSON.stringify({ form_id: formId })
