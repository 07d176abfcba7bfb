/**
 * Choices (CONTRACT 11 "More of the page"): a select's `display`, `multiple`,
 * `min_selected` and `max_selected` at their boundaries; a multiple select
 * answered as JSON and as a form post; how the page shows radios, a drop-down
 * and a group of checkboxes; and `autocomplete` on the controls that take it.
 */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { type Page, parsePage } from './html.ts'
import { createTestContext, openPage, postForm, submit, type TestContext, type TestResponse } from './utils.ts'

let t: TestContext
beforeEach(async () => {
  t = await createTestContext()
})
afterEach(() => t.close())

const COLOURS = ['red', 'green', 'blue', 'amber']

const selectField = (config: Record<string, unknown>, required = false) => ({
  key: 'pick',
  type: 'select',
  label: 'Pick',
  required,
  config: { options: COLOURS, ...config },
})

/** POST /api/v1/forms with one field; the status and the problems, as `{path, code}`. */
async function create(field: Record<string, unknown>) {
  const res = await t.api.post('/forms', { title: 'Choices', fields: [field] })
  const problems = ((res.body.errors ?? []) as Array<{ path: string; code: string }>).map(({ path, code }) => ({
    path,
    code,
  }))
  return { status: res.status, problems, res }
}

async function formWith(...fields: Array<Record<string, unknown>>) {
  return (await t.api.createForm({ title: 'Choices', fields })).id
}

async function dataOf(formId: string) {
  const list = await t.api.get(`/forms/${formId}/responses`)
  expect(list.body).toHaveLength(1)
  return list.body[0].data as Record<string, unknown>
}

async function pageOf(res: TestResponse, status = 200): Promise<Page> {
  expect({ status: res.status, text: res.status === status ? '' : res.text.slice(0, 300) }).toEqual({
    status,
    text: '',
  })
  return parsePage(res.text)
}

/** The inputs named `key`, as `{type, id, value, checked}`. */
function inputsOf(page: Page, key: string) {
  return page
    .all('input')
    .filter((n) => n.attrs.name === key)
    .map((n) => ({ type: n.attrs.type, id: n.attrs.id, value: n.attrs.value, checked: 'checked' in n.attrs }))
}

// ================================================================ config

