/**
 * The crash loop's storm: loops of creates (with an Idempotency-Key; some with
 * a callback_url to the flaky receiver, some expiring in a minute), answers
 * (JSON and form posts, sometimes two at once on one form), cancels, short
 * expiries and reads, each acknowledged one written into the run's ledger.
 */
import {
  type Answer,
  apiTime,
  type CrashloopRun,
  FIELDS,
  type FormEntry,
  NetworkError,
  type Reply,
  showTime,
} from './crashloop-run.ts'

export async function worker(run: CrashloopRun) {
  while (!run.killed) {
    try {
      await operation(run)
    } catch (error) {
      if (run.state.abort.signal.aborted) return
      throw error
    }
    await Bun.sleep(run.random() * run.config.thinkMaxMs)
  }
}

async function operation(run: CrashloopRun) {
  const r = run.random()
  if (r < 0.14) return create(run)
  if (r < 0.29) return answer(run, 'json')
  if (r < 0.43) return answer(run, 'post')
  if (r < 0.47) return doubleAnswer(run)
  if (r < 0.53) return cancel(run)
  if (r < 0.6) return shortExpiry(run)
  return readSomething(run)
}

export async function create(run: CrashloopRun) {
  const nonce = `${run.config.seed}-${run.round}-${++run.seq}`
  const r = run.random()
  const body: Record<string, unknown> = {
    title: `crashloop ${nonce}`,
    fields: FIELDS,
    context: { nonce, round: run.round },
    expires_in: r < 0.15 ? null : r < 0.3 ? '1m' : '1h',
  }
  if (run.random() < 0.6) {
    body.callback_url = `${run.receiver.url}/hooks/${nonce}`
    body.callback_metadata = { nonce }
  }
  const key = `crashloop-${nonce}`
  let reply: Reply
  try {
    reply = await run.call('POST', '/api/v1/forms', { json: body, headers: { 'idempotency-key': key } })
  } catch (error) {
    if (!(error instanceof NetworkError)) throw error
    if (run.killed) {
      run.counts.doubt++
      run.pendingCreates.push({ key, body, nonce, round: run.round })
    } else run.unexpected(`create ${nonce}`, error)
    return
  }
  if (reply.status !== 201 || typeof reply.json?.id !== 'string') return run.unexpected(`create ${nonce}`, reply)
  run.counts.creates++
  run.addForm(reply.json, body)
}

export async function answer(run: CrashloopRun, kind: 'json' | 'post', target?: FormEntry) {
  const entry = target ?? run.pickForm(run.random() < 0.1)
  if (!entry) return create(run)
  const nonce = `${run.config.seed}-${run.round}-${++run.seq}`
  const answer: Answer = {
    nonce,
    kind,
    n: run.seq % 1000,
    ok: run.random() < 0.5,
    round: run.round,
    outcome: 'sent',
  }
  entry.answers.set(nonce, answer)
  const what = `${kind === 'json' ? 'JSON answer' : 'form post'} ${nonce} to form ${entry.id}`
  let reply: Reply
  try {
    reply =
      kind === 'json'
        ? await run.call('POST', `/f/${entry.id}`, { key: false, json: { note: nonce, n: answer.n, ok: answer.ok } })
        : await run.call('POST', `/f/${entry.id}`, {
            key: false,
            form: new URLSearchParams({
              note: nonce,
              n: String(answer.n),
              ...(answer.ok ? { ok: 'on' } : {}),
              _submit: '1',
            }).toString(),
          })
  } catch (error) {
    if (!(error instanceof NetworkError)) throw error
    answer.outcome = 'doubt'
    if (run.killed) run.counts.doubt++
    else run.unexpected(what, error, [entry.id])
    return
  }
  const acked = kind === 'json' ? reply.status === 201 : reply.status === 303
  if (acked) {
    if (kind === 'json' && (reply.json?.form_id !== entry.id || typeof reply.json?.id !== 'string')) {
      run.problem(`${what}: 201 with an unexpected receipt ${reply.text.slice(0, 300)}`, [entry.id])
    }
    if (kind === 'post' && reply.headers.get('location') !== `/f/${entry.id}`) {
      run.problem(`${what}: 303 to ${reply.headers.get('location')}, expected /f/${entry.id}`, [entry.id])
    }
    answer.outcome = 'acked'
    answer.responseId = kind === 'json' ? reply.json?.id : undefined
    if (kind === 'json') run.counts.answersJson++
    else run.counts.answersPost++
    if (entry.acked) {
      run.problem(
        `form ${entry.id}: two answers acknowledged: ${entry.acked.kind} ${entry.acked.nonce} and ${kind} ${nonce} (a form takes one)`,
        [entry.id],
      )
    }
    if (entry.cancel === 'acked')
      run.problem(`form ${entry.id}: ${what} acknowledged after a cancel was acknowledged (200)`, [entry.id])
    entry.acked = answer
    entry.settledAt = performance.now()
    entry.closed = true
    return
  }
  if (reply.status === 409) {
    answer.outcome = 'refused'
    run.counts.refused++
    return run.constrain(entry, ['completed'], `${what}: 409 (answered already)`)
  }
  if (reply.status === 410) {
    answer.outcome = 'refused'
    run.counts.refused++
    return run.constrain(entry, ['cancelled', 'expired'], `${what}: 410 (cancelled or expired)`)
  }
  answer.outcome = 'refused'
  run.unexpected(what, reply, [entry.id])
}

