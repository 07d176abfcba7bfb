/** The settings that replace waits: the webhook retry schedule, the database connect timeout and the drain (src/config.ts). */
import { describe, expect, test } from 'bun:test'
import { ConfigError, loadConfig } from '../src/config.ts'

describe('SERVICE_WEBHOOK_RETRY_SCHEDULE', () => {
  test('by default, 5^(n-1) s before retry n (CONTRACT), for every retry SERVICE_WEBHOOK_MAX_RETRIES allows', () => {
    expect(loadConfig({}).webhookRetryScheduleMs).toEqual(
      [1, 5, 25, 125, 625, 3125, 15625, 78125, 390625, 1953125].map((s) => s * 1000),
    )
  })

  test('as Svix writes it: delays with units, separated by commas', () => {
    expect(loadConfig({ SERVICE_WEBHOOK_RETRY_SCHEDULE: '5s,5m,30m,2h,5h,10h,10h' }).webhookRetryScheduleMs).toEqual([
      5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000,
    ])
    expect(loadConfig({ SERVICE_WEBHOOK_RETRY_SCHEDULE: ' 50ms, 0.5s ,1d' }).webhookRetryScheduleMs).toEqual([
      50, 500, 86_400_000,
    ])
  })

  for (const bad of ['5', '5s,', 'soon', '-1s', '5 s', '31d', '1w']) {
    test(`"${bad}" is refused with what it must be`, () => {
      expect(() => loadConfig({ SERVICE_WEBHOOK_RETRY_SCHEDULE: bad })).toThrow(ConfigError)
      expect(() => loadConfig({ SERVICE_WEBHOOK_RETRY_SCHEDULE: bad })).toThrow(
        /SERVICE_WEBHOOK_RETRY_SCHEDULE must be delays separated by commas/,
      )
    })
  }
})

describe('SERVICE_DATABASE_CONNECT_TIMEOUT', () => {
  test('30 s by default; seconds, fractions allowed', () => {
    expect(loadConfig({}).databaseConnectTimeoutMs).toBe(30_000)
    expect(loadConfig({ SERVICE_DATABASE_CONNECT_TIMEOUT: '2.5' }).databaseConnectTimeoutMs).toBe(2_500)
  })

  test('refused unless above 0 and at most 600', () => {
    for (const bad of ['0', '601', 'soon'])
      expect(() => loadConfig({ SERVICE_DATABASE_CONNECT_TIMEOUT: bad })).toThrow(
        /SERVICE_DATABASE_CONNECT_TIMEOUT must be a number of seconds/,
      )
  })
})

describe('SERVICE_DRAIN_SECONDS', () => {
  test('5 s by default; seconds, fractions allowed, 0 for none', () => {
    expect(loadConfig({}).drainMs).toBe(5_000)
    expect(loadConfig({ SERVICE_DRAIN_SECONDS: '0.5' }).drainMs).toBe(500)
    expect(loadConfig({ SERVICE_DRAIN_SECONDS: '0' }).drainMs).toBe(0)
  })

  test('refused unless from 0 to 600', () => {
    for (const bad of ['-1', '601', 'soon'])
      expect(() => loadConfig({ SERVICE_DRAIN_SECONDS: bad })).toThrow(
        /SERVICE_DRAIN_SECONDS must be a number of seconds from 0 to 600/,
      )
  })
})
