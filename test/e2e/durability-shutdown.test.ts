import { afterAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { killAllChildren, type RunningIntake, useBuiltBinary } from './binary.ts'
import {
  answer,
  createForm,
  deliveriesOf,
  exitOf,
  expectCompletedWebhook,
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

describe('graceful shutdown', () => {
  test(
    '3. SIGTERM during an attempt: intake exits 0 only after the attempt completed; the next start shows it delivered once',
    async () => {
      await scenario(intake.path, async (scope) => {
        const cwd = intake.tempDir()
        const dbPath = join(cwd, 'intake.db')
        const args = ['serve', '--port', '0', '--db', dbPath]
        const env = { SERVICE_PUBLIC_RATE_LIMIT: '0', SERVICE_WEBHOOK_TIMEOUT: '5' }

        const events: string[] = []
        let first: RunningIntake | undefined
        const receiver = scope.receiver(
          0,
          async () => {
            await Bun.sleep(1500)
            events.push('answered')
            return new Response('ok', { status: 200 })
          },
          () => {
            events.push('received')
            // As soon as the request is here: stop intake the way an operator does.
            if (first && first.proc.exitCode === null) {
              first.proc.kill('SIGTERM')
              events.push('SIGTERM sent')
            }
          },
        )
        first = await scope.intake({ cwd, args, env })
        const key = first.apiKey!
        const form = await answer(
          first.url,
          await createForm(first.url, key, 1, `http://127.0.0.1:${receiver.port}/hook`),
          1,
        )

        await waitFor(
          'the receiver to get the attempt',
          () => (events.includes('SIGTERM sent') ? true : undefined),
          10_000,
          () => events,
        )
        const exit = await exitOf(first, 20_000)
        events.push('exited')
        expect(exit).toEqual({ code: 0, signal: null })
        // The attempt was answered before intake exited.
        expect(events).toEqual(['received', 'SIGTERM sent', 'answered', 'exited'])
        // And intake recorded its outcome before exiting.
        await first.waitForStdout(/"msg":"webhook attempt".*"delivered":true/, 5_000)
        expect(first.stdout()).toMatch(/"msg":"shutting down"/)

        expect(receiver.received).toHaveLength(1)
        expectCompletedWebhook(receiver.received[0]!, form, key, first.version)

        const second = await scope.intake({ cwd, args, env })
        const log = await deliveriesOf(second.url, key, form.formId)
        expect(log).toHaveLength(1)
        expect(log[0]!.id).toBe(receiver.received[0]!.deliveryId)
        expect(log[0]!.status).toBe('delivered')
        expect(log[0]!.attempts).toBe(1)
        expect(log[0]!.last_status_code).toBe(200)
        expect(log[0]!.last_error).toBeNull()
        expect(log[0]!.delivered_at).not.toBeNull()
        expect(await second.stop('SIGTERM')).toBe(0)
        expect(receiver.received).toHaveLength(1)
      })
    },
    TEST_TIMEOUT,
  )
})
