import { HttpError, responseNotFound } from '../../lib/errors.ts'
import { canonicalUlid } from '../../lib/ids.ts'
import type { FormSignals } from '../../lib/signals.ts'
import { timeSlicer } from '../../lib/slices.ts'
import { formatApiTime } from '../../lib/time.ts'
import { integerQuery, validate } from '../../lib/validation.ts'
import type { Store, Transaction } from '../../stores.ts'
import { invalidKey, type KeyHolds, type Principal } from '../auth/service.ts'
import type { FormService } from '../forms/service.ts'
import type { FreeFormJson } from '../forms/store/index.ts'
import { ListResponsesQuery, type ResponseObject } from './model.ts'
import type { NewFile, StoredFile, StoredResponse } from './store/index.ts'

/** A response as the API shows it, with its form's context (a form with a response is completed: its context stays). */
const toResponseObject = (response: StoredResponse, context: FreeFormJson | null): ResponseObject => ({
  id: response.id,
  form_id: response.formId,
  data: response.data,
  submitted_at: formatApiTime(response.submittedAt),
  metadata: { ip: response.ip, user_agent: response.userAgent },
  context: context === null ? null : JSON.parse(context),
})

/** Records an answer with its files in the caller's transaction (the submission's). */
export const recordResponse = (tx: Transaction, response: StoredResponse, files: NewFile[]) =>
  tx.responses.insert(response, files)

export function createResponseService(store: Store, forms: FormService, signals: FormSignals, keys: KeyHolds) {
  return {
    /**
     * The form's responses, newest first (a form takes one, so at most one).
     * With `wait`, an active unanswered form holds the request until it is
     * answered or leaves active (or the seconds pass, or `abort` fires).
     */
    async list(
      principal: Principal,
      formId: string,
      rawQuery: Record<string, unknown> = {},
      abort?: AbortSignal,
    ): Promise<ResponseObject[]> {
      const query = validate(ListResponsesQuery, integerQuery(rawQuery, ['wait']))
      if (query.wait === undefined) {
        const form = await forms.ownFormState(principal, formId)
        return (await store.responses.listForForm(form.id)).map((response) => toResponseObject(response, form.context))
      }
      // Listening before looking: a change that commits while the form is read still wakes this wait.
      // Expiry wakes it too: the sweep signals each form it expires. A wake says "look again"
      // (another server's notification, or any form may have changed): one that finds the form
      // still waiting waits on, for what is left of the time. A key revoked meanwhile ends it with 401
      // (CONTRACT 12a).
      const stopWaiting = new AbortController()
      const onAbort = () => stopWaiting.abort()
      abort?.addEventListener('abort', onAbort)
      const hold = keys.holdWhileWaiting(principal)
      hold.revoked.addEventListener('abort', onAbort)
      const id = canonicalUlid(formId)
      const deadline = performance.now() + query.wait * 1000
      try {
        for (;;) {
          const left = deadline - performance.now()
          const changed = id && left > 0 ? signals.wait(id, left, stopWaiting.signal) : undefined
          const form = await forms.ownFormState(principal, formId)
          const found = await store.responses.listForForm(form.id)
          if (hold.revoked.aborted) throw invalidKey()
          const ended = form.status !== 'active' || found.length > 0
          if (ended || !changed || stopWaiting.signal.aborted || signals.closed)
            return found.map((response) => toResponseObject(response, form.context))
          await changed
          if (hold.revoked.aborted) throw invalidKey()
        }
      } finally {
        stopWaiting.abort()
        abort?.removeEventListener('abort', onAbort)
        hold.release()
      }
    },

    async get(principal: Principal, formId: string, responseId: string): Promise<ResponseObject> {
      const form = await forms.ownFormState(principal, formId)
      const id = canonicalUlid(responseId)
      const response = id && (await store.responses.find(form.id, id))
      if (!response) throw responseNotFound()
      return toResponseObject(response, form.context)
    },

    /**
     * A file the person uploaded with the response, by its field key: what it
     * is, and its bytes as a stream read a chunk at a time.
     */
    async file(
      principal: Principal,
      formId: string,
      responseId: string,
      key: string,
    ): Promise<{ file: StoredFile; bytes: ReadableStream<Uint8Array> }> {
      const form = await forms.ownFormState(principal, formId)
      const id = canonicalUlid(responseId)
      if (!id || !(await store.responses.find(form.id, id))) throw responseNotFound()
      const file = await store.responses.file(form.id, id, key)
      if (!file) throw new HttpError(404, 'File not found')
      let seq = 0
      let sent = 0
      const slices = timeSlicer()
      const bytes = new ReadableStream<Uint8Array>({
        // A fast reader would otherwise have every chunk read in one turn of the event loop.
        async pull(controller) {
          await slices.pause()
          if (sent >= file.size) return controller.close()
          const chunk = await store.responses.chunk(file.fileId, seq++)
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