describe('select config', () => {
  test.each<[string, Record<string, unknown>, Array<{ path: string; code: string }>]>([
    [
      'min_selected 0',
      { multiple: true, min_selected: 0 },
      [{ path: '/fields/0/config/min_selected', code: 'too_small' }],
    ],
    ['min_selected 1', { multiple: true, min_selected: 1 }, []],
    ['min_selected = the number of options', { multiple: true, min_selected: 4 }, []],
    [
      'min_selected = options + 1',
      { multiple: true, min_selected: 5 },
      [{ path: '/fields/0/config/min_selected', code: 'too_large' }],
    ],
    ['max_selected = the number of options', { multiple: true, max_selected: 4 }, []],
    [
      'max_selected = options + 1',
      { multiple: true, max_selected: 5 },
      [{ path: '/fields/0/config/max_selected', code: 'too_large' }],
    ],
    [
      'max_selected 0',
      { multiple: true, max_selected: 0 },
      [{ path: '/fields/0/config/max_selected', code: 'too_small' }],
    ],
    ['min = max', { multiple: true, min_selected: 2, max_selected: 2 }, []],
    [
      'min > max',
      { multiple: true, min_selected: 3, max_selected: 2 },
      [{ path: '/fields/0/config/max_selected', code: 'invalid_value' }],
    ],
    [
      'min_selected without multiple',
      { min_selected: 1 },
      [{ path: '/fields/0/config/min_selected', code: 'invalid_value' }],
    ],
    [
      'max_selected with multiple false',
      { multiple: false, max_selected: 2 },
      [{ path: '/fields/0/config/max_selected', code: 'invalid_value' }],
    ],
    [
      'multiple with display dropdown',
      { multiple: true, display: 'dropdown' },
      [{ path: '/fields/0/config/display', code: 'invalid_value' }],
    ],
    ['multiple with display auto', { multiple: true, display: 'auto' }, []],
    [
      'multiple with a placeholder',
      { multiple: true, placeholder: 'Pick' },
      [{ path: '/fields/0/config/placeholder', code: 'invalid_value' }],
    ],
    ['multiple not a boolean', { multiple: 'yes' }, [{ path: '/fields/0/config/multiple', code: 'invalid_type' }]],
    [
      'a string default with multiple',
      { multiple: true, default: 'red' },
      [{ path: '/fields/0/config/default', code: 'invalid_type' }],
    ],
    [
      'an array default without multiple',
      { default: ['red'] },
      [{ path: '/fields/0/config/default', code: 'invalid_type' }],
    ],
    ['an array default with multiple', { multiple: true, default: ['blue', 'red'] }, []],
    ['an empty array default', { multiple: true, default: [] }, []],
    [
      'a duplicate in the default',
      { multiple: true, default: ['red', 'red'] },
      [{ path: '/fields/0/config/default', code: 'not_unique' }],
    ],
    [
      'a default that is no option',
      { multiple: true, default: ['red', 'pink'] },
      [{ path: '/fields/0/config/default', code: 'not_an_option' }],
    ],
    [
      'a default under min_selected',
      { multiple: true, min_selected: 2, default: ['red'] },
      [{ path: '/fields/0/config/default', code: 'too_few_selected' }],
    ],
    [
      'a default over max_selected',
      { multiple: true, max_selected: 1, default: ['red', 'blue'] },
      [{ path: '/fields/0/config/default', code: 'too_many_selected' }],
    ],
    ['display auto', { display: 'auto' }, []],
    ['display radio', { display: 'radio' }, []],
    ['display dropdown', { display: 'dropdown' }, []],
    ['display list', { display: 'list' }, [{ path: '/fields/0/config/display', code: 'invalid_value' }]],
    ['a duplicate option', { options: ['a', 'a'] }, [{ path: '/fields/0/config/options/1', code: 'not_unique' }]],
  ])('%s', async (_case, config, problems) => {
    const result = await create(selectField(config))
    expect({ status: result.status, problems: result.problems }).toEqual({
      status: problems.length === 0 ? 201 : 422,
      problems,
    })
  })

  test('the config comes back exactly as given', async () => {
    const config = { options: COLOURS, multiple: true, min_selected: 1, max_selected: 3, default: ['red'] }
    const { res } = await create({ key: 'pick', type: 'select', label: 'Pick', config })
    expect(res.status).toBe(201)
    expect((await t.api.get(`/forms/${res.body.id}`)).body.fields[0].config).toEqual(config)
  })
})

// ================================================================ answers

