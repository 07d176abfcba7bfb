import type { Database } from '../../db/index.ts'

export type NewDelivery = {
  id: string
  form_id: string
  response_id: string
  event: string
  url: string
  payload: string
  created_at: number
}

/** The SQL of the webhook outbox. */
export function createDeliveryStore(db: Database) {
  const insert = db.query<never, NewDelivery>(
    `INSERT INTO deliveries (id, form_id, response_id, event, url, payload, status, next_attempt_at, created_at)
     VALUES ($id, $form_id, $response_id, $event, $url, $payload, 'pending', $created_at, $created_at)`,
  )
  return {
    /** Queues a delivery, due at once. Called inside the transaction that records the response. */
    enqueue: (delivery: NewDelivery) => void insert.run(delivery),
  }
}

export type DeliveryStore = ReturnType<typeof createDeliveryStore>
