/**
 * Durability of webhook delivery, end to end: the real executable (dist/intake),
 * killed with SIGKILL or stopped with SIGTERM while deliveries are pending or in
 * flight, and restarted on the same database. Receivers are real HTTP servers on
 * 127.0.0.1 that these tests start; nothing leaves the loopback interface.
 *
 * What must hold (CONTRACT.md sections 1 and 8): the delivery row is committed
 * with the response, so a crash never loses it; an attempt in flight during a
 * crash is made again after restart (at-least-once, same X-Service-Delivery and
 * the same body bytes); SIGTERM lets an attempt in flight finish, then exits 0.
 */

import { afterAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import type { Delivery } from '../utils.ts'
import { killAllChildren, type RunningIntake, request, useBuiltBinary } from './binary.ts'
import {
  type AnsweredForm,
  ARRIVAL_DEADLINE_MS,
  answer,
  answer200,
  answerNever,
  byDelivery,
  crash,
  createForm,
  deliveriesOf,
  expectCompletedWebhook,
  integrityCheck,
  reserveClosedPort,
  Scope,
  scenario,
  stopAllReceivers,
  TEST_TIMEOUT,
  waitFor,
} from './durability.ts'

const intake = useBuiltBinary('intake-durable-')

afterAll(async () => {
  await stopAllReceivers()
  await killAllChildren()
})

// ---------------------------------------------------------------------------

describe('receiver down, intake killed (SIGKILL), receiver up, intake restarted on the same database', () => {
  const N = 10
  const env = { SERVICE_PUBLIC_RATE_LIMIT: '0' }
  let dbPath = ''
  let cwd = ''
  let key = ''
  let version = ''
  let answered: AnsweredForm[] = []
  let deliveryIdByForm = new Map<string, string>()
  /** The intake started after the crash, left running for the integrity test. */
  let restarted: RunningIntake | undefined

  test(
    '1. all 10 pending deliveries arrive after the restart, each a valid form.completed, and the log shows them delivered',
    async () => {
      await scenario(intake.path, async (scope) => {
        restarted = undefined
        cwd = intake.tempDir()
        dbPath = join(cwd, 'db', 'intake.db')
        const args = ['serve', '--port', '0', '--db', dbPath]
        const downPort = reserveClosedPort()

        const first = await scope.intake({ cwd, args, env })
        expect(first.apiKey).toBeDefined()
        key = first.apiKey!
        version = first.version

        const forms = []
        for (let n = 0; n < N; n++)
          forms.push(await createForm(first.url, key, n, `http://127.0.0.1:${downPort}/hooks/${n}`))
        answered = await Promise.all(forms.map((form, n) => answer(first.url, form, n)))

        // Each delivery has been tried at least once, and failed: the receiver is down.
        let seen: Delivery[][] = []
        await waitFor(
          'a failed first attempt on every delivery',
          async () => {
            seen = await Promise.all(answered.map((form) => deliveriesOf(first.url, key, form.formId)))
            const ready = seen.every(
              (list) =>
                list.length === 1 &&
                list[0]!.attempts >= 1 &&
                list[0]!.status === 'pending' &&
                list[0]!.last_error !== null,
            )
            return ready ? true : undefined
          },
          15_000,
          () => seen,
        )
        for (const list of seen) {
          expect(list[0]!.last_status_code).toBeNull()
          expect(list[0]!.event).toBe('form.completed')
        }
        deliveryIdByForm = new Map(answered.map((form, i) => [form.formId, seen[i]![0]!.id]))
        expect(new Set(deliveryIdByForm.values()).size).toBe(N)

        await crash(first)

        // The receiver comes up on the port that refused the first attempts.
        const receiver = scope.receiver(downPort, answer200)
        const second = await scope.intake({ cwd, args, env })
        expect(second.apiKey).toBeUndefined()

        const expectedIds = [...deliveryIdByForm.values()].sort()
        await waitFor(
          'every one of the 10 deliveries at the receiver',
          () => (expectedIds.every((id) => receiver.received.some((got) => got.deliveryId === id)) ? true : undefined),
          ARRIVAL_DEADLINE_MS,
          () => ({
            arrived: [...new Set(receiver.received.map((got) => got.deliveryId))].sort(),
            expected: expectedIds,
          }),
        )

        // Deduplicated by X-Service-Delivery: exactly the 10 delivery ids, nothing else.
        const groups = byDelivery(receiver.received)
        expect([...groups.keys()].sort()).toEqual(expectedIds)
        for (const form of answered) {
          const attempts = groups.get(deliveryIdByForm.get(form.formId)!)!
          // Every copy of a delivery carries the same body bytes.
          expect(new Set(attempts.map((got) => got.body)).size).toBe(1)
          for (const got of attempts) expectCompletedWebhook(got, form, key, version)
        }

        // The delivery log shows each one delivered (the receiver answers before the outcome is written).
        let logs: Delivery[][] = []
        await waitFor(
          'every delivery marked delivered',
          async () => {
            logs = await Promise.all(answered.map((form) => deliveriesOf(second.url, key, form.formId)))
            return logs.every((list) => list.length === 1 && list[0]!.status === 'delivered') ? true : undefined
          },
          10_000,
          () => logs,
        )
        answered.forEach((form, i) => {
          const delivery = logs[i]![0]!
          expect(delivery.id).toBe(deliveryIdByForm.get(form.formId)!)
          expect(delivery.status).toBe('delivered')
          expect(delivery.last_status_code).toBe(200)
          expect(delivery.last_error).toBeNull()
          expect(delivery.delivered_at).not.toBeNull()
          expect(delivery.next_attempt_at).toBeNull()
          // The failed attempt(s) before the crash count, and the one that succeeded.
          expect(delivery.attempts).toBeGreaterThanOrEqual(2)
        })

        scope.keep(second)
        restarted = second
      })
    },
    TEST_TIMEOUT,
  )

  test(
    '4. after the crash and restart: every acknowledged response is readable, and the database passes integrity_check after another SIGKILL and after SIGTERM',
    async () => {
      if (!restarted) throw new Error('test 1 did not leave a restarted intake to check (see its failure)')
      const scope = new Scope(intake.path)
      try {
        const expectResponsesViaApi = async (url: string) => {
          for (const form of answered) {
            const responses = await request(`${url}/api/v1/forms/${form.formId}/responses`, { key })
            expect(responses.status).toBe(200)
            expect(responses.body).toHaveLength(1)
            expect(responses.body[0].id).toBe(form.receipt.id)
            expect(responses.body[0].form_id).toBe(form.formId)
            expect(responses.body[0].submitted_at).toBe(form.receipt.submitted_at)
            expect(responses.body[0].data).toEqual(form.data)
            expect(responses.body[0].context).toEqual(form.context)
            const got = await request(`${url}/api/v1/forms/${form.formId}`, { key })
            expect(got.status).toBe(200)
            expect(got.body.status).toBe('completed')
          }
        }
        const expectDatabase = () => {
          const state = integrityCheck(dbPath)
          expect(state.integrity).toEqual([{ integrity_check: 'ok' }])
          expect(state.foreignKeys).toEqual([])
          expect(state.responses).toEqual(
            answered
              .map((form) => ({ id: form.receipt.id, form_id: form.formId }))
              .sort((a, b) => (a.id < b.id ? -1 : 1)),
          )
          expect(state.deliveries).toEqual(
            answered
              .map((form) => ({ id: deliveryIdByForm.get(form.formId)!, form_id: form.formId, status: 'delivered' }))
              .sort((a, b) => (a.id < b.id ? -1 : 1)),
          )
        }

        await expectResponsesViaApi(restarted.url)

        // Without SIGTERM: killed again, the file is still consistent.
        await crash(restarted)
        restarted = undefined
        expectDatabase()

        // And the next start serves all of it, then stops cleanly.
        const third = await scope.intake({ cwd, args: ['serve', '--port', '0', '--db', dbPath], env })
        await expectResponsesViaApi(third.url)
        const logs = await Promise.all(answered.map((form) => deliveriesOf(third.url, key, form.formId)))
        for (const list of logs) expect(list.map((d) => d.status)).toEqual(['delivered'])
        expect(await third.stop('SIGTERM')).toBe(0)
        expectDatabase()
      } finally {
        await scope.close()
      }
    },
    TEST_TIMEOUT,
  )
})

describe('an attempt in flight during a crash', () => {
  test(
    '2. is made again after the restart, with the same delivery id and body, and is then marked delivered',
    async () => {
      await scenario(intake.path, async (scope) => {
        const cwd = intake.tempDir()
        const dbPath = join(cwd, 'intake.db')
        const args = ['serve', '--port', '0', '--db', dbPath]
        // Timeout 2 s: the lease of an attempt runs out 7 s after it was taken.
        const env = { SERVICE_PUBLIC_RATE_LIMIT: '0', SERVICE_WEBHOOK_TIMEOUT: '2' }

        const holding = scope.receiver(0, answerNever)
        const port = holding.port
        const first = await scope.intake({ cwd, args, env })
        const key = first.apiKey!
        const form = await answer(first.url, await createForm(first.url, key, 1, `http://127.0.0.1:${port}/hook`), 1)

        const held = await waitFor('the receiver to hold the first attempt open', () => holding.received[0], 10_000)
        // Still in flight: the attempt counts from its start, its outcome is not recorded yet.
        const before = await deliveriesOf(first.url, key, form.formId)
        expect(before).toHaveLength(1)
        expect(before[0]!.id).toBe(held.deliveryId)
        expect(before[0]!.status).toBe('pending')
        expect(before[0]!.attempts).toBe(1)
        expect(before[0]!.last_status_code).toBeNull()
        expect(before[0]!.last_error).toBeNull()
        await crash(first)
        expect(holding.received).toHaveLength(1)
        expectCompletedWebhook(held, form, key, first.version)

        // The receiver is replaced by one that answers 200 on the same port.
        await holding.stop()
        const receiver = scope.receiver(port, answer200)
        const second = await scope.intake({ cwd, args, env })

        const again = await waitFor(
          'the same delivery to arrive again',
          () => receiver.received[0],
          ARRIVAL_DEADLINE_MS,
        )
        expect(again.deliveryId).toBe(held.deliveryId)
        expect(again.body).toBe(held.body)
        expectCompletedWebhook(again, form, key, second.version)

        let log: Delivery[] = []
        await waitFor(
          'the delivery marked delivered',
          async () => {
            log = await deliveriesOf(second.url, key, form.formId)
            return log.length === 1 && log[0]!.status === 'delivered' ? true : undefined
          },
          10_000,
          () => log,
        )
        expect(log[0]!.id).toBe(held.deliveryId)
        expect(log[0]!.last_status_code).toBe(200)
        expect(log[0]!.last_error).toBeNull()
        expect(log[0]!.delivered_at).not.toBeNull()
        // The attempt cut off by the crash counts too.
        expect(log[0]!.attempts).toBeGreaterThanOrEqual(2)
        expect(new Set(receiver.received.map((got) => got.deliveryId))).toEqual(new Set([held.deliveryId]))
        expect(await second.stop('SIGTERM')).toBe(0)
      })
    },
    TEST_TIMEOUT,
  )
})
