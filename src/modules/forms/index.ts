import { Type } from '@sinclair/typebox'
import { Elysia } from 'elysia'
import { apiDoc } from '../../lib/openapi.ts'
import type { BodyReader } from '../../lib/request-body.ts'
import type { ApiKeyAuth } from '../auth/index.ts'
import { CreateFormBody, Form, FormDetail, FormSummary, ListFormsQuery, UpdateFormBody } from './model.ts'
import type { FormService } from './service.ts'

const formIdParam = { id: 'Form id (ULID)' }

export function formRoutes(forms: FormService, baseUrl: () => string, bodies: BodyReader, apiKey: ApiKeyAuth) {
  return new Elysia({ name: 'forms', prefix: '/api/v1/forms' })
    .use(apiKey)
    .post(
      '',
      async ({ request, set, principal }) => {
        const idempotencyKey = request.headers.get('idempotency-key') ?? undefined
        const { form, replayed } = await forms.create(principal, await bodies.json(request), idempotencyKey)
        if (replayed) set.headers['idempotent-replayed'] = 'true'
        set.status = 201
        return form
      },
      {
        apiKey: true,
        detail: apiDoc({
          tag: 'Forms',
          summary: 'Create a form',
          description:
            'Creates a form with typed fields. Share the returned `url` with the human who should answer it. ' +
            'Send an `Idempotency-Key` header to make retries safe: the same key and body from the same account within 24 hours return the form the first request created (with `Idempotent-Replayed: true`); the same key with another body is a 422.',
          body: CreateFormBody,
          responses: { 201: Form },
          errors: [413, 422],
        }),
      },
    )
    .get(
      '',
      async ({ query, set, principal }) => {
        const page = await forms.list(principal, query)
        if (page.nextCursor) {
          const next = new URLSearchParams({ ...pick(query, ['status', 'limit']), cursor: page.nextCursor })
          set.headers.link = `<${baseUrl()}/api/v1/forms?${next}>; rel="next"`
        }
        return page.forms
      },
      {
        apiKey: true,
        detail: apiDoc({
          tag: 'Forms',
          summary: 'List forms',
          description:
            'The account\'s forms, newest first. When another page exists, the `Link` header (rel="next") points to it.',
          query: ListFormsQuery,
          responses: { 200: Type.Array(FormSummary) },
          errors: [422],
          headers: { 200: { Link: 'rel="next" link to the next page, when there is one' } },
        }),
      },
    )
    .get(
      '/:id',
      async ({ params, set, principal }) => {
        const json = await forms.get(principal, params.id)
        set.headers['content-type'] = 'application/json;charset=utf-8'
        return json
      },
      {
        apiKey: true,
        detail: apiDoc({
          tag: 'Forms',
          summary: 'Get a form',
          params: formIdParam,
          responses: { 200: FormDetail },
          errors: [404],
        }),
      },
    )
    .get(
      '/:id/schema',
      async ({ params, set, principal }) => {
        const json = await forms.answersSchemaJson(principal, params.id)
        set.headers['content-type'] = 'application/json;charset=utf-8'
        return json
      },
      {
        apiKey: true,
        detail: apiDoc({
          tag: 'Forms',
          summary: 'JSON Schema of the answers',
          description:
            'The JSON Schema (draft 2020-12) of the `data` object a response to this form holds: types, required keys, enums, bounds and formats. Validate what comes back, or generate types from it.',
          params: formIdParam,
          responses: { 200: Type.Object({}, { additionalProperties: true, title: 'JSON Schema' }) },
          errors: [404],
        }),
      },
    )
    .patch(
      '/:id',
      async ({ request, params, principal }) => await forms.update(principal, params.id, await bodies.json(request)),
      {
        apiKey: true,
        detail: apiDoc({
          tag: 'Forms',
          summary: 'Cancel a form or change its expiry',
          description:
            '`{"status":"cancelled"}` cancels an active form (again: no-op). `expires_at` sets a future expiry, or null for none; only on active forms.',
          params: formIdParam,
          body: UpdateFormBody,
          responses: { 200: Form },
          errors: [404, 409, 413, 422],
        }),
      },
    )
    .delete(
      '/:id',
      async ({ params, set, principal }) => {
        await forms.delete(principal, params.id)
        set.status = 204
      },
      {
        apiKey: true,
        detail: apiDoc({
          tag: 'Forms',
          summary: 'Delete a form',
          description: 'Deletes the form, its response, files and pending webhook deliveries, permanently.',
          params: formIdParam,
          responses: { 204: 'Deleted' },
          errors: [404],
        }),
      },
    )
}

function pick(query: Record<string, string | undefined>, keys: string[]): Record<string, string> {
  return Object.fromEntries(keys.flatMap((key) => (typeof query[key] === 'string' ? [[key, query[key]]] : [])))
}
