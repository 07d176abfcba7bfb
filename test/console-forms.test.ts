/**
 * The console's form pages (CONTRACT 15), read as an operator checks them:
 * the list with its filter, search and pages; a form with its link and QR
 * code, fields, context, the answer as the receipt shows it with its JSON and
 * files; another account's form out of reach; the preview in any language,
 * which records nothing.
 */
import { describe, expect, test } from 'bun:test'
import jsQR from 'jsqr'
import { type ConsoleClient, consoleClient } from './console-fixtures.ts'
import { apiClient, BASE_URL, contextsPerTest, postForm, type TestContext } from './utils.ts'

const contexts = contextsPerTest()

async function member(t: TestContext): Promise<ConsoleClient & { base: string }> {
  const client = await consoleClient(t, { account: 'default' })
  return { ...client, base: `/console/accounts/${client.viewer.accountId}` }
}

const html = async (response: Response) => {
  expect(response.status).toBe(200)
  return response.text()
}

/** The titles of the list's rows, in order. */
const titlesOf = (page: string) =>
  [...page.matchAll(/<th scope="row"><a href="[^"]+" dir="auto">([^<]*)<\/a>/g)].map((m) => m[1])

/** The QR code an inline SVG draws, read back as a phone would: drawn into pixels, then decoded. */
function readQr(svg: string): string | undefined {
  const size = Number(/viewBox="0 0 (\d+) \d+"/.exec(svg)![1])
  const scale = 4
  const width = size * scale
  const pixels = new Uint8ClampedArray(width * width * 4).fill(255)
  for (const [, x, y, run] of svg.matchAll(/M(\d+) (\d+)h(\d+)v1h-\d+z/g)) {
    for (let dy = 0; dy < scale; dy++)
      for (let dx = 0; dx < Number(run) * scale; dx++) {
        const at = ((Number(y) * scale + dy) * width + Number(x) * scale + dx) * 4
        pixels.fill(0, at, at + 3)
      }
  }
  return jsQR(pixels, width, width)?.data
}

describe('the forms list', () => {
  test('newest first, filtered by status, searched by title, a page at a time', async () => {
    const t = await contexts.create()
    const console = await member(t)
    const made: string[] = []
    for (let i = 0; i < 28; i++) made.push((await t.api.createForm({ title: `Check-in ${i}` })).id)
    const audit = await t.api.createForm({ title: 'Quarterly <audit> & review' })
    await t.api.patch(`/forms/${made[3]}`, { status: 'cancelled' })

    const first = await html(await console.get(`${console.base}/forms`))
    expect(titlesOf(first)).toEqual([
      'Quarterly &lt;audit&gt; &amp; review',
      ...Array.from({ length: 24 }, (_, i) => `Check-in ${27 - i}`),
    ])
    const next = /<a href="([^"]+)" rel="next">/.exec(first)![1]!.replaceAll('&amp;', '&')
    const second = await html(await console.get(next))
    expect(titlesOf(second)).toEqual(['Check-in 3', 'Check-in 2', 'Check-in 1', 'Check-in 0'])
    expect(second).not.toContain('rel="next"')
    expect(second).toContain('First page')

    const cancelled = await html(await console.get(`${console.base}/forms?status=cancelled`))
    expect(titlesOf(cancelled)).toEqual(['Check-in 3'])
    expect(cancelled).toMatch(/<option value="cancelled" selected>/)

    const searched = await html(await console.get(`${console.base}/forms?q=${encodeURIComponent('<AUDIT>')}`))
    expect(titlesOf(searched)).toEqual(['Quarterly &lt;audit&gt; &amp; review'])
    expect(searched).toContain(`href="${console.base}/forms/${audit.id}"`)
    expect(searched).toContain('value="&lt;AUDIT&gt;"')
    const both = await html(await console.get(`${console.base}/forms?q=check-in+2&status=active`))
    expect(titlesOf(both)).toEqual([
      'Check-in 27',
      'Check-in 26',
      'Check-in 25',
      'Check-in 24',
      'Check-in 23',
      'Check-in 22',
      'Check-in 21',
      'Check-in 20',
      'Check-in 2',
    ])
    expect(await html(await console.get(`${console.base}/forms?q=nothing+like+it`))).toContain('No form matches.')
  })

  test('a status or cursor edited into the URL is said on the page, not a 500', async () => {
    const t = await contexts.create()
    const console = await member(t)
    const page = await console.get(`${console.base}/forms?status=lost`)
    expect(page.status).toBe(200)
    expect(await page.text()).toContain('There is a problem')
  })
})

