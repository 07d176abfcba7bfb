import { conflict, HttpError } from '../../lib/errors.ts'
import { canonicalUlid } from '../../lib/ids.ts'
import { type Clock, formatApiTime, formatOptionalApiTime } from '../../lib/time.ts'
import type { Store } from '../../stores.ts'
import type { Principal } from '../auth/service.ts'
import type { FormService } from '../forms/service.ts'
import type { DeliveryObject } from './model.ts'
import { withOriginsOnly } from './origin.ts'
import type { DeliveryRecord, FailingDelivery } from './store/index.ts'

const toDeliveryObject = (delivery: DeliveryRecord): DeliveryObject => ({
  id: delivery.id,
  event: delivery.event,
  status: delivery.status,
  attempts: delivery.attempts,
  last_status_code: delivery.lastStatusCode,
  // Cut here too, not only when recorded: an older version stored errors that quote the whole URL.
  last_error: delivery.lastError === null ? null : withOriginsOnly(delivery.lastError, delivery.url),
  next_attempt_at: formatOptionalApiTime(delivery.nextAttemptAt),
  delivered_at: formatOptionalApiTime(delivery.deliveredAt),
  created_at: formatApiTime(delivery.createdAt),
})

const deliveryNotFound = () => new HttpError(404, 'Delivery not found')

/** The delivery log of a form, and queuing a delivery again. */
export function createWebhookService(store: Store, forms: FormService, clock: Clock, onQueued: () => void) {
  return {
    async list(principal: Principal, formId: string): Promise<DeliveryObject[]> {
      const form = await forms.ownFormState(principal, formId)
      return (await store.deliveries.listForForm(form.id)).map(toDeliveryObject)
    },

    /** The account's failing deliveries, newest first, their errors cut to origins as the API shows them. */
    async failing(principal: Principal, limit: number): Promise<FailingDelivery[]> {
      return (await store.deliveries.listFailing(principal.accountId, limit)).map((delivery) => ({
        ...delivery,
        lastError: delivery.lastError === null ? null : withOriginsOnly(delivery.lastError, delivery.url),
      }))
    },

    /** A fresh round with the full attempt budget for a delivered or failed delivery. */
    async redeliver(principal: Principal, formId: string, deliveryId: string): Promise<DeliveryObject> {
      const form = await forms.ownFormState(principal, formId)
      const id = canonicalUlid(deliveryId)
      const found = await store.transaction(async (tx) => {
        const delivery = id && (await tx.deliveries.listForForm(form.id)).find((d) => d.id === id)
        if (!delivery) throw deliveryNotFound()
        if (delivery.status === 'pending') throw conflict('This delivery is already pending')
        await tx.deliveries.redeliver(form.id, delivery.id, clock())
        return (await tx.deliveries.listForForm(form.id)).find((d) => d.id === delivery.id)!
      })
      onQueued()
      return toDeliveryObject(found)
    },
  }
}

export type WebhookService = ReturnType<typeof createWebhookService>
