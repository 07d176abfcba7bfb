import { Type } from '@sinclair/typebox'
import { Elysia } from 'elysia'
import { attachmentDisposition } from '../../lib/http.ts'
import { apiDoc } from '../../lib/openapi.ts'
import type { ApiKeyAuth } from '../auth/index.ts'
import { ListResponsesQuery, ResponseObject } from './model.ts'
import type { ResponseService } from './service.ts'

export function responseRoutes(responses: ResponseService, apiKey: ApiKeyAuth) {
  return new Elysia({ name: 'responses', prefix: '/api/v1/forms/:id/responses' })
    .use(apiKey)
    .get('', ({ request, params, query, principal }) => responses.list(principal, params.id, query, request.signal), {
      apiKey: true,
      detail: apiDoc({
        tag: 'Responses',
        summary: "List a form's responses",
        description:
          'A form takes one response, so this is an empty array or an array of one, newest first. With `wait=N` (1..60) an agent without a public URL can block until the human answers.',
        params: { id: 'Form id' },
        query: ListResponsesQuery,
        responses: { 200: Type.Array(ResponseObject) },
        errors: [404, 422],
      }),
    })
    .get('/:responseId', ({ params, principal }) => responses.get(principal, params.id, params.responseId), {
      apiKey: true,
      detail: apiDoc({
        tag: 'Responses',
        summary: 'Get a response',
        params: { id: 'Form id', responseId: 'Response id' },
        responses: { 200: ResponseObject },
        errors: [404],
      }),
    })
    .get(
      '/:responseId/files/:key',
      async ({ params, principal }) => {
        const { file, bytes } = await responses.file(principal, params.id, params.responseId, params.key)
        return new Response(bytes, {
          headers: {
            'content-type': file.contentType,
            'content-length': String(file.size),
            'content-disposition': attachmentDisposition(file.name),
          },
        })
      },
      {
        apiKey: true,
        detail: apiDoc({
          tag: 'Responses',
          summary: 'Download an uploaded file',
          description:
            "The bytes of a file field's upload, with the type the browser declared and Content-Disposition: attachment. A file field's value in `data` is this URL.",
          params: { id: 'Form id', responseId: 'Response id', key: "The file field's key" },
          responses: { 200: 'The file (its original Content-Type)' },
          errors: [404],
        }),
      },
    )
}
