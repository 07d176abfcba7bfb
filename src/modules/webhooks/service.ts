import type { Writer } from '../../db/writer.ts'
import { HttpError, conflict } from '../../lib/errors.ts'
import { canonicalUlid } from '../../lib/ids.ts'
import { formatApiTime, formatOptionalApiTime, type Clock } from '../../lib/time.ts'
import type { Principal } from '../auth/service.ts'
import type { FormService } from '../forms/service.ts'
import type { DeliveryObject } from './model.ts'
import { withOriginsOnly } from './origin.ts'
import type { DeliveryRow, DeliveryStore } from './store.ts'

const toDeliveryObject = (row: DeliveryRow): DeliveryObject => ({
  id: row.id,
  event: 'form.completed',
  status: row.status,
  attempts: row.attempts,
  last_status_code: row.last_status_code,
  // Cut here too, not only when recorded: an older version stored errors that quote the whole URL.
  last_error: row.last_error === null ? null : withOriginsOnly(row.last_error, row.url),
  next_attempt_at: formatOptionalApiTime(row.next_attempt_at),
  delivered_at: formatOptionalApiTime(row.delivered_at),
  created_at: formatApiTime(row.created_at),
})

const deliveryNotFound = () => new HttpError(404, 'Delivery not found')

/** The delivery log of a form, and queuing a delivery again. */
export function createWebhookService(store: DeliveryStore, writer: Writer, forms: FormService, clock: Clock, onQueued: () => void) {
  return {
    list(principal: Principal, formId: string): DeliveryObject[] {
      return store.listForForm(forms.ownForm(principal, formId).id).map(toDeliveryObject)
    },

    /** A fresh round with the full attempt budget for a delivered or failed delivery. */
    async redeliver(principal: Principal, formId: string, deliveryId: string): Promise<DeliveryObject> {
      const form = forms.ownForm(principal, formId)
      const id = canonicalUlid(deliveryId)
      const found = await writer.run(() => {
        const row = id && store.listForForm(form.id).find((d) => d.id === id)
        if (!row) throw deliveryNotFound()
        if (row.status === 'pending') throw conflict('This delivery is already pending')
        store.redeliver(form.id, row.id, clock())
        return store.listForForm(form.id).find((d) => d.id === row.id)!
      })
      onQueued()
      return toDeliveryObject(found)
    },
  }
}

export type WebhookService = ReturnType<typeof createWebhookService>
