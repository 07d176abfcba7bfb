/**
 * The crash loop's checks after each kill: the database file with intake
 * stopped (integrity, foreign keys, every acknowledged write, the state rules
 * row by row), then through the API once it is restarted (every form the
 * ledger knows, the list pages, what was in doubt settled).
 */
import { Database } from 'bun:sqlite'
import { join } from 'node:path'
import {
  apiTime,
  type CrashloopRun,
  FINAL,
  type FormEntry,
  type FormStatus,
  type Reply,
  showTime,
} from './crashloop-run.ts'
import { pool } from './intake-child.ts'

// ---------------------------------------------------------------------------
// The database file, with intake stopped

export function checkDatabaseFile(run: CrashloopRun): {
  ok: boolean
  forms: number
  responses: number
  deliveries: number
} {
  const path = join(run.dir, 'intake.db')
  const now = Date.now()
  const db = new Database(path, { readonly: true })
  try {
    const integrity = db.query('PRAGMA integrity_check').all() as Array<{ integrity_check: string }>
    const ok = integrity.length === 1 && integrity[0]!.integrity_check === 'ok'
    if (!ok) run.problem(`PRAGMA integrity_check after the kill: ${JSON.stringify(integrity).slice(0, 2000)}`)
    const foreignKeys = db.query('PRAGMA foreign_key_check').all()
    if (foreignKeys.length > 0)
      run.problem(`PRAGMA foreign_key_check after the kill: ${JSON.stringify(foreignKeys).slice(0, 2000)}`)

    const forms = db
      .query(
        `SELECT id, status, expires_at, context IS NOT NULL AS has_context, callback_url IS NOT NULL AS has_callback FROM forms`,
      )
      .all() as Array<{
      id: string
      status: FormStatus
      expires_at: number | null
      has_context: number
      has_callback: number
    }>
    const responses = db
      .query(`SELECT id, form_id, json_extract(data, '$.note') AS note, submitted_at FROM responses`)
      .all() as Array<{ id: string; form_id: string; note: string; submitted_at: number }>
    const deliveries = db
      .query(
        `SELECT id, form_id, response_id, status, attempts, round_attempts, next_attempt_at, delivered_at,
                json_extract(payload, '$.response_id') AS payload_response, json_extract(payload, '$.form_id') AS payload_form
           FROM deliveries`,
      )
      .all() as Array<{
      id: string
      form_id: string
      response_id: string
      status: string
      attempts: number
      round_attempts: number
      next_attempt_at: number | null
      delivered_at: number | null
      payload_response: string
      payload_form: string
    }>

    const formById = new Map(forms.map((f) => [f.id, f]))
    const responsesByForm = new Map<string, typeof responses>()
    for (const r of responses) responsesByForm.set(r.form_id, [...(responsesByForm.get(r.form_id) ?? []), r])
    const deliveriesByResponse = new Map<string, typeof deliveries>()
    for (const d of deliveries)
      deliveriesByResponse.set(d.response_id, [...(deliveriesByResponse.get(d.response_id) ?? []), d])

    const where = 'in the database file after the kill'
    // The state rules, row by row.
    for (const form of forms) {
      const own = responsesByForm.get(form.id) ?? []
      if (form.status === 'completed' && own.length !== 1)
        run.problem(`form ${form.id} is completed with ${own.length} responses ${where}`, [form.id])
      if (form.status !== 'completed' && own.length !== 0)
        run.problem(`form ${form.id} is ${form.status} with ${own.length} response(s) ${where}`, [form.id])
      if (form.status === 'expired' && (form.expires_at === null || form.expires_at > now)) {
        run.problem(
          `form ${form.id} is written expired ${where} but expires_at is ${showTime(form.expires_at)} (now ${showTime(now)})`,
          [form.id],
        )
      }
      if (form.status === 'expired' && form.has_context)
        run.problem(`form ${form.id} is written expired ${where} but keeps its context`, [form.id])
      for (const response of own) {
        if (form.expires_at !== null && response.submitted_at >= form.expires_at) {
          run.problem(
            `response ${response.id} of form ${form.id} was submitted at ${showTime(response.submitted_at)}, not before the form's expiry ${showTime(form.expires_at)}`,
            [form.id],
          )
        }
        const sent = deliveriesByResponse.get(response.id) ?? []
        if (form.has_callback && sent.length !== 1)
          run.problem(
            `response ${response.id} of form ${form.id} (with a callback) has ${sent.length} deliveries ${where}, expected 1`,
            [form.id],
          )
        if (!form.has_callback && sent.length !== 0)
          run.problem(
            `response ${response.id} of form ${form.id} (no callback) has ${sent.length} deliveries ${where}`,
            [form.id],
          )
      }
    }
    const responseById = new Map(responses.map((r) => [r.id, r]))
    for (const d of deliveries) {
      const response = responseById.get(d.response_id)
      if (d.form_id !== response?.form_id || d.payload_form !== d.form_id || d.payload_response !== d.response_id) {
        run.problem(
          `delivery ${d.id} ${where}: form ${d.form_id}, response ${d.response_id}, payload names form ${d.payload_form} and response ${d.payload_response}`,
          [d.id, d.form_id],
        )
      }
      const shape =
        d.status === 'delivered'
          ? d.delivered_at !== null && d.next_attempt_at === null
          : d.status === 'pending'
            ? d.next_attempt_at !== null
            : d.next_attempt_at === null
      if (!shape)
        run.problem(
          `delivery ${d.id} ${where} is ${d.status} with next_attempt_at ${d.next_attempt_at} and delivered_at ${d.delivered_at}`,
          [d.id, d.form_id],
        )
      if (d.round_attempts > d.attempts) {
        run.problem(
          `delivery ${d.id} ${where}: round_attempts ${d.round_attempts} above attempts ${d.attempts} (the total)`,
          [d.id, d.form_id],
        )
      }
      // Not a violation: a round's last attempt cut off by the kill counts and is made again (docs/webhooks.md: Durable, Delivery log).
      if (d.round_attempts > run.config.webhookMaxRetries + 1) run.overBudget.add(d.id)
    }

    // Everything acknowledged is in the file.
    for (const entry of run.forms.values()) {
      const form = formById.get(entry.id)
      if (!form) {
        run.problem(
          `form ${entry.id} (${entry.title}), created with a 201 in round ${entry.round}, is missing ${where}`,
          [entry.id],
        )
        continue
      }
      const effective: FormStatus =
        form.status === 'active' && form.expires_at !== null && form.expires_at <= now ? 'expired' : form.status
      const own = responsesByForm.get(entry.id) ?? []
      if (entry.acked) {
        const ack = entry.acked
        const found = own.find((r) => r.note === ack.nonce && (ack.responseId === undefined || r.id === ack.responseId))
        if (!found) {
          run.problem(
            `form ${entry.id}: the ${ack.kind === 'json' ? `JSON answer ${ack.nonce} acknowledged with 201 as response ${ack.responseId}` : `form post ${ack.nonce} acknowledged with 303`} ` +
              `(round ${ack.round}) is missing ${where}: found ${own.length === 0 ? 'no response' : own.map((r) => `${r.id} (note ${r.note})`).join(', ')}, form status ${form.status}`,
            [entry.id],
          )
        }
      }
      if (entry.cancel === 'acked' && form.status !== 'cancelled') {
        run.problem(`form ${entry.id}: its cancel was acknowledged (200) but it is ${form.status} ${where}`, [entry.id])
      }
      if (entry.seenStatus && FINAL.has(entry.seenStatus) && effective !== entry.seenStatus) {
        run.problem(
          `form ${entry.id} read ${entry.seenStatus} after round ${entry.seenRound}, now ${effective} ${where} (a final state never changes)`,
          [entry.id],
        )
      }
      if (entry.seenResponseId && !own.some((r) => r.id === entry.seenResponseId)) {
        run.problem(
          `form ${entry.id}: response ${entry.seenResponseId}, read after round ${entry.seenRound}, is missing ${where}`,
          [entry.id],
        )
      }
    }
    return { ok, forms: forms.length, responses: responses.length, deliveries: deliveries.length }
  } finally {
    db.close()
  }
}

