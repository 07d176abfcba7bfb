/**
 * Crash loop: the real executable under a mixed storm, killed with SIGKILL at
 * random moments, restarted on the same database, and checked each time.
 * bench/crashloop.ts runs it long, test/e2e/crashloop.test.ts short.
 *
 * It runs dist/intake as built (it never builds) on a database in a temp dir,
 * 127.0.0.1 only, rate limits off, SERVICE_WEBHOOK_TIMEOUT=1. Each round:
 *   1. a storm from this process: creates (with an Idempotency-Key; some with
 *      a callback_url to a flaky receiver this process runs, some expiring in a
 *      minute), answers (JSON and form posts, sometimes two at once on one
 *      form), cancels, short expiries (PATCH expires_at 1..2 s ahead), reads
 *      (a form, its responses, long-polls with wait=1, list pages, the delivery
 *      log). Every acknowledged operation goes into a ledger (a 201 create and
 *      its id; a 201 JSON answer with its response id, a 303 form post; a 200
 *      cancel; a 200 expiry change), every refusal (409, 410) too: it says the
 *      form was in a final state then, which it must still be in;
 *   2. SIGKILL at a random moment (seeded: CRASH_SEED, printed); in most
 *      rounds 0..10 ms after a burst of 8..31 writes sent at once, so that
 *      the kill lands while some are being committed or answered;
 *   3. with intake stopped, the database file, read-only: PRAGMA
 *      integrity_check 'ok', foreign_key_check empty, every acknowledged
 *      form, answer and cancel in it, and the state rules row by row;
 *   4. restart on the same database (the same port when it can be had) and
 *      check the same through the API, every form the ledger knows (its
 *      state, expiry, context, response and data), the list pages (every form
 *      once, none unknown), and settle what was in doubt (a request cut off
 *      by the kill): a create is sent again with its Idempotency-Key, which
 *      must return the form if it was committed;
 * Then the receiver turns healthy, intake is left running, every delivery that
 * ended `failed` is redelivered, and every answered form with a callback must
 * arrive at the receiver at least once (signed, its body the same on every
 * attempt, never more attempts received than the log counts), with the log
 * showing it delivered. Finally SIGTERM (exit 0) and one more integrity_check.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { checkDatabaseFile, checkThroughApi } from './crashloop-checks.ts'
import {
  apiTime,
  type Counts,
  type CrashloopConfig,
  type CrashloopReport,
  CrashloopRun,
  type FormEntry,
  type RoundSummary,
  zeroCounts,
} from './crashloop-run.ts'
import { answer, cancel, create, worker } from './crashloop-storm.ts'
import {
  alive,
  type BenchState,
  fmt,
  machineLine,
  makeTempDir,
  pool,
  type Ready,
  startIntake,
  stopIntake,
  whenReady,
} from './intake-child.ts'

/**
 * Runs the whole crash loop: `config.rounds` storms each ended by SIGKILL and
 * checked, then the deliveries. Children and temp dirs are registered in
 * `state` (cleaned up by runBench, or by the caller with disposeBenchState).
 */
export async function runCrashloop(state: BenchState, config: CrashloopConfig): Promise<CrashloopReport> {
  const run = new CrashloopRun(state, config)
  try {
    return await runLoop(run)
  } finally {
    run.receiver.stop()
  }
}

