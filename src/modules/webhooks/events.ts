import type { AnswerValue } from '../../fields/index.ts'
import { formatUtcTime } from '../../lib/time.ts'

export const FORM_COMPLETED = 'form.completed'

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