describe('a multiple select answered as JSON', () => {
  test('is the chosen values in option order, whatever order they were sent in', async () => {
    const id = await formWith(selectField({ multiple: true }))
    expect((await submit(t.app, id, { pick: ['amber', 'red', 'blue'] })).status).toBe(201)
    expect(await dataOf(id)).toEqual({ pick: ['red', 'blue', 'amber'] })
  })

  test.each<[string, unknown, Record<string, unknown>, { code: string; message: string }]>([
    ['a duplicate', ['red', 'red'], {}, { code: 'not_unique', message: 'Choose each option only once' }],
    [
      'a value that is no option',
      ['red', 'pink'],
      {},
      { code: 'not_an_option', message: 'Choose only from the options' },
    ],
    ['a label instead of a value', ['Red'], {}, { code: 'not_an_option', message: 'Choose only from the options' }],
    [
      'a string instead of an array',
      'red',
      {},
      { code: 'invalid_type', message: 'Expected an array of option values' },
    ],
    ['a number in the array', ['red', 1], {}, { code: 'invalid_type', message: 'Expected an array of option values' }],
    [
      'one under min_selected',
      ['red'],
      { min_selected: 2 },
      { code: 'too_few_selected', message: 'Choose at least 2 options' },
    ],
    [
      'one over max_selected',
      ['red', 'green', 'blue'],
      { max_selected: 2 },
      { code: 'too_many_selected', message: 'Choose at most 2 options' },
    ],
  ])('%s: 422', async (_case, pick, config, problem) => {
    const id = await formWith(selectField({ multiple: true, ...config }))
    const res = await submit(t.app, id, { pick })
    expect(res.status).toBe(422)
    expect(res.body.errors).toEqual([{ path: '/pick', ...problem }])
  })

  test.each([
    ['exactly min_selected', ['red', 'green'], { min_selected: 2 }],
    ['exactly max_selected', ['red', 'green'], { max_selected: 2 }],
    ['every option', COLOURS, {}],
  ])('%s: recorded', async (_case, pick, config) => {
    const id = await formWith(selectField({ multiple: true, ...config }))
    expect((await submit(t.app, id, { pick })).status).toBe(201)
    expect(await dataOf(id)).toEqual({ pick })
  })

  test('nothing chosen is no answer: left out when optional (min_selected applies only to an answer)', async () => {
    const id = await formWith(selectField({ multiple: true, min_selected: 2 }), {
      key: 'note',
      type: 'text',
      label: 'Note',
    })
    expect((await submit(t.app, id, { pick: [], note: 'x' })).status).toBe(201)
    expect(await dataOf(id)).toEqual({ note: 'x' })
  })

  test('nothing chosen when required: "required"', async () => {
    const id = await formWith(selectField({ multiple: true }, true))
    const res = await submit(t.app, id, { pick: [] })
    expect(res.status).toBe(422)
    expect(res.body.errors).toEqual([{ path: '/pick', message: 'This field is required', code: 'required' }])
  })

  test('a single select still takes one string', async () => {
    const id = await formWith(selectField({}))
    expect((await submit(t.app, id, { pick: ['red'] })).body.errors).toEqual([
      { path: '/pick', message: 'Choose one of the options', code: 'invalid_type' },
    ])
    expect((await submit(t.app, id, { pick: 'pink' })).body.errors).toEqual([
      { path: '/pick', message: 'Choose one of the options', code: 'not_an_option' },
    ])
    expect((await submit(t.app, id, { pick: 'blue' })).status).toBe(201)
    expect(await dataOf(id)).toEqual({ pick: 'blue' })
  })
})

describe('a multiple select answered by a form post', () => {
  test('the key repeated once per ticked box is one array, in option order', async () => {
    const id = await formWith(selectField({ multiple: true }))
    const res = await postForm(t.app, id, [
      ['pick', 'blue'],
      ['pick', 'red'],
    ])
    expect(res.status).toBe(303)
    expect(await dataOf(id)).toEqual({ pick: ['red', 'blue'] })
  })

  test('one ticked box is an array of one', async () => {
    const id = await formWith(selectField({ multiple: true }))
    expect((await postForm(t.app, id, [['pick', 'green']])).status).toBe(303)
    expect(await dataOf(id)).toEqual({ pick: ['green'] })
  })

  test('multipart too', async () => {
    const id = await formWith(selectField({ multiple: true }))
    const body = new FormData()
    body.append('pick', 'amber')
    body.append('pick', 'green')
    expect((await postForm(t.app, id, body)).status).toBe(303)
    expect(await dataOf(id)).toEqual({ pick: ['green', 'amber'] })
  })

  test('a 422 page keeps every tick the person made', async () => {
    const id = await formWith(selectField({ multiple: true, max_selected: 2 }))
    const page = await pageOf(
      await postForm(t.app, id, [
        ['pick', 'red'],
        ['pick', 'blue'],
        ['pick', 'amber'],
      ]),
      422,
    )
    expect(
      inputsOf(page, 'pick')
        .filter((i) => i.checked)
        .map((i) => i.value),
    ).toEqual(['red', 'blue', 'amber'])
    expect(page.byId('field-pick-error').text).toContain('Select no more than 2 options')
  })

  test('a 422 page keeps the chosen radio', async () => {
    const id = await formWith(selectField({}), { key: 'name', type: 'text', label: 'Name', required: true })
    const page = await pageOf(await postForm(t.app, id, [['pick', 'blue']]), 422)
    expect(
      inputsOf(page, 'pick')
        .filter((i) => i.checked)
        .map((i) => i.value),
    ).toEqual(['blue'])
  })
})