/** Two answers to one open form at once: at most one may be acknowledged. */
async function doubleAnswer(run: CrashloopRun) {
  const entry = run.pickForm(false)
  if (!entry) return create(run)
  await Promise.all([answer(run, 'json', entry), answer(run, 'post', entry)])
}

export async function cancel(run: CrashloopRun) {
  const entry = run.pickForm(run.random() < 0.1)
  if (!entry || entry.patching) return readSomething(run)
  entry.patching = true
  const what = `cancel of form ${entry.id}`
  try {
    const reply = await run.call('PATCH', `/api/v1/forms/${entry.id}`, { json: { status: 'cancelled' } })
    if (reply.status === 200) {
      run.counts.cancels++
      if (reply.json?.status !== 'cancelled')
        run.problem(`${what}: 200 with status ${reply.json?.status}, expected cancelled`, [entry.id])
      if (entry.acked)
        run.problem(
          `form ${entry.id}: cancel acknowledged (200) although answer ${entry.acked.nonce} was acknowledged`,
          [entry.id],
        )
      entry.cancel = 'acked'
      entry.settledAt ??= performance.now()
      entry.closed = true
    } else if (reply.status === 409) {
      run.counts.refused++
      run.constrain(entry, ['completed', 'expired'], `${what}: 409`)
    } else run.unexpected(what, reply, [entry.id])
  } catch (error) {
    if (!(error instanceof NetworkError)) throw error
    if (run.killed) {
      // A cancel of a form whose cancel was acknowledged is a no-op either way: nothing in doubt.
      if (entry.cancel === 'none') {
        run.counts.doubt++
        entry.cancel = 'doubt'
      }
    } else run.unexpected(what, error, [entry.id])
  } finally {
    entry.patching = false
  }
}

async function shortExpiry(run: CrashloopRun) {
  const entry = run.pickForm(run.random() < 0.05)
  if (!entry || entry.patching) return readSomething(run)
  entry.patching = true
  const at = Date.now() + 1000 + Math.floor(run.random() * 1000)
  const what = `expiry change of form ${entry.id} to ${showTime(at)}`
  try {
    const reply = await run.call('PATCH', `/api/v1/forms/${entry.id}`, {
      json: { expires_at: new Date(at).toISOString() },
    })
    if (reply.status === 200) {
      run.counts.expiries++
      if (apiTime(reply.json?.expires_at) !== at)
        run.problem(`${what}: 200 with expires_at ${reply.json?.expires_at}`, [entry.id])
      entry.expiresAt = at
      entry.expiryInDoubt = []
    } else if (reply.status === 409) {
      run.counts.refused++
      run.constrain(entry, ['completed', 'cancelled', 'expired'], `${what}: 409`)
    } else if (reply.status === 422 && /in the future/.test(reply.text)) {
      // The request took over a second to be read: refused, nothing changed.
      run.counts.refused++
    } else run.unexpected(what, reply, [entry.id])
  } catch (error) {
    if (!(error instanceof NetworkError)) throw error
    if (run.killed) {
      run.counts.doubt++
      entry.expiryInDoubt.push(at)
    } else run.unexpected(what, error, [entry.id])
  } finally {
    entry.patching = false
  }
}

async function readSomething(run: CrashloopRun) {
  const r = run.random()
  const entry = run.pickForm(run.random() < 0.3)
  const sentAt = performance.now()
  let path: string
  if (r < 0.3 && entry) path = `/api/v1/forms/${entry.id}`
  else if (r < 0.55 && entry) path = `/api/v1/forms/${entry.id}/responses${run.random() < 0.3 ? '?wait=1' : ''}`
  else if (r < 0.65 && entry) path = `/api/v1/forms/${entry.id}/deliveries`
  else if (r < 0.8 && entry) path = `/f/${entry.id}`
  else
    path = `/api/v1/forms?limit=${1 + Math.floor(run.random() * 50)}${run.random() < 0.5 ? `&status=${run.pick(['active', 'completed', 'cancelled', 'expired'])}` : ''}`
  let reply: Reply
  try {
    reply = await run.call('GET', path, { key: !path.startsWith('/f/') })
  } catch (error) {
    if (!(error instanceof NetworkError)) throw error
    run.unexpected(`GET ${path}`, error, entry ? [entry.id] : [])
    return
  }
  const pageOk = path.startsWith('/f/') && (reply.status === 200 || reply.status === 410)
  if (reply.status !== 200 && !pageOk) return run.unexpected(`GET ${path}`, reply, entry ? [entry.id] : [])
  run.counts.reads++
  // Reads sent after an acknowledged answer or cancel see it.
  if (!entry || entry.settledAt === undefined || entry.settledAt > sentAt) return
  if (path === `/api/v1/forms/${entry.id}`) {
    const expected = entry.acked ? 'completed' : 'cancelled'
    if (reply.json?.status !== expected) {
      run.problem(
        `GET form ${entry.id} sent after its ${expected === 'completed' ? 'answer' : 'cancel'} was acknowledged: status ${reply.json?.status}`,
        [entry.id],
      )
    }
  } else if (path.startsWith(`/api/v1/forms/${entry.id}/responses`) && entry.acked) {
    const got = reply.json as Array<{ data?: { note?: string } }>
    if (!Array.isArray(got) || got.length !== 1 || got[0]?.data?.note !== entry.acked.nonce) {
      run.problem(
        `GET responses of form ${entry.id} sent after answer ${entry.acked.nonce} was acknowledged: ${reply.text.slice(0, 300)}`,
        [entry.id],
      )
    }
  }
}
