/**
 * The field types on the page (CONTRACT 6): each one's native control and note,
 * and submissionBodyLimit.
 */
import { describe, expect, test } from 'bun:test'
import { submissionBodyLimit } from '../src/fields/index.ts'
import type { Control } from '../src/fields/types.ts'
import { type Message, translator } from '../src/i18n/index.ts'
import { type Config, field, MIB, typeOf } from './fields-fixtures.ts'

// ---------------------------------------------------------------- control and note

describe('control', () => {
  test.each<[string, Config, Control]>([
    ['text', {}, { kind: 'input', attributes: { type: 'text' } }],
    [
      'text',
      { max_length: 50, min_length: 2, pattern: '[a-z]+', placeholder: 'name' },
      { kind: 'input', attributes: { type: 'text', minlength: 2, pattern: '[a-z]+', placeholder: 'name' } },
    ],
    ['textarea', {}, { kind: 'textarea', attributes: { rows: 4 } }],
    [
      'textarea',
      { rows: 8, max_length: 200, min_length: 10, placeholder: 'p' },
      { kind: 'textarea', attributes: { rows: 8, minlength: 10, placeholder: 'p' } },
    ],
    ['email', {}, { kind: 'input', attributes: { type: 'email', autocomplete: 'email', spellcheck: 'false' } }],
    // Text with a numeric keyboard: the server reads the number in the page's language (CONTRACT 14).
    ['number', {}, { kind: 'input', attributes: { type: 'text', inputmode: 'decimal', spellcheck: 'false' } }],
    [
      'number',
      { min: 1, max: 9, step: 2, placeholder: 'n' },
      { kind: 'input', attributes: { type: 'text', inputmode: 'numeric', spellcheck: 'false', placeholder: 'n' } },
    ],
    [
      'number',
      { step: 0.1 },
      { kind: 'input', attributes: { type: 'text', inputmode: 'decimal', spellcheck: 'false' } },
    ],
    [
      'number',
      { min: 0.5, step: 1 },
      { kind: 'input', attributes: { type: 'text', inputmode: 'decimal', spellcheck: 'false' } },
    ],
    [
      'select',
      { options: ['a', { value: 'b', label: 'Bee' }] },
      {
        kind: 'radios',
        options: [
          { value: 'a', label: 'a' },
          { value: 'b', label: 'Bee' },
        ],
      },
    ],
    [
      'select',
      { options: ['a', { value: 'b', label: 'Bee' }], display: 'dropdown' },
      {
        kind: 'select',
        attributes: {},
        options: [
          { value: 'a', label: 'a' },
          { value: 'b', label: 'Bee' },
        ],
        placeholder: undefined,
      },
    ],
    [
      'select',
      { options: ['a'], placeholder: 'Pick one', display: 'dropdown' },
      { kind: 'select', attributes: {}, options: [{ value: 'a', label: 'a' }], placeholder: 'Pick one' },
    ],
    [
      'select',
      { options: ['a', 'b'], multiple: true },
      {
        kind: 'checkboxes',
        options: [
          { value: 'a', label: 'a' },
          { value: 'b', label: 'b' },
        ],
      },
    ],
    ['checkbox', { default: true }, { kind: 'checkbox', attributes: {} }],
    ['date', {}, { kind: 'input', attributes: { type: 'date' } }],
    [
      'date',
      { min: '2026-01-01', max: '2026-12-31' },
      { kind: 'input', attributes: { type: 'date', min: '2026-01-01', max: '2026-12-31' } },
    ],
    ['file', {}, { kind: 'input', attributes: { type: 'file' } }],
    [
      'file',
      { accept: 'image/*,.pdf', max_size: 100 },
      { kind: 'input', attributes: { type: 'file', accept: 'image/*,.pdf' } },
    ],
  ])('%s with %p', (type, config, expected) => {
    expect(typeOf(type).control(config)).toEqual(expected)
  })
})