// ================================================================ the page

describe('how the page shows a select', () => {
  const options = (n: number) => Array.from({ length: n }, (_, i) => `option ${i + 1}`)

  test('auto: radios up to 7 options', async () => {
    const page = await pageOf(await openPage(t.app, await formWith(selectField({ options: options(7) }, true))))
    expect(inputsOf(page, 'pick').map((i) => i.type)).toEqual(Array(7).fill('radio'))
    expect(page.all('select')).toHaveLength(0)
  })

  test('auto: a drop-down for 8', async () => {
    const page = await pageOf(await openPage(t.app, await formWith(selectField({ options: options(8) }, true))))
    expect(page.control('pick').tag).toBe('select')
    expect(inputsOf(page, 'pick')).toEqual([])
    // The page writes its own first, empty choice.
    expect(page.within(page.control('pick'), 'option').map((o) => [o.attrs.value, o.text.trim()])[0]).toEqual([
      '',
      'Choose an option',
    ])
  })

  test('display radio: radios however many options', async () => {
    const page = await pageOf(
      await openPage(t.app, await formWith(selectField({ options: options(12), display: 'radio' }, true))),
    )
    expect(inputsOf(page, 'pick').map((i) => i.type)).toEqual(Array(12).fill('radio'))
  })

  test('display dropdown: a drop-down however few, with its placeholder', async () => {
    const page = await pageOf(
      await openPage(
        t.app,
        await formWith(selectField({ options: ['yes', 'no'], display: 'dropdown', placeholder: 'Decide' })),
      ),
    )
    const select = page.control('pick')
    expect(select.tag).toBe('select')
    expect(page.within(select, 'option').map((o) => o.text.trim())).toEqual(['Decide', 'yes', 'no'])
  })

  test('radios: a fieldset whose legend is the label; each radio labelled; the first has the field id', async () => {
    const page = await pageOf(
      await openPage(
        t.app,
        await formWith(selectField({ options: ['yes', { value: 'no', label: 'No, not now' }] }, true)),
      ),
    )
    const fieldset = page.one('fieldset')
    expect(page.within(fieldset, 'legend').map((l) => l.text.trim())).toEqual(['Pick'])
    expect(inputsOf(page, 'pick')).toEqual([
      { type: 'radio', id: 'field-pick', value: 'yes', checked: false },
      { type: 'radio', id: 'field-pick-1', value: 'no', checked: false },
    ])
    expect(
      page
        .all('label')
        .filter((l) => l.attrs.for?.startsWith('field-pick'))
        .map((l) => [l.attrs.for, l.text]),
    ).toEqual([
      ['field-pick', 'yes'],
      ['field-pick-1', 'No, not now'],
    ])
  })

  test('an optional radio group ends with "No answer", which posts an empty value: not answered', async () => {
    const id = await formWith(selectField({ options: ['yes', 'no'] }), { key: 'note', type: 'text', label: 'Note' })
    const page = await pageOf(await openPage(t.app, id))
    expect(inputsOf(page, 'pick').map((i) => i.value)).toEqual(['yes', 'no', ''])
    expect(page.label('pick-2').text).toBe('No answer')
    expect(
      (
        await postForm(t.app, id, [
          ['pick', ''],
          ['note', 'n'],
        ])
      ).status,
    ).toBe(303)
    expect(await dataOf(id)).toEqual({ note: 'n' })
  })

  test('a required radio group has no "No answer"', async () => {
    const page = await pageOf(await openPage(t.app, await formWith(selectField({ options: ['yes', 'no'] }, true))))
    expect(inputsOf(page, 'pick').map((i) => i.value)).toEqual(['yes', 'no'])
  })

  test('the default is chosen', async () => {
    const page = await pageOf(await openPage(t.app, await formWith(selectField({ default: 'green' }))))
    expect(
      inputsOf(page, 'pick')
        .filter((i) => i.checked)
        .map((i) => i.value),
    ).toEqual(['green'])
  })

  test('multiple: a fieldset of checkboxes, no "No answer", the default ticked, the limits as a hint', async () => {
    const page = await pageOf(
      await openPage(
        t.app,
        await formWith(selectField({ multiple: true, min_selected: 1, max_selected: 2, default: ['blue'] })),
      ),
    )
    expect(inputsOf(page, 'pick')).toEqual([
      { type: 'checkbox', id: 'field-pick', value: 'red', checked: false },
      { type: 'checkbox', id: 'field-pick-1', value: 'green', checked: false },
      { type: 'checkbox', id: 'field-pick-2', value: 'blue', checked: true },
      { type: 'checkbox', id: 'field-pick-3', value: 'amber', checked: false },
    ])
    expect(page.within(page.one('fieldset'), 'legend')).toHaveLength(1)
    expect(page.byId('field-pick-hint').text).toContain('Select from 1 to 2.')
    expect(page.one('fieldset').attrs['aria-describedby']).toBe('field-pick-hint')
  })

  test('an error on a group: the summary links to its first input, the fieldset is described by the message', async () => {
    const id = await formWith(selectField({ multiple: true }, true))
    const page = await pageOf(await postForm(t.app, id, []), 422)
    expect(page.summaryLinks().has('pick')).toBe(true)
    expect(page.control('pick').attrs.type).toBe('checkbox')
    expect(page.one('fieldset').attrs['aria-describedby']).toBe('field-pick-hint field-pick-error')
  })
})