async function runLoop(run: CrashloopRun): Promise<CrashloopReport> {
  const { config } = run
  const started = performance.now()
  run.dir = makeTempDir(run.state, 'crashloop')
  config.print(
    `crashloop: ${config.rounds} rounds, seed ${config.seed} (CRASH_SEED=${config.seed} repeats the choices and kill moments; the interleaving is the machine's), ` +
      `${config.workers} workers, kill at ${config.stormMinMs}..${config.stormMaxMs} ms, webhook timeout ${config.webhookTimeoutSeconds} s, ${config.webhookMaxRetries} retries`,
  )
  config.print(
    `database and logs in ${run.dir}; receiver on ${run.receiver.url} (fails ${config.failureRate * 100}%, holds ${config.hangRate * 100}% past the timeout)`,
  )

  const child = startIntake(run.state, run.dir, run.env, {
    logToFile: true,
    logName: 'intake.0.log',
    binary: config.binary,
  })
  run.child = child
  const ready = await whenReady(child)
  run.url = ready.url
  run.port = ready.port
  run.key = ready.key
  run.receiver.setKey(ready.key)
  config.print(`intake ${ready.version} (pid ${child.proc.pid}) on ${ready.url}`)

  for (run.round = 1; run.round <= config.rounds; run.round++) await oneRound(run)
  const deliveries = await finish(run)

  const formsTotal = run.forms.size
  const answered = [...run.forms.values()].filter((f) => f.seenStatus === 'completed').length
  config.print('')
  config.print(
    `summary: ${config.rounds} rounds in ${fmt((performance.now() - started) / 1000, 1)} s, seed ${config.seed}; ` +
      `acknowledged ${fmt(run.totals.creates)} creates, ${fmt(run.totals.answersJson + run.totals.answersPost)} answers ` +
      `(${fmt(run.totals.answersJson)} JSON, ${fmt(run.totals.answersPost)} form posts), ${fmt(run.totals.cancels)} cancels, ` +
      `${fmt(run.totals.expiries)} expiry changes, ${fmt(run.totals.reads)} reads; ${fmt(run.totals.refused)} refused (409/410), ` +
      `${fmt(run.totals.doubt)} writes cut off by a kill (after the restart ${fmt(run.totals.doubtCommitted)} found committed, ${fmt(run.totals.doubtLost)} not)`,
  )
  config.print(
    `forms at the end: ${fmt(formsTotal)} (${fmt(answered)} answered); deliveries: ${fmt(deliveries.expected)} expected, ${fmt(deliveries.arrived)} arrived, ` +
      `${fmt(deliveries.redelivered)} redelivered after ending failed, ${fmt(deliveries.receiverRequests)} requests at the receiver ` +
      `(${fmt(deliveries.duplicates)} more 2xx for an id already answered 2xx: at least once, deduped by X-Service-Delivery), all in within ${fmt(deliveries.waitedMs / 1000, 1)} s of the receiver turning healthy`,
  )
  if (run.overBudget.size > 0) {
    config.print(
      `note: ${run.overBudget.size} deliveries started more than ${config.webhookMaxRetries + 1} attempts (1 + SERVICE_WEBHOOK_MAX_RETRIES) in one round: ` +
        `the round's last attempt was cut off by a kill, counted, and made again after its lease ran out (${[...run.overBudget].slice(0, 5).join(', ')}${run.overBudget.size > 5 ? ', ...' : ''})`,
    )
  }
  config.print(`machine: ${machineLine()}`)
  const problems = describeProblems(run)
  config.print(problems.length === 0 ? 'verdict: no violation' : `verdict: ${problems.length} violation(s)`)
  const { print: _print, ...rest } = config
  return {
    config: rest,
    overBudgetDeliveries: [...run.overBudget],
    rounds: run.rounds,
    totals: run.totals,
    forms: formsTotal,
    answered,
    deliveries,
    problems,
  }
}