describe('note', () => {
  test.each<[string, Config, Message | undefined]>([
    ['text', {}, undefined],
    ['text', { min_length: 3 }, { key: 'hint.min_length', params: { count: 3 } }],
    ['textarea', { min_length: 20 }, { key: 'hint.min_length', params: { count: 20 } }],
    ['number', {}, undefined],
    ['number', { min: 1, max: 9 }, { key: 'hint.number_between', params: { min: 1, max: 9 } }],
    ['number', { min: 0 }, { key: 'hint.number_min', params: { min: 0 } }],
    ['number', { max: 5 }, { key: 'hint.number_max', params: { max: 5 } }],
    // The date control shows its own format: a written one would contradict it.
    ['date', {}, undefined],
    [
      'date',
      { min: '2026-01-01', max: '2026-12-31' },
      { key: 'hint.date_between', params: { min: { date: '2026-01-01' }, max: { date: '2026-12-31' } } },
    ],
    ['date', { min: '2026-01-01' }, { key: 'hint.date_min', params: { min: { date: '2026-01-01' } } }],
    ['date', { max: '2026-12-31' }, { key: 'hint.date_max', params: { max: { date: '2026-12-31' } } }],
    ['file', {}, { key: 'hint.file_size', params: { size: { bytes: 10 * MIB } } }],
    [
      'file',
      { accept: 'image/*,.pdf', max_size: MIB },
      { key: 'hint.file_types', params: { types: { fileTypes: 'image/*,.pdf' }, size: { bytes: MIB } } },
    ],
    ['select', { options: ['a', 'b'] }, undefined],
    ['select', { options: ['a', 'b'], multiple: true }, { key: 'hint.select_any' }],
    [
      'select',
      { options: ['a', 'b', 'c'], multiple: true, min_selected: 2 },
      { key: 'hint.select_at_least', params: { count: 2 } },
    ],
    [
      'select',
      { options: ['a', 'b', 'c'], multiple: true, max_selected: 2 },
      { key: 'hint.select_at_most', params: { count: 2 } },
    ],
    [
      'select',
      { options: ['a', 'b', 'c'], multiple: true, min_selected: 2, max_selected: 2 },
      { key: 'hint.select_exactly', params: { count: 2 } },
    ],
    [
      'select',
      { options: ['a', 'b', 'c'], multiple: true, min_selected: 1, max_selected: 2 },
      { key: 'hint.select_between', params: { min: 1, max: 2 } },
    ],
  ])('%s with %p: %p', (type, config, expected) => {
    expect(typeOf(type).note?.(config)).toEqual(expected)
  })

  test('every note is a message of the English catalog, with its placeholders', () => {
    const note = typeOf('date').note!({ min: '2026-01-01', max: '2026-12-31' })!
    expect(translator('en').t(note.key, note.params)).toBe('A date from January 1, 2026 to December 31, 2026.')
  })
})

// ---------------------------------------------------------------- submissionBodyLimit

describe('submissionBodyLimit', () => {
  const none = submissionBodyLimit([])

  test.each([1, MIB, 10 * MIB, 25 * MIB])(
    'a file field with max_size %p raises the limit by at least that much',
    (maxSize) => {
      expect(submissionBodyLimit([field('f', 'file', { max_size: maxSize })]) - none).toBeGreaterThanOrEqual(maxSize)
    },
  )

  test('the limit grows byte for byte with max_size', () => {
    const small = submissionBodyLimit([field('f', 'file', { max_size: MIB })])
    const large = submissionBodyLimit([field('f', 'file', { max_size: 2 * MIB })])
    expect(large - small).toBe(MIB)
  })

  test('a file field without max_size allows for the default 10 MiB', () => {
    expect(submissionBodyLimit([field('f', 'file')]) - none).toBeGreaterThanOrEqual(10 * MIB)
    expect(submissionBodyLimit([field('f', 'file')])).toBe(
      submissionBodyLimit([field('f', 'file', { max_size: 10 * MIB })]),
    )
  })

  test('two file fields add up', () => {
    const one = submissionBodyLimit([field('a', 'file', { max_size: 25 * MIB })])
    const two = submissionBodyLimit([
      field('a', 'file', { max_size: 25 * MIB }),
      field('b', 'file', { max_size: 25 * MIB }),
    ])
    expect(two - one).toBeGreaterThanOrEqual(25 * MIB)
  })

  test('a multipart post of a file of exactly max_size fits', async () => {
    const form = new FormData()
    form.append('doc', new File([new Uint8Array(MIB)], 'a-rather-long-file-name.pdf', { type: 'application/pdf' }))
    const body = await new Response(form).arrayBuffer()
    expect(body.byteLength).toBeGreaterThan(MIB)
    expect(body.byteLength).toBeLessThanOrEqual(submissionBodyLimit([field('doc', 'file', { max_size: MIB })]))
  })

  test('a text field at max_length of 3-byte characters fits, percent-encoded', () => {
    const encoded = encodeURIComponent('€'.repeat(10_000))
    expect(submissionBodyLimit([field('t', 'text', { max_length: 10_000 })]) - none).toBeGreaterThanOrEqual(
      encoded.length,
    )
  })

  test('a textarea at max_length of line breaks, sent as CRLF, fits', () => {
    const encoded = encodeURIComponent('\r\n'.repeat(100_000))
    expect(submissionBodyLimit([field('t', 'textarea', { max_length: 100_000 })]) - none).toBeGreaterThanOrEqual(
      encoded.length,
    )
  })

  test('every field adds room, even one with no stated size', () => {
    expect(submissionBodyLimit([field('c', 'checkbox')])).toBeGreaterThan(none)
    expect(submissionBodyLimit([field('c', 'checkbox'), field('d', 'date')])).toBeGreaterThan(
      submissionBodyLimit([field('c', 'checkbox')]),
    )
  })
})
