import { createHmac } from 'node:crypto'
import { isIP } from 'node:net'
import { VERSION } from '../../version.ts'
import { isPrivateAddress, type Resolver } from './addresses.ts'
import { originOf, withOriginsOnly } from './origin.ts'

/** One webhook request to make: the same body and id on every attempt. */
export interface DeliveryRequest {
  id: string
  /** X-Service-Event: form.completed, form.expired or form.cancelled. */
  event: string
  url: string
  payload: string
  /** The form's 64-hex webhook secret. */
  secret: string
}

export interface AttemptOutcome {
  delivered: boolean
  statusCode: number | null
  error: string | null
}

export interface AttemptOptions {
  /** Bounds the whole attempt: resolving, connecting, headers and body. */
  timeoutMs: number
  blockPrivate: boolean
  resolver: Resolver
  /** Unix seconds for webhook-timestamp. */
  nowSeconds: number
}

/** Enough of a reply body to keep the connection reusable; the rest is not waited for. */
const REPLY_BYTES_READ = 64 * 1024

/**
 * The headers that let a receiver trust a delivery: X-Service-Signature (hex
 * HMAC of the body, keyed with the secret's text) and the Standard Webhooks set
 * (base64 HMAC of "id.timestamp.body", keyed with the 32 bytes the hex encodes).
 */
function signedHeaders(request: DeliveryRequest, nowSeconds: number): Record<string, string> {
  const timestamp = String(nowSeconds)
  const signature = createHmac('sha256', request.secret).update(request.payload).digest('hex')
  const standard = createHmac('sha256', Buffer.from(request.secret, 'hex'))
    .update(`${request.id}.${timestamp}.${request.payload}`)
    .digest('base64')
  return {
    'content-type': 'application/json',
    'user-agent': `intake/${VERSION}`,
    'x-service-event': request.event,
    'x-service-delivery': request.id,
    'x-service-signature': `sha256=${signature}`,
    'webhook-id': request.id,
    'webhook-timestamp': timestamp,
    'webhook-signature': `v1,${standard}`,
  }
}

class Refused extends Error {}

/**
 * Where to connect. With private targets blocked, the host name is resolved
 * here, every address checked, and the connection made to the checked address
 * itself (Host and TLS server name keep the name): no second lookup that a
 * rebinding DNS server could answer differently.
 */
async function connectionFor(url: URL, options: AttemptOptions, signal: AbortSignal) {
  if (!options.blockPrivate) return { url, host: undefined, serverName: undefined }
  const hostname = url.hostname.replace(/^\[|\]$/g, '')
  const addresses = isIP(hostname) ? [hostname] : await abortable(options.resolver(hostname), signal)
  if (addresses.length === 0) throw new Refused(`${originOf(url.href)} has no address`)
  const blocked = addresses.find(isPrivateAddress)
  if (blocked !== undefined) {
    throw new Refused(
      `refused: ${originOf(url.href)} is at ${blocked}, a private address (SERVICE_WEBHOOK_BLOCK_PRIVATE is on)`,
    )
  }
  const address = addresses[0]!
  const direct = new URL(url)
  direct.hostname = isIP(address) === 6 ? `[${address}]` : address
  return { url: direct, host: url.host, serverName: isIP(hostname) ? undefined : hostname }
}

/**
 * Makes one attempt. Never throws: every failure is an outcome to record,
 * its error naming the callback URL by its origin only.
 */
export async function attemptDelivery(request: DeliveryRequest, options: AttemptOptions): Promise<AttemptOutcome> {
  const outcome = await attempt(request, options)
  return outcome.error === null ? outcome : { ...outcome, error: withOriginsOnly(outcome.error, request.url) }
}

async function attempt(request: DeliveryRequest, options: AttemptOptions): Promise<AttemptOutcome> {
  const controller = new AbortController()
  const timer = setTimeout(() => controller.abort(), options.timeoutMs)
  try {
    const target = await connectionFor(new URL(request.url), options, controller.signal)
    const headers = signedHeaders(request, options.nowSeconds)
    if (target.host) headers.host = target.host
    const response = await fetch(target.url, {
      method: 'POST',
      headers,
      body: request.payload,
      redirect: 'manual',
      signal: controller.signal,
      // No Accept-Encoding: the reply body is read only to keep the connection reusable, never worth inflating.
      decompress: false,
      ...(target.serverName ? { tls: { serverName: target.serverName } } : {}),
    })
    await readSome(response, REPLY_BYTES_READ)
    const delivered = response.status >= 200 && response.status < 300
    return {
      delivered,
      statusCode: response.status,
      error: delivered
        ? null
        : `HTTP ${response.status}${response.status >= 300 && response.status < 400 ? ' (redirects are not followed)' : ''}`,
    }
  } catch (error) {
    if (controller.signal.aborted) return failed(`timed out after ${options.timeoutMs / 1000} s`)
    if (error instanceof Refused) return failed(error.message)
    return failed(describe(error))
  } finally {
    clearTimeout(timer)
  }
}

const failed = (error: string): AttemptOutcome => ({ delivered: false, statusCode: null, error })

async function readSome(response: Response, limit: number): Promise<void> {
  if (!response.body) return
  const reader = response.body.getReader()
  let read = 0
  while (read < limit) {
    const { done, value } = await reader.read()
    if (done) return
    read += value.byteLength
  }
  await reader.cancel()
}

function abortable<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(new Error('aborted'))
    signal.addEventListener('abort', onAbort, { once: true })
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort))
  })
}

function describe(error: unknown): string {
  const code = (error as { code?: string }).code
  const message = error instanceof Error ? error.message : String(error)
  return (code && !message.includes(code) ? `${code}: ${message}` : message).slice(0, 500)
}