// ---------------------------------------------------------------------------
// Through the API, after the restart

export async function checkThroughApi(run: CrashloopRun, formsInFile: number) {
  const entries = [...run.forms.values()]
  const seen = new Map<string, { status: FormStatus; responseId?: string; expiresAt: number | null }>()
  await pool(entries.length, 32, async (i) => {
    const entry = entries[i]!
    const result = await checkForm(run, entry)
    if (result) seen.set(entry.id, result)
  })

  // Every list page: each form once, as many as the file held, none unknown.
  const listed = new Map<string, { status: FormStatus; title: string; expiresAt: number | null }>()
  let query = 'limit=100'
  for (let pages = 0; ; pages++) {
    const readStart = Date.now()
    const reply = await run.read(`/api/v1/forms?${query}`)
    if (reply.status !== 200 || !Array.isArray(reply.json)) {
      run.problem(`GET /api/v1/forms?${query} after the restart: ${reply.status} ${reply.text.slice(0, 300)}`)
      break
    }
    for (const item of reply.json as Array<{
      id: string
      status: FormStatus
      title: string
      expires_at: string | null
    }>) {
      if (listed.has(item.id))
        run.problem(`form ${item.id} is listed twice in the list pages after the restart`, [item.id])
      const expiresAt = apiTime(item.expires_at)
      listed.set(item.id, { status: item.status, title: item.title, expiresAt })
      if (item.status === 'active' && expiresAt !== null && expiresAt <= readStart) {
        run.problem(
          `form ${item.id} is listed active after the restart, but its expires_at ${item.expires_at} had passed`,
          [item.id],
        )
      }
      const checked = seen.get(item.id)
      if (checked && checked.status !== item.status && !(checked.status === 'active' && item.status === 'expired')) {
        run.problem(`form ${item.id}: GET says ${checked.status}, the list says ${item.status}`, [item.id])
      }
    }
    const next = /<[^>]*\?([^>]*)>;\s*rel="next"/.exec(reply.headers.get('link') ?? '')
    if (!next) break
    query = next[1]!
    if (pages > 10_000) throw new Error('more than 10,000 list pages: the cursor does not advance')
  }
  if (listed.size !== formsInFile) {
    run.problem(`the list pages after the restart hold ${listed.size} forms, the database file held ${formsInFile}`)
  }
  for (const entry of entries) {
    if (!listed.has(entry.id))
      run.problem(`form ${entry.id} (acknowledged) is missing from the list pages after the restart`, [entry.id])
  }

  // Creates cut off by the kill: sent again with their Idempotency-Key.
  const byTitle = new Map<string, string[]>()
  for (const [id, item] of listed) byTitle.set(item.title, [...(byTitle.get(item.title) ?? []), id])
  const pending = run.pendingCreates.splice(0)
  for (const create of pending) {
    const title = create.body.title as string
    const committed = byTitle.get(title) ?? []
    if (committed.length > 1)
      run.problem(
        `create ${create.nonce} (cut off in round ${create.round}) made ${committed.length} forms: ${committed.join(', ')}`,
        committed,
      )
    let reply: Reply
    try {
      reply = await run.call('POST', '/api/v1/forms', {
        json: create.body,
        headers: { 'idempotency-key': create.key },
      })
    } catch (error) {
      run.problem(
        `create ${create.nonce} sent again after the restart: ${error instanceof Error ? error.message : String(error)}`,
      )
      continue
    }
    if (reply.status !== 201 || typeof reply.json?.id !== 'string') {
      run.problem(
        `create ${create.nonce} sent again with its Idempotency-Key after the restart: ${reply.status} ${reply.text.slice(0, 300)}`,
      )
      continue
    }
    const replayed = reply.headers.get('idempotent-replayed') === 'true'
    const id = reply.json.id as string
    run.counts[replayed ? 'doubtCommitted' : 'doubtLost']++
    if (committed.length > 0 && (!replayed || id !== committed[0])) {
      run.problem(
        `create ${create.nonce} was committed before the kill (form ${committed[0]}), but sending it again with its Idempotency-Key gave ` +
          `${replayed ? `form ${id}, replayed` : `a new form ${id}`}`,
        [committed[0]!, id],
      )
    }
    if (committed.length === 0 && replayed) {
      run.problem(
        `create ${create.nonce}: no such form in the list pages, yet its Idempotency-Key replays form ${id}`,
        [id],
      )
    }
    if (committed.length === 0 || id !== committed[0])
      listed.set(id, { status: 'active', title, expiresAt: apiTime(reply.json.expires_at) })
    run.addForm(reply.json, create.body)
    const entry = run.forms.get(id)!
    entry.round = create.round
    const result = await checkForm(run, entry)
    if (result) seen.set(id, result)
  }
  for (const [id, item] of listed) {
    if (!run.forms.has(id))
      run.problem(
        `form ${id} (${item.title}, ${item.status}) is in the list pages, but nothing this run sent made it`,
        [id],
      )
  }

  // What was in doubt is settled now: what the database holds after a restart is committed.
  for (const entry of run.forms.values()) {
    const found = seen.get(entry.id)
    if (!found) continue
    entry.seenStatus = found.status
    entry.seenResponseId = found.responseId
    entry.seenRound = run.round
    for (const at of entry.expiryInDoubt) run.counts[at === found.expiresAt ? 'doubtCommitted' : 'doubtLost']++
    entry.expiresAt = found.expiresAt
    entry.expiryInDoubt = []
    if (entry.cancel === 'doubt') {
      entry.cancel = found.status === 'cancelled' ? 'acked' : 'none'
      run.counts[entry.cancel === 'acked' ? 'doubtCommitted' : 'doubtLost']++
    }
    for (const answer of entry.answers.values()) {
      if (answer.outcome === 'doubt') {
        answer.outcome = 'lost'
        run.counts.doubtLost++
      }
    }
    entry.closed = found.status !== 'active'
  }
  run.open = [...run.forms.values()].filter((e) => !e.closed).map((e) => e.id)
}

