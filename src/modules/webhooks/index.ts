import { Type } from '@sinclair/typebox'
import { Elysia } from 'elysia'
import { apiDoc } from '../../lib/openapi.ts'
import type { ApiKeyAuth } from '../auth/index.ts'
import { DeliveryObject } from './model.ts'
import type { WebhookService } from './service.ts'

export function webhookRoutes(webhooks: WebhookService, apiKey: ApiKeyAuth) {
  return new Elysia({ name: 'webhooks', prefix: '/api/v1/forms/:id/deliveries' })
    .use(apiKey)
    .get('', ({ params, principal }) => webhooks.list(principal, params.id), {
      apiKey: true,
      detail: apiDoc({
        tag: 'Webhooks',
        summary: "List a form's webhook deliveries",
        description:
          'The deliveries of a form with a callback_url, one per ending its callback_events names (form.completed, form.expired, form.cancelled) once it happened: status, attempts and last outcome. Those of form.expired go after 7 days, with the context they carry.',
        params: { id: 'Form id' },
        responses: { 200: Type.Array(DeliveryObject) },
        errors: [404],
      }),
    })
    .post(
      '/:deliveryId/redeliver',
      async ({ params, set, principal }) => {
        const delivery = await webhooks.redeliver(principal, params.id, params.deliveryId)
        set.status = 202
        return delivery
      },
      {
        apiKey: true,
        detail: apiDoc({
          tag: 'Webhooks',
          summary: 'Deliver again',
          description:
            'Queues a delivered or failed delivery again: a fresh round with the full attempt budget, the same delivery id and body. `attempts` keeps counting the total.',
          params: { id: 'Form id', deliveryId: 'Delivery id' },
          responses: { 202: DeliveryObject },
          errors: [404, 409],
        }),
      },
    )
}