/** One storm, the kill, the file check, the restart, the API check. */
async function oneRound(run: CrashloopRun) {
  const { config } = run
  const problemsBefore = run.problems.length
  run.counts = zeroCounts()
  run.killed = false
  const killAtMs = Math.round(config.stormMinMs + run.random() * (config.stormMaxMs - config.stormMinMs))
  const child = run.child!

  const workers = Array.from({ length: config.workers }, () => worker(run))
  await Bun.sleep(killAtMs)
  // Most rounds: a burst of writes just before the kill, so that it lands while some are being
  // committed or answered (the storm alone has only a few writes in flight at any moment).
  const burst: Array<Promise<void>> = []
  let burstLeadMs = 0
  if (run.random() < config.burstShare) {
    const size = 8 + Math.floor(run.random() * 24)
    for (let i = 0; i < size; i++) {
      const r = run.random()
      burst.push(r < 0.25 ? create(run) : r < 0.55 ? answer(run, 'json') : r < 0.85 ? answer(run, 'post') : cancel(run))
    }
    burstLeadMs = run.random() * 10
    await Bun.sleep(burstLeadMs)
  }
  run.killed = true
  child.proc.kill('SIGKILL')
  const inFlightAtKill = { ...run.inFlight }
  await child.proc.exited
  await Promise.all([...workers, ...burst])
  if (child.proc.signalCode !== 'SIGKILL') {
    run.problem(
      `intake was not killed by the SIGKILL sent at ${killAtMs} ms: it had exited already (code ${child.proc.exitCode}, signal ${child.proc.signalCode}); stderr: ${child.err.tail.slice(-2000)}`,
    )
  }
  const stderr = child.err.tail.trim()
  if (stderr) run.problem(`intake wrote on stderr before the kill: ${stderr.slice(-2000)}`)

  const file = checkDatabaseFile(run)

  const restartStarted = performance.now()
  const samePort = await restart(run)
  const restartMs = performance.now() - restartStarted

  await checkThroughApi(run, file.forms)

  for (const [name, n] of Object.entries(run.counts)) run.totals[name as keyof Counts] += n
  const c = run.counts
  const summary: RoundSummary = {
    round: run.round,
    killAtMs,
    counts: c,
    forms: file.forms,
    responses: file.responses,
    deliveries: file.deliveries,
    restartMs,
    samePort,
    inFlightAtKill,
    burst: burst.length,
    problems: run.problems.length - problemsBefore,
  }
  run.rounds.push(summary)
  const width = String(config.rounds).length
  config.print(
    `round ${String(run.round).padStart(width)}/${config.rounds}: killed at ${fmt(killAtMs / 1000, 2)} s ` +
      `${burst.length ? `${fmt(burstLeadMs, 1)} ms after a burst of ${burst.length} writes ` : ''}(${inFlightAtKill.writes} writes, ${inFlightAtKill.reads} reads in flight) | acked ${c.creates} creates, ` +
      `${c.answersJson + c.answersPost} answers (${c.answersJson} json, ${c.answersPost} post), ${c.cancels} cancels, ${c.expiries} expiries, ` +
      `${c.reads} reads; ${c.refused} refused; ${c.doubt} cut off (${c.doubtCommitted} of them committed) | file: ${fmt(file.forms)} forms, ${fmt(file.responses)} responses, ` +
      `${fmt(file.deliveries)} deliveries, ${file.ok ? 'integrity ok' : 'INTEGRITY FAILED'} | restart ${fmt(restartMs)} ms${samePort ? ', same port' : `, new port ${run.port}`} | ` +
      `${summary.problems === 0 ? 'checks ok' : `${summary.problems} VIOLATION(S)`}`,
  )
}

/** Restarts intake on the database; the same port if it can be bound, else another. */
async function restart(run: CrashloopRun): Promise<boolean> {
  const logName = `intake.${run.round}.log`
  let child = startIntake(run.state, run.dir, run.env, {
    port: run.port,
    logToFile: true,
    logName,
    binary: run.config.binary,
  })
  let samePort = true
  let ready: Ready
  try {
    ready = await whenReady(child, 15_000, { key: run.key })
  } catch (error) {
    if (alive(child) || !/Cannot listen/.test(child.err.tail)) {
      throw new Error(
        `intake did not start again after the kill of round ${run.round}: ${error instanceof Error ? error.message : String(error)}\n${child.err.tail}`,
      )
    }
    samePort = false
    child = startIntake(run.state, run.dir, run.env, {
      port: 0,
      logToFile: true,
      logName: `intake.${run.round}b.log`,
      binary: run.config.binary,
    })
    ready = await whenReady(child, 15_000, { key: run.key })
  }
  run.state.children.delete(run.child!)
  run.child = child
  run.url = ready.url
  run.port = ready.port
  return samePort
}

// ---------------------------------------------------------------------------
// The end: every delivery arrives