/** One form through the API, against the ledger; what was found, or undefined when the form could not be read. */
async function checkForm(
  run: CrashloopRun,
  entry: FormEntry,
): Promise<{ status: FormStatus; responseId?: string; expiresAt: number | null } | undefined> {
  const ids = [entry.id]
  const readStart = Date.now()
  const formReply = await run.read(`/api/v1/forms/${entry.id}`)
  const responsesReply = await run.read(`/api/v1/forms/${entry.id}/responses`)
  const readEnd = Date.now()
  if (formReply.status !== 200) {
    run.problem(
      `form ${entry.id} (${entry.title}), created with a 201 in round ${entry.round}: GET after the restart is ${formReply.status} ${formReply.text.slice(0, 200)}`,
      ids,
    )
    return undefined
  }
  if (responsesReply.status !== 200 || !Array.isArray(responsesReply.json)) {
    run.problem(
      `GET responses of form ${entry.id} after the restart: ${responsesReply.status} ${responsesReply.text.slice(0, 200)}`,
      ids,
    )
    return undefined
  }
  const form = formReply.json as { status: FormStatus; expires_at: string | null; context: unknown }
  const responses = responsesReply.json as Array<{
    id: string
    form_id: string
    data: { note?: string; n?: number; ok?: boolean }
    submitted_at: string
  }>
  const status = form.status
  const expiresAt = apiTime(form.expires_at)
  const where = `after the restart (round ${run.round})`

  // (a) the acknowledged answer is there, exactly as sent.
  if (entry.acked) {
    const ack = entry.acked
    const got = responses[0]
    const expectedData = { note: ack.nonce, n: ack.n, ok: ack.ok }
    if (
      responses.length !== 1 ||
      !got ||
      got.data?.note !== ack.nonce ||
      (ack.responseId !== undefined && got.id !== ack.responseId)
    ) {
      run.problem(
        `form ${entry.id}: the ${ack.kind === 'json' ? `JSON answer acknowledged with 201 as response ${ack.responseId}` : 'form post acknowledged with 303'} ` +
          `(note ${ack.nonce}, round ${ack.round}) is missing ${where}: GET responses gave ${responsesReply.text.slice(0, 300)}; form status ${status}`,
        ids,
      )
    } else if (!Bun.deepEquals(got.data, expectedData, true) || got.form_id !== entry.id) {
      run.problem(
        `form ${entry.id}: response ${got.id} holds ${JSON.stringify(got.data)} for form ${got.form_id}, sent ${JSON.stringify(expectedData)}`,
        ids,
      )
    }
  }
  // (b) the state rules.
  if (status === 'completed' && responses.length !== 1)
    run.problem(`form ${entry.id} is completed with ${responses.length} responses ${where}`, ids)
  if (status !== 'completed' && responses.length !== 0)
    run.problem(`form ${entry.id} is ${status} with ${responses.length} response(s) ${where}`, ids)
  if (entry.acked && status !== 'completed')
    run.problem(`form ${entry.id}: its answer ${entry.acked.nonce} was acknowledged, but it is ${status} ${where}`, ids)
  if (entry.cancel === 'acked' && status !== 'cancelled')
    run.problem(`form ${entry.id}: its cancel was acknowledged (200), but it is ${status} ${where}`, ids)
  if (entry.allowed && !entry.allowed.has(status)) {
    run.problem(
      `form ${entry.id} is ${status} ${where}, but earlier refusals said it was already ${[...entry.allowed].join(' or ')}: ${entry.allowedWhy.join('; ')}`,
      ids,
    )
  }
  if (entry.seenStatus && FINAL.has(entry.seenStatus) && status !== entry.seenStatus) {
    run.problem(
      `form ${entry.id} read ${entry.seenStatus} after round ${entry.seenRound}, now ${status} ${where} (a final state never changes)`,
      ids,
    )
  }
  if (entry.seenResponseId && responses[0]?.id !== entry.seenResponseId) {
    run.problem(
      `form ${entry.id}: response ${entry.seenResponseId}, read after round ${entry.seenRound}, is now ${responses[0]?.id ?? 'missing'} ${where}`,
      ids,
    )
  }
  const candidates = [entry.expiresAt, ...entry.expiryInDoubt]
  if (!candidates.includes(expiresAt)) {
    run.problem(
      `form ${entry.id}: expires_at is ${form.expires_at} ${where}, expected ${candidates.map(showTime).join(' or ')} (the last acknowledged${entry.expiryInDoubt.length ? ', or a change cut off by the kill' : ''})`,
      ids,
    )
  }
  if (status === 'active' && expiresAt !== null && expiresAt <= readStart) {
    run.problem(
      `form ${entry.id} reads active ${where} although its expires_at ${form.expires_at} had passed when it was read`,
      ids,
    )
  }
  if (status === 'expired' && (expiresAt === null || expiresAt > readEnd)) {
    run.problem(`form ${entry.id} reads expired ${where} although its expires_at is ${form.expires_at}`, ids)
  }
  const expectedContext = status === 'expired' ? null : entry.context
  if (!Bun.deepEquals(form.context, expectedContext)) {
    run.problem(
      `form ${entry.id} (${status}) has context ${JSON.stringify(form.context)} ${where}, expected ${JSON.stringify(expectedContext)}`,
      ids,
    )
  }
  const response = responses[0]
  if (response) {
    const answer = response.data?.note === undefined ? undefined : entry.answers.get(response.data.note)
    if (!answer) {
      run.problem(
        `form ${entry.id} holds response ${response.id} with ${JSON.stringify(response.data)}, which no answer sent to it carried`,
        ids,
      )
    } else if (answer.outcome === 'refused') {
      run.problem(
        `form ${entry.id} holds response ${response.id} from answer ${answer.nonce}, which was refused (409/410)`,
        ids,
      )
    } else {
      if (!Bun.deepEquals(response.data, { note: answer.nonce, n: answer.n, ok: answer.ok }, true)) {
        run.problem(
          `form ${entry.id}: response ${response.id} holds ${JSON.stringify(response.data)}, answer ${answer.nonce} sent ${JSON.stringify({ note: answer.nonce, n: answer.n, ok: answer.ok })}`,
          ids,
        )
      }
      if (answer.outcome === 'doubt' || answer.outcome === 'sent') {
        answer.outcome = 'committed'
        run.counts.doubtCommitted++
      }
      const submittedAt = apiTime(response.submitted_at)!
      if (expiresAt !== null && submittedAt >= expiresAt) {
        run.problem(
          `form ${entry.id}: response ${response.id} submitted at ${response.submitted_at}, not before the expiry ${form.expires_at}`,
          ids,
        )
      }
    }
  }
  return { status, responseId: response?.id, expiresAt }
}
