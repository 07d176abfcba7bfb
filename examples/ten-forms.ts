/**
 * An agent that asks ten people the same question, one form each, and waits
 * on its account's event feed until every form has ended one way or another:
 * answered, expired, cancelled or deleted. One request at a time waits for
 * all ten, and the cursor it keeps means a restarted agent misses nothing.
 *
 *   INTAKE_URL=http://127.0.0.1:8080 INTAKE_KEY=svc_live_... bun examples/ten-forms.ts
 */
export {} // a module: it awaits at the top level

const INTAKE_URL = process.env.INTAKE_URL ?? 'http://127.0.0.1:8080'
const HEADERS = { Authorization: `Bearer ${process.env.INTAKE_KEY}`, 'Content-Type': 'application/json' }
const PEOPLE = ['Ada', 'Grace', 'Edsger', 'Barbara', 'Donald', 'Frances', 'Alan', 'Radia', 'Ken', 'Margaret']

interface Event {
  id: string
  type: 'form.completed' | 'form.expired' | 'form.cancelled' | 'form.deleted'
  form_id: string
  occurred_at: string
  payload: { data?: Record<string, unknown>; context?: { person: string } | null }
}

async function api<T>(path: string, init: RequestInit & { headers?: Record<string, string> } = {}): Promise<T> {
  const res = await fetch(`${INTAKE_URL}/api/v1${path}`, { ...init, headers: { ...HEADERS, ...init.headers } })
  if (!res.ok) throw new Error(`${init.method ?? 'GET'} ${path}: ${res.status} ${await res.text()}`)
  return (await res.json()) as T
}

// Listen from now on, before the first form exists: every ending after this point is in the feed.
let cursor = (await api<{ next: string }>('/events?after=latest')).next

const waitingFor = new Map<string, string>() // form id → person
for (const person of PEOPLE) {
  const form = await api<{ id: string; url: string }>('/forms', {
    method: 'POST',
    // A retry after a timeout gives back the same form rather than a second one.
    headers: { 'Idempotency-Key': `lunch-friday-${person}` },
    body: JSON.stringify({
      title: 'Lunch on Friday?',
      fields: [
        { key: 'coming', type: 'checkbox', label: 'I am coming' },
        { key: 'diet', type: 'select', label: 'Food', config: { options: ['anything', 'vegetarian', 'vegan'] } },
      ],
      context: { person },
      expires_in: '1h',
    }),
  })
  waitingFor.set(form.id, person)
  console.log(`${person}: ${form.url}`) // send each person their link
}

while (waitingFor.size > 0) {
  // Held up to 50 s while nothing happens; answered as soon as any form of the account ends.
  const page = await api<{ events: Event[]; next: string }>(`/events?after=${cursor}&wait=50`)
  for (const event of page.events) {
    const person = waitingFor.get(event.form_id)
    if (person === undefined) continue // another form of this account
    waitingFor.delete(event.form_id)
    if (event.type === 'form.completed') console.log(`${person} answered: ${JSON.stringify(event.payload.data)}`)
    else if (event.type === 'form.expired')
      console.log(`${person} did not answer in time (context: ${JSON.stringify(event.payload.context)})`)
    else if (event.type === 'form.cancelled') console.log(`${person}'s form was cancelled`)
    else console.log(`${person}'s form was deleted`)
  }
  cursor = page.next // keep it (a file, a database row): a restarted agent goes on from here
}
console.log('Every form has ended.')
