/**
 * Run by test/e2e/bounds.test.ts as a process of its own, at low priority
 * (`nice`), so that building and sending 600 MiB of uploads does not take the
 * cores from the server being measured: `bun uploader.ts URL FORM_ID...`.
 * Posts the largest upload (see largestUpload) to each form at once,
 * retrying each refusal (503) after 200 ms, and prints one line of JSON:
 * `{ statuses, retried, retryAfter, seconds }`.
 */
import { largestUpload } from './attack.ts'

const [url, ...formIds] = process.argv.slice(2)
// Every body is made before the first is sent: they arrive together.
const bodies = formIds.map((_, n) => largestUpload(n))
let retried = 0
const retryAfter = new Set<string | null>()
const began = performance.now()
const statuses = await Promise.all(
  formIds.map(async (formId, n) => {
    const body = bodies[n]!
    for (;;) {
      const res = await fetch(`${url}/f/${formId}`, { method: 'POST', body, redirect: 'manual' })
      await res.arrayBuffer()
      if (res.status !== 503) return res.status
      retried++
      retryAfter.add(res.headers.get('retry-after'))
      await Bun.sleep(200)
    }
  }),
)
console.log(
  JSON.stringify({ statuses, retried, retryAfter: [...retryAfter], seconds: (performance.now() - began) / 1000 }),
)
