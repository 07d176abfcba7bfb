import { HttpError, responseNotFound } from '../../lib/errors.ts'
import { canonicalUlid } from '../../lib/ids.ts'
import type { FormSignals } from '../../lib/signals.ts'
import { timeSlicer } from '../../lib/slices.ts'
import { formatApiTime } from '../../lib/time.ts'
import { integerQuery, validate } from '../../lib/validation.ts'
import type { Principal } from '../auth/service.ts'
import type { FormService } from '../forms/service.ts'
import { ListResponsesQuery, type ResponseObject } from './model.ts'
import type { FileStore } from './files.ts'
import type { ResponseRow, ResponseStore, StoredFile } from './store.ts'

export const toResponseObject = (row: ResponseRow): ResponseObject => ({
  id: row.id,
  form_id: row.form_id,
  data: JSON.parse(row.data),
  submitted_at: formatApiTime(row.submitted_at),
  metadata: { ip: row.ip, user_agent: row.user_agent },
  context: row.context === null ? null : JSON.parse(row.context),
})

export function createResponseService(store: ResponseStore, files: FileStore, forms: FormService, signals: FormSignals) {
  return {
    /**
     * The form's responses, newest first (a form takes one, so at most one).
     * With `wait`, an active unanswered form holds the request until it is
     * answered or leaves active (or the seconds pass, or `abort` fires).
     */
    async list(principal: Principal, formId: string, rawQuery: Record<string, unknown> = {}, abort?: AbortSignal): Promise<ResponseObject[]> {
      const query = validate(ListResponsesQuery, integerQuery(rawQuery, ['wait']))
      const form = forms.ownForm(principal, formId)
      if (query.wait !== undefined && form.status === 'active' && store.listForForm(form.id).length === 0) {
        // No await between the check and the wait: a change can only come after the waiter is registered.
        // Expiry wakes it too: the background loop signals each form it expires.
        await signals.wait(form.id, query.wait * 1000, abort)
        return store.listForForm(forms.ownForm(principal, formId).id).map(toResponseObject)
      }
      return store.listForForm(form.id).map(toResponseObject)
    },

    get(principal: Principal, formId: string, responseId: string): ResponseObject {
      const form = forms.ownForm(principal, formId)
      const id = canonicalUlid(responseId)
      const row = id && store.find(form.id, id)
      if (!row) throw responseNotFound()
      return toResponseObject(row)
    },

    /**
     * A file the person uploaded with the response, by its field key: what it
     * is, and its bytes as a stream read a chunk at a time.
     */
    file(principal: Principal, formId: string, responseId: string, key: string): { file: StoredFile; bytes: ReadableStream<Uint8Array> } {
      const form = forms.ownForm(principal, formId)
      const id = canonicalUlid(responseId)
      if (!id || !store.find(form.id, id)) throw responseNotFound()
      const file = store.file(form.id, id, key)
      if (!file) throw new HttpError(404, 'File not found')
      let seq = 0
      let sent = 0
      const slices = timeSlicer()
      const bytes = new ReadableStream<Uint8Array>({
        // A fast reader would otherwise have every chunk read in one turn of the event loop.
        async pull(controller) {
          await slices.pause()
          if (sent >= file.size) return controller.close()
          const chunk = files.chunk(file.file_id, seq++)
          // Deleted while it was being downloaded: the download fails rather than ends short.
          if (chunk === undefined) return controller.error(new Error('the file was deleted during its download'))
          sent += chunk.byteLength
          controller.enqueue(chunk)
        },
      })
      return { file, bytes }
    },
  }
}

export type ResponseService = ReturnType<typeof createResponseService>