describe('a form', () => {
  const fields = [
    { key: 'name', type: 'text', label: 'Your name', required: true },
    {
      key: 'meal',
      type: 'select',
      label: 'Meal',
      config: { options: ['fish', { value: 'veg', label: 'Vegetarian' }] },
    },
    { key: 'photo', type: 'file', label: 'Photo', config: { max_size: 4096 } },
  ]

  test('its link with a QR code a phone reads, its fields and context; unanswered', async () => {
    const t = await contexts.create()
    const console = await member(t)
    const form = await t.api.createForm({ title: 'Lunch <order>', fields, context: { ticket: 'T-1', n: [1, 2] } })
    const page = await html(await console.get(`${console.base}/forms/${form.id}`))
    const url = `${BASE_URL}/f/${form.id}`
    expect(page).toContain(`<a href="${url}" class="console-form-url">${url}</a>`)
    const svg = /<svg[^>]*class="console-qr"[\s\S]*?<\/svg>/.exec(page)![0]
    expect(svg).toContain(`role="img" aria-label="QR code of ${url}"`)
    expect(readQr(svg)).toBe(url)
    expect(page).toContain('<h1 dir="auto">Lunch &lt;order&gt;</h1>')
    expect(page).toContain('Active')
    for (const field of fields) expect(page).toContain(`<code>${field.key}</code>`)
    expect(page).toContain('&quot;ticket&quot;: &quot;T-1&quot;')
    expect(page).toContain('Not answered yet.')
    expect(page).toContain('Cancel the form')
  })

  test('the answer as the receipt shows it, its JSON, and its file as a download with the API route’s headers', async () => {
    const t = await contexts.create()
    const console = await member(t)
    const form = await t.api.createForm({ fields })
    const body = new FormData()
    body.set('name', 'Ada <Lovelace>')
    body.set('meal', 'veg')
    body.set('photo', new File([new Uint8Array([1, 2, 3, 4])], 'Zoë 1.png', { type: 'image/png' }))
    expect((await postForm(t.app, form.id, body)).status).toBe(303)
    const page = await html(await console.get(`${console.base}/forms/${form.id}`))
    expect(page).toContain('Answered')
    expect(page).toMatch(/<dt dir="auto">Meal<\/dt><dd class="receipt-answer"><span dir="auto">Vegetarian<\/span>/)
    expect(page).toContain('Ada &lt;Lovelace&gt;')
    expect(page).toContain('&quot;meal&quot;: &quot;veg&quot;')
    const href = /<a href="([^"]+\/files\/[^"]+)" download="">/.exec(page)![1]!
    expect(href).toStartWith(`${console.base}/forms/${form.id}/files/`)
    const file = await console.get(href)
    expect(file.status).toBe(200)
    expect(new Uint8Array(await file.arrayBuffer())).toEqual(new Uint8Array([1, 2, 3, 4]))
    expect(file.headers.get('content-type')).toBe('image/png')
    expect(file.headers.get('content-disposition')).toBe(
      'attachment; filename="Zo_ 1.png"; filename*=UTF-8\'\'Zo%C3%AB%201.png',
    )
    expect(file.headers.get('x-content-type-options')).toBe('nosniff')
    expect(file.headers.get('cache-control')).toBe('no-store')
    expect(page).toContain('form.completed')
  })

  test("another account's form is 404, under its account's path and under the member's own", async () => {
    const t = await contexts.create()
    const console = await member(t)
    const { key } = await t.createKey('elsewhere')
    const other = await apiClient(t.app, key).createForm({ title: 'Secret' })
    const elsewhere = (await t.store.keys.accountByName('elsewhere'))!.id
    for (const path of [
      `/console/accounts/${elsewhere}/forms/${other.id}`,
      `/console/accounts/${elsewhere}/forms`,
      `${console.base}/forms/${other.id}`,
      `${console.base}/forms/${other.id}/preview`,
      `${console.base}/forms/${other.id}/cancel`,
      `${console.base}/forms/not-an-id`,
    ]) {
      const response = await console.get(path)
      expect(response.status, path).toBe(404)
      expect(await response.text()).not.toContain('Secret')
    }
    expect((await console.post(`${console.base}/forms/${other.id}/cancel`, {})).status).toBe(404)
    expect((await console.post(`${console.base}/forms/${other.id}/delete`, {})).status).toBe(404)
    const operator = await consoleClient(t, { operator: true })
    expect((await operator.get(`/console/accounts/${elsewhere}/forms/${other.id}`)).status).toBe(200)
  })
})

describe('the preview', () => {
  test('the person’s page in the language asked, under a banner, that cannot be sent; nothing is recorded', async () => {
    const t = await contexts.create()
    const console = await member(t)
    const form = await t.api.createForm({ title: 'Umfrage', page: { locale: 'fr' } })
    const german = await console.get(`${console.base}/forms/${form.id}/preview?lang=de`)
    expect(german.status).toBe(200)
    expect(german.headers.get('content-security-policy')).toContain("default-src 'none'")
    expect(german.headers.get('cache-control')).toBe('no-store')
    const page = await german.text()
    expect(page).toContain('<html lang="de" dir="ltr">')
    expect(page).toContain('<div class="preview-banner"><p lang="en" dir="ltr"><strong>Preview</strong>')
    expect(page).toContain('<fieldset disabled class="preview-fields">')
    expect(page).not.toContain('method="post"')
    expect(page).not.toContain(`action="/f/`)
    // Without a language asked: the form's own.
    expect(await html(await console.get(`${console.base}/forms/${form.id}/preview`))).toContain('<html lang="fr"')
    expect(await html(await console.get(`${console.base}/forms/${form.id}/preview?lang=ar`))).toContain(
      '<html lang="ar" dir="rtl">',
    )
    const state = await t.api.get(`/forms/${form.id}/responses`)
    expect(state.body).toEqual([])
    expect((await t.api.get(`/forms/${form.id}`)).body.status).toBe('active')
    // The form page offers every language of the page.
    const formPage = await html(await console.get(`${console.base}/forms/${form.id}`))
    expect([...formPage.matchAll(/<option value="[a-zA-Z-]+"/g)].length).toBe(29)
    expect(formPage).toContain('<option value="fr" selected>')
  })
})