async function finish(run: CrashloopRun): Promise<CrashloopReport['deliveries']> {
  const { config } = run
  run.round = config.rounds + 1
  run.receiver.heal()
  const healedAt = performance.now()
  const expected = [...run.forms.values()].filter((e) => e.callback && e.seenStatus === 'completed')
  config.print('')
  config.print(
    `receiver healthy; waiting for the deliveries of ${fmt(expected.length)} answered forms with a callback (intake left running, pid ${run.child!.proc.pid})`,
  )

  const redelivered = new Map<string, number>()
  const logs = new Map<
    string,
    Array<{
      id: string
      status: string
      attempts: number
      last_error: string | null
      last_status_code: number | null
      next_attempt_at: string | null
    }>
  >()
  let deadline = performance.now() + config.deliveryGraceMs
  let lastPrint = performance.now()
  for (;;) {
    let latestDue = Date.now()
    await pool(expected.length, 32, async (i) => {
      const entry = expected[i]!
      const reply = await run.read(`/api/v1/forms/${entry.id}/deliveries`)
      if (reply.status !== 200 || !Array.isArray(reply.json)) {
        run.problem(`GET deliveries of form ${entry.id}: ${reply.status} ${reply.text.slice(0, 200)}`, [entry.id])
        return
      }
      logs.set(entry.id, reply.json)
      for (const d of reply.json as Array<{
        id: string
        status: string
        attempts: number
        last_status_code: number | null
        last_error: string | null
        next_attempt_at: string | null
      }>) {
        if (d.status === 'pending' && d.next_attempt_at) latestDue = Math.max(latestDue, apiTime(d.next_attempt_at)!)
        if (d.status !== 'failed') continue
        const times = redelivered.get(d.id) ?? 0
        if (times >= 2) continue
        if (times === 1) {
          run.problem(
            `delivery ${d.id} of form ${entry.id} ended failed again after it was redelivered to the healthy receiver: ` +
              `attempts ${d.attempts}, last_status_code ${d.last_status_code}, last_error ${JSON.stringify(d.last_error)}`,
            [entry.id, d.id],
          )
        }
        redelivered.set(d.id, times + 1)
        const again = await run.call('POST', `/api/v1/forms/${entry.id}/deliveries/${d.id}/redeliver`)
        if (again.status !== 202 && again.status !== 409)
          run.problem(`redeliver ${d.id} of form ${entry.id}: ${again.status} ${again.text.slice(0, 200)}`, [
            entry.id,
            d.id,
          ])
      }
    })
    const missing = expected.filter((entry) => {
      const list = logs.get(entry.id) ?? []
      return list.length !== 1 || list[0]!.status !== 'delivered' || !run.receiver.seen.get(list[0]!.id)?.delivered
    })
    // Intake says when each pending one is due: wait that long, and a grace for the lease and the attempt.
    deadline = Math.max(deadline, performance.now() + (latestDue - Date.now()) + config.deliveryGraceMs)
    const waited = performance.now() - healedAt
    if (missing.length === 0) break
    if (performance.now() > deadline || waited > config.deliveryMaxWaitMs) {
      for (const entry of missing) {
        const list = logs.get(entry.id) ?? []
        const d = list[0]
        run.problem(
          `form ${entry.id} (answered${entry.acked ? `, acknowledged in round ${entry.acked.round}` : ''}, callback): ` +
            (list.length !== 1
              ? `the delivery log has ${list.length} deliveries, expected 1: ${JSON.stringify(list).slice(0, 300)}`
              : `delivery ${d!.id} did not arrive within ${fmt(waited / 1000, 1)} s of the receiver turning healthy: log status ${d!.status}, attempts ${d!.attempts}, ` +
                `last_status_code ${d!.last_status_code}, last_error ${JSON.stringify(d!.last_error)}, next_attempt_at ${d!.next_attempt_at}, ` +
                `redelivered ${redelivered.get(d!.id) ?? 0} times; the receiver got it ${run.receiver.seen.get(d!.id)?.count ?? 0} times, answered 2xx: ${run.receiver.seen.get(d!.id)?.delivered ?? false}`),
          [entry.id, ...(d ? [d.id] : [])],
        )
      }
      break
    }
    if (performance.now() - lastPrint > 5000) {
      lastPrint = performance.now()
      config.print(
        `  ${fmt(missing.length)} still on their way after ${fmt(waited / 1000, 0)} s (the latest is due at ${new Date(latestDue).toISOString()})`,
      )
    }
    await Bun.sleep(500)
  }
  const waitedMs = performance.now() - healedAt

  // Each arrived signed (checked as received), with one body, never more often than the log counts attempts.
  const expectedIds = new Map<string, FormEntry>()
  let duplicates = 0
  for (const entry of expected) {
    const d = logs.get(entry.id)?.[0]
    if (!d) continue
    expectedIds.set(d.id, entry)
    const got = run.receiver.seen.get(d.id)
    if (!got) continue
    if (got.bodies.size !== 1)
      run.problem(`delivery ${d.id} of form ${entry.id} arrived with ${got.bodies.size} different bodies`, [
        entry.id,
        d.id,
      ])
    if (got.formId !== entry.id || got.responseId !== entry.seenResponseId) {
      run.problem(
        `delivery ${d.id} of form ${entry.id}: the body names form ${got.formId} and response ${got.responseId}, the form's response is ${entry.seenResponseId}`,
        [entry.id, d.id],
      )
    }
    if (got.count > d.attempts) {
      run.problem(
        `delivery ${d.id} of form ${entry.id} reached the receiver ${got.count} times, but the log counts ${d.attempts} attempts (an attempt counts from its start)`,
        [entry.id, d.id],
      )
    }
    duplicates += Math.max(0, got.okCount - 1)
  }
  for (const [id, got] of run.receiver.seen) {
    if (!expectedIds.has(id)) {
      run.problem(
        `the receiver got delivery ${id} (form ${got.formId}, response ${got.responseId}), which belongs to no answered form's log`,
        [id, got.formId],
      )
    }
  }
  const arrived = expected.filter((entry) => {
    const d = logs.get(entry.id)?.[0]
    return d !== undefined && run.receiver.seen.get(d.id)?.delivered === true
  }).length

  // A last clean stop: exit 0 and a sound file.
  const stopped = await stopIntake(run.child!, 20_000)
  if (stopped.code !== 0)
    run.problem(`intake stopped with SIGTERM exited with code ${stopped.code}: ${run.child!.err.tail.slice(-2000)}`)
  const file = checkDatabaseFile(run)
  config.print(
    `intake stopped with SIGTERM in ${fmt(stopped.ms)} ms (exit ${stopped.code}); database file: ${file.ok ? 'integrity ok' : 'INTEGRITY FAILED'}, ` +
      `${fmt(file.forms)} forms, ${fmt(file.responses)} responses, ${fmt(file.deliveries)} deliveries`,
  )
  return {
    expected: expected.length,
    arrived,
    redelivered: [...redelivered.values()].reduce((a, b) => a + b, 0),
    waitedMs,
    receiverRequests: run.receiver.stats.requests,
    duplicates,
  }
}

