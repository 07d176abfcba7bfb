/**
 * The human's page (CONTRACT 6): each field type rendered with its native control,
 * as a browser sees it (parsed with HTMLRewriter, entity-decoded).
 */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { expectFormPage, type FieldDef } from './page-fixtures.ts'
import { createTestContext, EVERY_TYPE_FIELDS, openPage, type TestContext } from './utils.ts'

let t: TestContext
beforeEach(async () => {
  t = await createTestContext()
})
afterEach(() => t.close())

// ================================================================ controls

describe('each field type is rendered with its native control', () => {
  test('text: type=text with no maxlength (nothing cut), minlength, pattern, placeholder, the default as value, and required', async () => {
    const fields = [
      {
        key: 'code',
        type: 'text',
        label: 'Code',
        required: true,
        config: { max_length: 12, min_length: 3, pattern: '[A-Z]{3}[0-9]*', placeholder: 'ABC123', default: 'XYZ9' },
      },
    ]
    const form = await t.api.createForm({ fields })
    const page = await expectFormPage(await openPage(t.app, form.id))
    const input = page.control('code')
    expect(input.tag).toBe('input')
    expect(input.attrs.type).toBe('text')
    expect(input.attrs.name).toBe('code')
    expect(input.attrs.maxlength).toBeUndefined()
    expect(input.attrs.minlength).toBe('3')
    expect(input.attrs.pattern).toBe('[A-Z]{3}[0-9]*')
    expect(input.attrs.placeholder).toBe('ABC123')
    expect(input.attrs.value).toBe('XYZ9')
    expect('required' in input.attrs).toBe(true)
  })

  test('textarea: rows, no maxlength, placeholder, and the default as its text', async () => {
    const fields = [
      {
        key: 'notes',
        type: 'textarea',
        label: 'Notes',
        config: { rows: 6, max_length: 500, placeholder: 'Anything else?', default: 'line 1\nline 2' },
      },
    ]
    const form = await t.api.createForm({ fields })
    const page = await expectFormPage(await openPage(t.app, form.id))
    const area = page.control('notes')
    expect(area.tag).toBe('textarea')
    expect(area.attrs.name).toBe('notes')
    expect(area.attrs.rows).toBe('6')
    expect(area.attrs.maxlength).toBeUndefined()
    expect(area.attrs.placeholder).toBe('Anything else?')
    expect(area.text).toBe('line 1\nline 2')
    expect('required' in area.attrs).toBe(false)
  })

  test('a textarea default that starts with a newline keeps it', async () => {
    const fields = [{ key: 'notes', type: 'textarea', label: 'Notes', config: { default: '\nsecond line' } }]
    const form = await t.api.createForm({ fields })
    const page = await expectFormPage(await openPage(t.app, form.id))
    expect(page.control('notes').text).toBe('\nsecond line')
  })

  test('email: type=email with placeholder and default', async () => {
    const fields = [
      {
        key: 'email',
        type: 'email',
        label: 'Email',
        required: true,
        config: { placeholder: 'you@example.com', default: 'ada@example.com' },
      },
    ]
    const form = await t.api.createForm({ fields })
    const page = await expectFormPage(await openPage(t.app, form.id))
    const input = page.control('email')
    expect(input.tag).toBe('input')
    expect(input.attrs.type).toBe('email')
    expect(input.attrs.name).toBe('email')
    expect(input.attrs.placeholder).toBe('you@example.com')
    expect(input.attrs.value).toBe('ada@example.com')
    expect('required' in input.attrs).toBe(true)
  })

  test('number: a text input with inputmode (numeric for whole numbers only), the placeholder and default; no min, max or step', async () => {
    const fields = [
      { key: 'guests', type: 'number', label: 'Guests', config: { min: 1, max: 10, step: 1, default: 2 } },
      { key: 'weight', type: 'number', label: 'Weight', config: { min: 0.5, placeholder: 'kg', default: 2.75 } },
      { key: 'free', type: 'number', label: 'Anything' },
    ]
    const form = await t.api.createForm({ fields })
    const page = await expectFormPage(await openPage(t.app, form.id))
    const guests = page.control('guests')
    expect(guests.tag).toBe('input')
    expect(guests.attrs.type).toBe('text')
    expect(guests.attrs.inputmode).toBe('numeric')
    for (const ignored of ['min', 'max', 'step']) expect(guests.attrs[ignored]).toBeUndefined()
    expect(guests.attrs.value).toBe('2')
    const weight = page.control('weight')
    expect(weight.attrs.type).toBe('text')
    expect(weight.attrs.inputmode).toBe('decimal')
    expect(weight.attrs.min).toBeUndefined()
    expect(weight.attrs.placeholder).toBe('kg')
    expect(weight.attrs.value).toBe('2.75')
    const free = page.control('free')
    expect(free.attrs.inputmode).toBe('decimal')
    expect(free.attrs.value ?? '').toBe('')
  })

  test('select: a placeholder option with value "", then string and {value,label} options; the default is selected', async () => {
    const fields = [
      {
        key: 'meal',
        type: 'select',
        label: 'Meal',
        required: true,
        config: {
          options: ['fish', { value: 'veg', label: 'Vegetarian' }, 'meat'],
          placeholder: 'Pick a meal',
          default: 'veg',
          display: 'dropdown',
        },
      },
      { key: 'size', type: 'select', label: 'Size', config: { options: ['S', 'M'], display: 'dropdown' } },
    ]
    const form = await t.api.createForm({ fields })
    const page = await expectFormPage(await openPage(t.app, form.id))
    const meal = page.control('meal')
    expect(meal.tag).toBe('select')
    expect(meal.attrs.name).toBe('meal')
    expect('required' in meal.attrs).toBe(true)
    const options = page.within(meal, 'option')
    expect(options.map((o) => [o.attrs.value, o.text])).toEqual([
      ['', 'Pick a meal'],
      ['fish', 'fish'],
      ['veg', 'Vegetarian'],
      ['meat', 'meat'],
    ])
    expect(options.filter((o) => 'selected' in o.attrs).map((o) => o.attrs.value)).toEqual(['veg'])

    const size = page.control('size')
    const sizeOptions = page.within(size, 'option')
    expect(sizeOptions[0]!.attrs.value).toBe('')
    expect(sizeOptions[0]!.text.trim()).not.toBe('')
    expect(sizeOptions.slice(1).map((o) => o.attrs.value)).toEqual(['S', 'M'])
    expect(sizeOptions.filter((o) => 'selected' in o.attrs)).toEqual([])
    expect('required' in size.attrs).toBe(false)
  })

  test('checkbox: one box; required makes it required; default true is ticked, no default is not', async () => {
    const fields = [
      { key: 'agree', type: 'checkbox', label: 'I agree', required: true },
      { key: 'news', type: 'checkbox', label: 'Newsletter', config: { default: true } },
      { key: 'off', type: 'checkbox', label: 'Off by default', config: { default: false } },
    ]
    const form = await t.api.createForm({ fields })
    const page = await expectFormPage(await openPage(t.app, form.id))
    for (const key of ['agree', 'news', 'off']) {
      const boxes = page.all('input').filter((n) => n.attrs.name === key)
      expect(boxes).toHaveLength(1)
      expect(boxes[0]!.attrs.type).toBe('checkbox')
      expect(boxes[0]!.attrs.id).toBe(`field-${key}`)
    }
    expect('required' in page.control('agree').attrs).toBe(true)
    expect('checked' in page.control('agree').attrs).toBe(false)
    expect('required' in page.control('news').attrs).toBe(false)
    expect('checked' in page.control('news').attrs).toBe(true)
    expect('checked' in page.control('off').attrs).toBe(false)
  })

  test('date: type=date with min, max and default', async () => {
    const fields = [
      {
        key: 'day',
        type: 'date',
        label: 'Day',
        config: { min: '2026-01-01', max: '2026-12-31', default: '2026-03-15' },
      },
    ]
    const form = await t.api.createForm({ fields })
    const page = await expectFormPage(await openPage(t.app, form.id))
    const input = page.control('day')
    expect(input.tag).toBe('input')
    expect(input.attrs.type).toBe('date')
    expect(input.attrs.min).toBe('2026-01-01')
    expect(input.attrs.max).toBe('2026-12-31')
    expect(input.attrs.value).toBe('2026-03-15')
  })

  test('file: type=file with accept and no value; the form posts multipart/form-data', async () => {
    const fields = [
      { key: 'name', type: 'text', label: 'Name' },
      {
        key: 'photo',
        type: 'file',
        label: 'Photo',
        required: true,
        config: { accept: 'image/*,.pdf', max_size: 2048 },
      },
    ]
    const form = await t.api.createForm({ fields })
    const page = await expectFormPage(await openPage(t.app, form.id))
    const input = page.control('photo')
    expect(input.tag).toBe('input')
    expect(input.attrs.type).toBe('file')
    expect(input.attrs.name).toBe('photo')
    expect(input.attrs.accept).toBe('image/*,.pdf')
    expect(input.attrs.value).toBeUndefined()
    expect('required' in input.attrs).toBe(true)
    expect((page.one('form').attrs.enctype ?? '').toLowerCase()).toBe('multipart/form-data')
  })

  test('a form without a file field is not multipart', async () => {
    const form = await t.api.createForm({ fields: EVERY_TYPE_FIELDS.filter((f) => f.type !== 'file') })
    const page = await expectFormPage(await openPage(t.app, form.id))
    expect((page.one('form').attrs.enctype ?? 'application/x-www-form-urlencoded').toLowerCase()).toBe(
      'application/x-www-form-urlencoded',
    )
  })

  test('the form posts to /f/<id>, every field has a label tied to its control, and "(required)" marks exactly the required ones', async () => {
    const form = await t.api.createForm({ fields: EVERY_TYPE_FIELDS })
    const page = await expectFormPage(await openPage(t.app, form.id))
    expect(page.one('form').attrs.action).toBe(`/f/${form.id}`)
    for (const field of EVERY_TYPE_FIELDS) {
      const control = page.control(field.key)
      expect(control.attrs.name).toBe(field.key)
      // A group (radios, checkboxes) is named by its fieldset's legend; its first input has the field's id.
      const group = page.all('fieldset').find((fieldset) => page.within(fieldset).includes(control))
      const label = group ? page.within(group, 'legend')[0]! : page.label(field.key)
      const text = label.text.replace(/\s+/g, ' ').trim()
      if (field.required) {
        expect(text).toBe(`${field.label} (required)`)
        expect('required' in control.attrs).toBe(true)
      } else {
        expect(text).toBe(field.label)
        expect('required' in control.attrs).toBe(false)
      }
    }
  })

  test('the title, the description and each field description are shown, each description below its label', async () => {
    const fields: FieldDef[] = [
      { key: 'name', type: 'text', label: 'Name', description: 'As on your passport' },
      { key: 'agree', type: 'checkbox', label: 'I agree', description: 'Read the terms first' },
      { key: 'notes', type: 'textarea', label: 'Notes', description: 'Anything we should know' },
    ]
    const form = await t.api.createForm({ title: 'Trip sign-up', description: 'Tell us who is coming.', fields })
    const page = await expectFormPage(await openPage(t.app, form.id))
    expect(page.one('h1').text).toBe('Trip sign-up')
    expect(page.one('title').text).toContain('Trip sign-up')
    expect(page.withText('Tell us who is coming.').length).toBeGreaterThanOrEqual(1)
    fields.forEach((field, i) => {
      const shown = page.withText(field.description!)
      expect(shown.length, `description of ${field.key}`).toBeGreaterThanOrEqual(1)
      const label = page.label(field.key)
      const next = fields[i + 1]
      const limit = next ? Math.min(page.label(next.key).start, page.control(next.key).start) : page.one('form').end
      expect(shown.some((n) => n.start > label.start && n.end < limit)).toBe(true)
    })
  })
})
