import { newId } from '../../lib/ids.ts'
import type { Transaction } from '../../stores.ts'
import type { FormEvent } from '../forms/model.ts'
import type { EndingForm } from '../forms/store/index.ts'

export interface Ending {
  type: FormEvent
  form: Pick<EndingForm, 'id' | 'accountId' | 'callbackUrl' | 'callbackEvents'>
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
  await tx.deliveries.enqueue({
    id: newId(),
    formId: form.id,
    responseId: ending.responseId ?? null,
    event: ending.type,
    url: form.callbackUrl,
    payload: ending.payload,
    createdAt: ending.now,
  })
  return true
}