/** Each problem as one message with its round and seed, then the intake log lines that name its ids. */
function describeProblems(run: CrashloopRun): string[] {
  if (run.problems.length === 0) return []
  let logs: Array<{ name: string; lines: string[] }> = []
  try {
    logs = readdirSync(run.dir)
      .filter((name) => /^intake\.\d+b?\.log$/.test(name))
      .sort((a, b) => parseInt(a.slice(7), 10) - parseInt(b.slice(7), 10))
      .map((name) => ({ name, lines: readFileSync(join(run.dir, name), 'utf8').split('\n') }))
  } catch {
    // no logs to quote
  }
  const MAX_DETAILED = 50
  return run.problems.map((p, i) => {
    let text = `round ${p.round} (seed ${run.config.seed}): ${p.message}`
    if (i >= MAX_DETAILED || p.ids.length === 0) return text
    // Writes and webhook attempts first: the reads (the end polls the delivery log) say little.
    const quoted: string[] = []
    let reads = 0
    for (const { name, lines } of logs) {
      for (const line of lines) {
        if (!p.ids.some((id) => line.includes(id))) continue
        if (line.includes('"method":"GET"')) reads++
        else quoted.push(`    ${name}: ${line}`)
      }
    }
    if (quoted.length > 0 || reads > 0) {
      text += `\n  intake log lines naming ${p.ids.join(', ')}: ${quoted.length} writes and webhook attempts (the last 16 below), ${reads} GETs`
      if (quoted.length > 0) text += `\n${quoted.slice(-16).join('\n')}`
    }
    return text
  })
}
