/**
 * docs/agents.md's worked example of an agent waiting on the event feed
 * (examples/ten-forms.ts), run as written against a real server on
 * 127.0.0.1: ten forms created, then answered, cancelled, deleted or left to
 * expire by the test, each ending reported once, and the script exits.
 */
import { afterEach, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { createTestContext, submit, type TestContext, until } from './utils.ts'

const EXAMPLE = join(import.meta.dir, '..', 'examples', 'ten-forms.ts')

let t: TestContext | undefined
let server: ReturnType<typeof Bun.serve> | undefined
afterEach(async () => {
  server?.stop(true)
  await t?.close()
})

test('docs/agents.md quotes examples/ten-forms.ts exactly', () => {
  const guide = readFileSync(join(import.meta.dir, '..', 'docs', 'agents.md'), 'utf8')
  expect(guide).toContain(readFileSync(EXAMPLE, 'utf8').trim())
})

test('examples/ten-forms.ts hears how each of its ten forms ended, once, and stops', async () => {
  let handle: (request: Request) => Promise<Response> = async () => new Response('starting', { status: 503 })
  server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: (request) => handle(request) })
  const origin = `http://127.0.0.1:${server.port}`
  t = await createTestContext({}, { baseUrl: origin })
  handle = t.app.handle
  t.background.start()
  // Another form of the account ends meanwhile: the agent passes over it.
  const unrelated = await t.api.createForm()

  const agent = Bun.spawn([process.execPath, EXAMPLE], {
    env: { ...process.env, INTAKE_URL: origin, INTAKE_KEY: t.key },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  let output = ''
  const reading = (async () => {
    for await (const chunk of agent.stdout.pipeThrough(new TextDecoderStream())) output += chunk
  })()
  const links = () =>
    [...output.matchAll(/^(\w+): (http\S+)$/gm)].map(([, person, url]) => ({
      person: person!,
      id: url!.split('/f/')[1]!,
    }))
  await until(
    () => links().length === 10,
    20_000,
    'the agent to create ten forms and print their links',
    () => output,
  )
  const [ada, grace, edsger, barbara, donald, frances, alan, radia] = links()

  expect((await submit(t.app, ada!.id, { coming: true, diet: 'vegan' })).status).toBe(201)
  expect((await submit(t.app, grace!.id, { coming: false })).status).toBe(201)
  expect((await t.api.patch(`/forms/${unrelated.id}`, { status: 'cancelled' })).status).toBe(200)
  expect((await t.api.patch(`/forms/${edsger!.id}`, { status: 'cancelled' })).status).toBe(200)
  expect((await t.api.delete(`/forms/${barbara!.id}`)).status).toBe(204)
  for (const person of [donald, frances, alan, radia])
    expect((await submit(t.app, person!.id, { coming: true, diet: 'anything' })).status).toBe(201)
  // The last two are never answered: an hour later they expire.
  await Bun.sleep(200)
  expect(agent.exitCode).toBeNull()
  t.clock.advance(61 * 60_000)

  expect(await agent.exited).toBe(0)
  await reading
  const reported = output.split('\n').filter((line) => line !== '' && !/^\w+: http/.test(line))
  expect(reported.sort()).toEqual(
    [
      'Ada answered: {"coming":true,"diet":"vegan"}',
      'Grace answered: {"coming":false}',
      "Edsger's form was cancelled",
      "Barbara's form was deleted",
      'Donald answered: {"coming":true,"diet":"anything"}',
      'Frances answered: {"coming":true,"diet":"anything"}',
      'Alan answered: {"coming":true,"diet":"anything"}',
      'Radia answered: {"coming":true,"diet":"anything"}',
      'Ken did not answer in time (context: {"person":"Ken"})',
      'Margaret did not answer in time (context: {"person":"Margaret"})',
      'Every form has ended.',
    ].sort(),
  )
  expect(output.trimEnd().endsWith('Every form has ended.')).toBe(true)
  expect(await new Response(agent.stderr).text()).toBe('')
}, 40_000)