// ================================================================ autocomplete

describe('autocomplete', () => {
  test.each([
    ['text', 'name'],
    ['text', 'given-name'],
    ['text', 'postal-code'],
    ['text', 'shipping address-line1'],
    ['text', 'billing country-name'],
    ['text', 'Organization'],
    ['text', 'off'],
    ['textarea', 'street-address'],
    ['textarea', 'shipping street-address'],
    ['textarea', 'organization'],
    ['email', 'email'],
    ['email', 'username'],
    ['email', 'on'],
    ['date', 'bday'],
    ['date', 'off'],
  ])('%s takes %p, and its control carries it', async (type, token) => {
    const id = await formWith({ key: 'f', type, label: 'F', config: { autocomplete: token } })
    const page = await pageOf(await openPage(t.app, id))
    // A date of birth is three boxes (CONTRACT 14): the first, the day, carries its part of the token.
    expect(page.control('f').attrs.autocomplete).toBe(type === 'date' && token === 'bday' ? 'bday-day' : token)
  })

  test.each([
    ['text', 'street-address', '"name"'],
    ['text', 'email', '"name"'],
    ['text', 'nonsense', '"name"'],
    ['text', 'home name', '"name"'],
    ['text', 'shipping billing name', '"name"'],
    ['textarea', 'bday', '"street-address"'],
    ['email', 'name', '"email", "username"'],
    ['date', 'email', '"bday"'],
    ['date', 'bday-day', '"bday"'],
  ])('%s refuses %p, naming valid ones', async (type, token, named) => {
    const { status, problems, res } = await create({ key: 'f', type, label: 'F', config: { autocomplete: token } })
    expect({ status, problems }).toEqual({
      status: 422,
      problems: [{ path: '/fields/0/config/autocomplete', code: 'invalid_value' }],
    })
    expect(res.body.errors[0].message).toContain(named)
  })

  test.each(['number', 'checkbox', 'file'])('%s has no autocomplete: an unknown key', async (type) => {
    const { status, problems } = await create({ key: 'f', type, label: 'F', config: { autocomplete: 'name' } })
    expect({ status, problems }).toEqual({
      status: 422,
      problems: [{ path: '/fields/0/config/autocomplete', code: 'unknown_key' }],
    })
  })

  test('an email field without one still asks for "email"', async () => {
    const page = await pageOf(await openPage(t.app, await formWith({ key: 'f', type: 'email', label: 'F' })))
    expect(page.control('f').attrs.autocomplete).toBe('email')
  })
})
