import { newId } from '../../lib/ids.ts'
import type { Transaction } from '../../stores.ts'
import type { FormEvent } from '../events/names.ts'

interface DeliveryRequest {
  formId: string
  /** The answer a form.completed tells of; null for other endings. */
  responseId: string | null
  event: FormEvent
  url: string
  /** The exact body sent on every attempt. */
  payload: string
  now: number
}

/** Queues a webhook delivery in the caller's transaction: the deliveries table is the webhooks module's alone. */
export async function enqueueDelivery(tx: Transaction, request: DeliveryRequest): Promise<void> {
  await tx.deliveries.enqueue({
    id: newId(),
    formId: request.formId,
    responseId: request.responseId,
    event: request.event,
    url: request.url,
    payload: request.payload,
    createdAt: request.now,
  })
}

/** Drops settled deliveries of an event older than `before`, at most `limit` (the retention sweep). */
export const forgetSettledDeliveries = (tx: Transaction, event: FormEvent, before: number, limit: number) =>
  tx.deliveries.forgetSettledBefore(event, before, limit)
