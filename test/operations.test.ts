import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { SECURITY_HEADERS } from '../src/lib/http.ts'
import {
  createTestContext,
  failEveryStoreCall,
  logsWritten,
  send,
  submit,
  type TestContext,
  validForm,
} from './utils.ts'

let t: TestContext
beforeEach(async () => {
  t = await createTestContext()
})
afterEach(() => t.close())

describe('health', () => {
  test('GET /healthz answers 200 {"status":"ok"} without a key', async () => {
    const res = await send(t.app, 'GET', '/healthz')
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ status: 'ok' })
  })
})

describe('errors', () => {
  test('an unknown route is a JSON 404', async () => {
    const res = await send(t.app, 'GET', '/nowhere')
    expect(res.status).toBe(404)
    expect(res.headers.get('content-type')).toContain('application/json')
    expect(typeof res.body.detail).toBe('string')
  })

  test('an API body over 1 MiB is 413 with a JSON detail; exactly 1 MiB is read', async () => {
    const oneMiB = 1024 * 1024
    const padding = (size: number) => {
      const base = JSON.stringify(validForm({ settings: { pad: '' } }))
      return base.replace('"pad":""', `"pad":"${'x'.repeat(size - base.length)}"`)
    }
    expect(padding(oneMiB).length).toBe(oneMiB)
    const atLimit = await t.api.post('/forms', padding(oneMiB))
    expect(atLimit.status).toBe(201)
    const over = await t.api.post('/forms', padding(oneMiB + 1))
    expect(over.status).toBe(413)
    expect(typeof over.body.detail).toBe('string')
  })

  test('an unexpected failure is a 500 {"detail":"Internal server error"}, logged with the request id, no stack in the body', async () => {
    const form = await t.api.createForm()
    failEveryStoreCall(t.store) // a store failing in a way nobody handles on purpose
    const res = await submit(t.app, form.id, { name: 'Ada' })
    expect(res.status).toBe(500)
    expect(res.body).toEqual({ detail: 'Internal server error' })
    const requestId = res.headers.get('x-request-id')
    expect(requestId).toBeTruthy()
    await logsWritten()
    const logged = t.logs.find((line) => line.level === 'error')
    expect(logged?.request_id).toBe(requestId)
    expect(String(logged?.error)).toContain('Error')
  })
})

describe('headers', () => {
  const hasSecurityHeaders = (headers: Headers) => {
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) expect(headers.get(name), name).toBe(value)
    expect(headers.get('access-control-allow-origin')).toBeNull()
  }

  test('security headers on JSON, HTML, error and not-found responses alike', async () => {
    const form = await t.api.createForm()
    hasSecurityHeaders((await t.api.get(`/forms/${form.id}`)).headers)
    hasSecurityHeaders((await t.api.get('/forms/01ARZ3NDEKTSV4RRFFQ69G5FAV')).headers)
    hasSecurityHeaders((await send(t.app, 'GET', '/api/v1/forms')).headers)
    hasSecurityHeaders((await send(t.app, 'GET', '/nowhere')).headers)
    hasSecurityHeaders((await send(t.app, 'GET', '/healthz')).headers)
    const home = await send(t.app, 'GET', '/')
    expect(home.headers.get('content-type')).toBe('text/html; charset=utf-8')
    hasSecurityHeaders(home.headers)
  })

  test('the home page is plain HTML without scripts; its stylesheet, named by its content, is cached for good', async () => {
    const home = await send(t.app, 'GET', '/')
    expect(home.status).toBe(200)
    expect(home.text.startsWith('<!doctype html>')).toBe(true)
    expect(home.text).not.toContain('<script')
    const href = /<link rel="stylesheet" href="([^"]+)"/.exec(home.text)?.[1]
    expect(href).toMatch(/^\/assets\/style-[0-9a-z]+\.css$/)
    const css = await send(t.app, 'GET', href!)
    expect(css.status).toBe(200)
    expect(css.headers.get('content-type')).toBe('text/css; charset=utf-8')
    expect(css.headers.get('cache-control')).toBe('public, max-age=31536000, immutable')
    expect(css.text).toContain('prefers-color-scheme: dark')
  })

  test('X-Request-Id: a plain id from a proxy is kept, anything else replaced', async () => {
    const kept = await send(t.app, 'GET', '/healthz', { headers: { 'x-request-id': 'proxy-42.a' } })
    expect(kept.headers.get('x-request-id')).toBe('proxy-42.a')
    for (const offered of ['"quoted" {json}', 'x'.repeat(65)]) {
      const replaced = await send(t.app, 'GET', '/healthz', { headers: { 'x-request-id': offered } })
      expect(replaced.headers.get('x-request-id')).toMatch(/^[0-9a-f]{16}$/)
    }
  })
})

describe('access log', () => {
  test('one line per request with method, path without query, status, ms and request id', async () => {
    const res = await t.api.get('/forms?limit=5&status=active')
    await logsWritten()
    const lines = t.logs.filter((line) => line.msg === 'request')
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatchObject({
      level: 'info',
      method: 'GET',
      path: '/api/v1/forms',
      status: 200,
      request_id: res.headers.get('x-request-id'),
    })
    expect(typeof lines[0]!.ms).toBe('number')
  })

  test('the status logged is the status sent, errors included', async () => {
    await send(t.app, 'GET', '/api/v1/forms')
    await t.api.post('/forms', '{bad')
    await t.api.get('/forms/01ARZ3NDEKTSV4RRFFQ69G5FAV')
    await logsWritten()
    expect(t.logs.filter((line) => line.msg === 'request').map((line) => line.status)).toEqual([403, 422, 404])
  })

  test('never contains a key, a context, callback metadata or submitted data', async () => {
    const form = await t.api.createForm({
      context: { agent_state: 'CONTEXT-SENTINEL' },
      callback_url: 'https://hooks.example/CALLBACK-SENTINEL',
      callback_metadata: { note: 'METADATA-SENTINEL' },
    })
    await submit(t.app, form.id, { name: 'ANSWER-SENTINEL' }, { 'user-agent': 'AGENT-SENTINEL' })
    await t.api.get(`/forms/${form.id}/responses`)
    await t.api.get('/forms?cursor=QUERY-SENTINEL')
    await send(t.app, 'GET', '/api/v1/forms', { headers: { authorization: 'Bearer svc_live_wrong' } })
    await logsWritten()
    const text = t.logText()
    expect(t.logs.length).toBeGreaterThanOrEqual(5)
    for (const secret of [
      t.key,
      'svc_live_wrong',
      'CONTEXT-SENTINEL',
      'CALLBACK-SENTINEL',
      'METADATA-SENTINEL',
      'ANSWER-SENTINEL',
      'AGENT-SENTINEL',
      'QUERY-SENTINEL',
    ]) {
      expect(text).not.toContain(secret)
    }
  })
})
