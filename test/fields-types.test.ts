/**
 * The 8 field types (CONTRACT 4, 6), called directly through the registry: each
 * type's parse at every boundary.
 */
import { describe, expect, test } from 'bun:test'
import { accepts, describeAccept, formatSize } from '../src/fields/file.ts'
import { fieldTypes } from '../src/fields/index.ts'
import { Upload } from '../src/fields/types.ts'
import { BASE, EMPTY, INVALID, MIB, parse, typeOf, upload, value } from './fields-fixtures.ts'

// ---------------------------------------------------------------- registry

test('the registry holds exactly the 8 types of CONTRACT 4, each under its own name', () => {
  expect(Object.keys(fieldTypes).sort()).toEqual([
    'checkbox',
    'date',
    'email',
    'file',
    'number',
    'select',
    'text',
    'textarea',
  ])
  for (const [name, type] of Object.entries(fieldTypes)) expect(type.name).toBe(name)
})

// ---------------------------------------------------------------- empty values

describe('an empty answer', () => {
  const types = ['text', 'textarea', 'email', 'number', 'select', 'date', 'file']
  const blanks: unknown[] = [undefined, null, '', '   ', '\t']
  const cases = types.flatMap((type) =>
    blanks.flatMap((input) => [false, true].map((required) => [type, input, required] as const)),
  )

  test.each(cases)('%s: %p (required %p) is empty; the caller decides', (type, input, required) => {
    expect(parse(type, input, BASE[type], required)).toEqual(EMPTY)
  })

  test.each(blanks)('checkbox: %p is unticked, stored as false', (input) => {
    expect(parse('checkbox', input)).toEqual(value(false))
  })
})

// ---------------------------------------------------------------- text

describe('text', () => {
  test.each([
    ['plain text', 'hello', {}, 'hello'],
    ['inner spaces kept', 'a b  c', {}, 'a b  c'],
    ['min_length reached', 'abc', { min_length: 3, max_length: 5 }, 'abc'],
    ['max_length reached', 'abcde', { min_length: 3, max_length: 5 }, 'abcde'],
    ['default max_length 1000 reached', 'a'.repeat(1000), {}, 'a'.repeat(1000)],
    ['an emoji is one character: fits max_length 1', '😀', { max_length: 1 }, '😀'],
    ['an emoji and a letter are 2 characters: meet min_length 2', '😀a', { min_length: 2 }, '😀a'],
    ['pattern [a-z]+ matched in full', 'abc', { pattern: '[a-z]+' }, 'abc'],
    ['alternation yes|no: yes', 'yes', { pattern: 'yes|no' }, 'yes'],
    ['alternation yes|no: no', 'no', { pattern: 'yes|no' }, 'no'],
    ['pattern \\d{3}', '123', { pattern: '\\d{3}' }, '123'],
    ['pattern with its own anchors', 'abc', { pattern: '^abc$' }, 'abc'],
  ] as const)('%s: accepted', (_case, input, config, expected) => {
    expect(parse('text', input, config)).toEqual(value(expected))
  })

  test.each([
    ['a line feed', 'a\nb', {}],
    ['a CRLF', 'a\r\nb', {}],
    ['a lone CR', 'a\rb', {}],
    ['a line break even when the pattern allows it', 'a\nb', { pattern: '[\\s\\S]+' }],
    ['one short of min_length', 'ab', { min_length: 3, max_length: 5 }],
    ['one over max_length', 'abcdef', { min_length: 3, max_length: 5 }],
    ['one over the default max_length 1000', 'a'.repeat(1001), {}],
    ['an emoji is one character: under min_length 2', '😀', { min_length: 2 }],
    ['an emoji and two letters are 3 characters: over max_length 2', '😀ab', { max_length: 2 }],
    ['a decomposed é is 2 characters (e and the accent): over max_length 1', 'e\u0301', { max_length: 1 }],
    ['[a-z]+ must match the whole value: abc1', 'abc1', { pattern: '[a-z]+' }],
    ['[a-z]+ must match the whole value: 1abc', '1abc', { pattern: '[a-z]+' }],
    ['[a-z]+ is case-sensitive', 'ABC', { pattern: '[a-z]+' }],
    ['alternation yes|no rejects yess', 'yess', { pattern: 'yes|no' }],
    ['alternation yes|no rejects ayes', 'ayes', { pattern: 'yes|no' }],
    ['alternation yes|no rejects yesno', 'yesno', { pattern: 'yes|no' }],
    ['\\d{3} rejects 4 digits', '1234', { pattern: '\\d{3}' }],
    ['a number', 42, {}],
    ['a boolean', true, {}],
    ['an object', { text: 'a' }, {}],
  ] as const)('%s: rejected', (_case, input, config) => {
    expect(parse('text', input, config)).toEqual(INVALID)
  })
  // Intake no longer accepts these (RE2 cannot run them as the browser does), but forms an older version stored still enforce them.
  test.each([
    ['set subtraction [\\p{L}--[a-z]]+', 'ÄB', { pattern: '[\\p{L}--[a-z]]+' }, value('ÄB')],
    ['set subtraction excludes a-z', 'Äb', { pattern: '[\\p{L}--[a-z]]+' }, INVALID],
    ['set intersection [[a-z]&&[^aeiou]]+', 'bcd', { pattern: '[[a-z]&&[^aeiou]]+' }, value('bcd')],
    ['set intersection excludes vowels', 'bad', { pattern: '[[a-z]&&[^aeiou]]+' }, INVALID],
    [
      'string property \\p{RGI_Emoji} matches a multi-code-point emoji',
      '👍🏽',
      { pattern: '\\p{RGI_Emoji}' },
      value('👍🏽'),
    ],
    ['a back-reference', 'abab', { pattern: '(ab)\\1' }, value('abab')],
    ['a back-reference that differs', 'abba', { pattern: '(ab)\\1' }, INVALID],
  ] as const)(
    "an old pattern with the v flag's %s: as the browser reads it",
    async (_case, input, config, expected) => {
      expect(await typeOf('text').parse(input, config, false)).toEqual(expected)
    },
  )
})

// ---------------------------------------------------------------- textarea

describe('textarea', () => {
  test.each([
    ['CRLF counts as one: 10 characters fit max_length 10', '12345\r\n1234', { max_length: 10 }, '12345\n1234'],
    ['a lone CR counts as one', '12345\r1234', { max_length: 10 }, '12345\n1234'],
    ['LF stays LF', '12345\n1234', { max_length: 10 }, '12345\n1234'],
    ['several breaks, CR then CRLF', 'a\r\r\nb\r\n\r\nc', {}, 'a\n\nb\n\nc'],
    ['min_length reached after normalising', 'ab\r\nc', { min_length: 4 }, 'ab\nc'],
    ['default max_length 10000 reached', 'a'.repeat(10_000), {}, 'a'.repeat(10_000)],
    ['an emoji is one character: 😀😀a fits max_length 3', '😀😀a', { max_length: 3 }, '😀😀a'],
  ] as const)('%s: accepted as %p', (_case, input, config, expected) => {
    expect(parse('textarea', input, config)).toEqual(value(expected))
  })

  test.each([
    ['11 characters after normalising', '12345\r\n12345', { max_length: 10 }],
    ['CRLF counts as one, also for min_length', 'ab\r\n', { min_length: 4 }],
    ['one over the default max_length 10000', 'a'.repeat(10_001), {}],
    ['four emoji are 4 characters: over max_length 3', '😀😀😀😀', { max_length: 3 }],
    ['a number', 7, {}],
    ['an array', ['a'], {}],
  ] as const)('%s: rejected', (_case, input, config) => {
    expect(parse('textarea', input, config)).toEqual(INVALID)
  })
})

// ---------------------------------------------------------------- email

describe('email', () => {
  // 64 + 1 + (61 + 1 + 61 + 1 + 61 + 4) = 254 characters.
  const domain = `${'b'.repeat(61)}.${'c'.repeat(61)}.${'d'.repeat(61)}.com`
  const address254 = `${'a'.repeat(64)}@${domain}`
  const address255 = `${'a'.repeat(65)}@${domain}`

  test('the long addresses are the lengths the cases say', () => {
    expect([address254.length, address255.length]).toEqual([254, 255])
  })

  test.each([
    ['a plain address', 'name@example.com', 'name@example.com'],
    ['surrounding spaces trimmed', '  name@example.com  ', 'name@example.com'],
    ['tag and subdomains', 'name+tag@mail.example.co.uk', 'name+tag@mail.example.co.uk'],
    ['an apostrophe', "o'brien@example.com", "o'brien@example.com"],
    ['a hyphenated domain', 'a@my-host.example', 'a@my-host.example'],
    ['254 characters', address254, address254],
    ['254 characters once trimmed', ` ${address254} `, address254],
  ] as const)('%s: accepted', (_case, input, expected) => {
    expect(parse('email', input)).toEqual(value(expected))
  })

  test.each([
    ['255 characters', address255],
    ['no dot in the domain', 'name@localhost'],
    ['no @', 'name.example.com'],
    ['nothing before @', '@example.com'],
    ['nothing after @', 'name@'],
    ['two @', 'a@b@example.com'],
    ['a space inside', 'na me@example.com'],
    ['an empty domain label', 'name@example..com'],
    ['a domain starting with a dot', 'name@.example.com'],
    ['a label starting with a hyphen', 'name@-example.com'],
    ['a trailing dot', 'name@example.com.'],
    ['a number', 42],
    ['a boolean', true],
  ] as const)('%s: rejected', (_case, input) => {
    expect(parse('email', input)).toEqual(INVALID)
  })
})

// ---------------------------------------------------------------- number

describe('number', () => {
  test.each([
    // Strings exactly as a browser sends them.
    ['"3"', '3', {}, 3],
    ['"-2.5"', '-2.5', {}, -2.5],
    ['"1e3"', '1e3', {}, 1000],
    ['"1E-2"', '1E-2', {}, 0.01],
    ['" 4 " (trimmed)', ' 4 ', {}, 4],
    ['".5"', '.5', {}, 0.5],
    ['"007"', '007', {}, 7],
    ['"3.0" is the integer 3', '3.0', {}, 3],
    ['a JSON number', 12.75, {}, 12.75],
    // min/max are inclusive.
    ['min itself', 1, { min: 1, max: 10 }, 1],
    ['max itself', 10, { min: 1, max: 10 }, 10],
    ['max itself, as a string', '10', { min: 1, max: 10 }, 10],
    ['a negative min itself', -5, { min: -5, max: -1 }, -5],
    ['min equal to max', 5, { min: 5, max: 5 }, 5],
    // The largest safe integers.
    ['9007199254740991', 9007199254740991, {}, 9007199254740991],
    ['-9007199254740991', -9007199254740991, {}, -9007199254740991],
    ['"9007199254740991"', '9007199254740991', {}, 9007199254740991],
    // Integer step counted from 0.
    ['step 1: 3', 3, { step: 1 }, 3],
    ['step 1: -4', -4, { step: 1 }, -4],
    ['step 1: 0', 0, { step: 1 }, 0],
    ['step 5: 10', 10, { step: 5 }, 10],
    ['step 5: -5', -5, { step: 5 }, -5],
    // Step counted from min.
    ['min 1, step 2: 1', 1, { min: 1, step: 2 }, 1],
    ['min 1, step 2: 3', 3, { min: 1, step: 2 }, 3],
    ['min 1, step 2: 5', '5', { min: 1, step: 2 }, 5],
    ['min 0.5, step 1: 2.5', 2.5, { min: 0.5, step: 1 }, 2.5],
    ['min -3, step 3: 0', 0, { min: -3, step: 3 }, 0],
    // Decimal steps, despite binary floating point.
    ['step 0.1: 0.3', 0.3, { step: 0.1 }, 0.3],
    ['step 0.1: 0.7', 0.7, { step: 0.1 }, 0.7],
    ['step 0.1: "0.3"', '0.3', { step: 0.1 }, 0.3],
    ['step 0.1: "0.7"', '0.7', { step: 0.1 }, 0.7],
    ['step 0.1: 1.1', 1.1, { step: 0.1 }, 1.1],
    ['step 0.1: 0.1 + 0.2', 0.1 + 0.2, { step: 0.1 }, 0.1 + 0.2],
    ['step 0.01: 19.99', '19.99', { step: 0.01 }, 19.99],
    ['min 0.2, step 0.1: 0.5', 0.5, { min: 0.2, step: 0.1 }, 0.5],
  ] as const)('%s: accepted as %p', (_case, input, config, expected) => {
    expect(parse('number', input, config)).toEqual(value(expected))
  })

  test('-0 is answered as 0', () => {
    const parsed = parse('number', '-0')
    expect(parsed.kind).toBe('value')
    expect(parsed.kind === 'value' && Object.is(parsed.value, 0)).toBe(true)
  })

  test.each([
    // Not numbers.
    ['"abc"', 'abc', {}],
    ['"0x10"', '0x10', {}],
    ['"1,5"', '1,5', {}],
    ['"Infinity"', 'Infinity', {}],
    ['"-Infinity"', '-Infinity', {}],
    ['"NaN"', 'NaN', {}],
    ['"1e"', '1e', {}],
    ['"--1"', '--1', {}],
    ['"1 2"', '1 2', {}],
    ['"3abc"', '3abc', {}],
    ['"٣" (a non-ASCII digit)', '٣', {}],
    ['Infinity', Infinity, {}],
    ['NaN', NaN, {}],
    ['true', true, {}],
    ['an array', [3], {}],
    ['an object', { value: 3 }, {}],
    // Beyond the safe integers.
    ['9007199254740992', 9007199254740992, {}],
    ['-9007199254740992', -9007199254740992, {}],
    ['"9007199254740993"', '9007199254740993', {}],
    ['"1e16"', '1e16', {}],
    ['1e300', 1e300, {}],
    // Just outside min/max.
    ['just under min', 0.999, { min: 1, max: 10 }],
    ['just over max', 10.001, { min: 1, max: 10 }],
    ['under min, as a string', '0', { min: 1, max: 10 }],
    ['over max, as a string', '11', { min: 1, max: 10 }],
    ['just under a negative min', -5.5, { min: -5, max: -1 }],
    ['beside min equal to max', 6, { min: 5, max: 5 }],
    // Off the step.
    ['step 1: 3.5', 3.5, { step: 1 }],
    ['step 1: "0.5"', '0.5', { step: 1 }],
    ['step 5: 12', 12, { step: 5 }],
    ['min 1, step 2: 2', 2, { min: 1, step: 2 }],
    ['min 1, step 2: 4', '4', { min: 1, step: 2 }],
    ['min 0.5, step 1: 2', 2, { min: 0.5, step: 1 }],
    ['step 0.1: 0.35', 0.35, { step: 0.1 }],
    ['step 0.1: "0.35"', '0.35', { step: 0.1 }],
    ['step 0.1: 0.05', 0.05, { step: 0.1 }],
    ['step 0.01: 19.995', '19.995', { step: 0.01 }],
    // Off the step by half a step, far from the base: still off the step.
    ['step 1: 1000000000.5', 1000000000.5, { step: 1 }],
    ['step 0.1: 100000000.05', 100000000.05, { step: 0.1 }],
  ] as const)('%s: rejected', (_case, input, config) => {
    expect(parse('number', input, config)).toEqual(INVALID)
  })
})

// ---------------------------------------------------------------- select

describe('select', () => {
  const config = { options: ['red', 'Green', { value: 'b', label: 'Blue' }] }

  test.each(['red', 'Green', 'b'])('the option value %p: accepted', (input) => {
    expect(parse('select', input, config)).toEqual(value(input))
  })

  test.each([
    ['a label, not a value', 'Blue'],
    ['another case', 'RED'],
    ['another case', 'green'],
    ['a leading space', ' red'],
    ['a trailing space', 'red '],
    ['a prefix', 're'],
    ['no such option', 'purple'],
    ['an Object.prototype name', 'constructor'],
    ['an array of a value', ['red']],
    ['a boolean', true],
  ] as const)('%s (%p): rejected', (_case, input) => {
    expect(parse('select', input, config)).toEqual(INVALID)
  })

  test('a number is not the string option "1"', () => {
    expect(parse('select', 1, { options: ['1', '2'] })).toEqual(INVALID)
    expect(parse('select', '1', { options: ['1', '2'] })).toEqual(value('1'))
  })
})

// ---------------------------------------------------------------- checkbox

describe('checkbox', () => {
  test.each([
    [true, true],
    [false, false],
    ['on', true],
    ['true', true],
    ['ON', true],
    ['True', true],
    [undefined, false],
    [null, false],
  ] as const)('%p is %p', (input, expected) => {
    expect(parse('checkbox', input)).toEqual(value(expected))
  })

  test.each([true, 'on', 'true'])('required, %p: ticked', (input) => {
    expect(parse('checkbox', input, {}, true)).toEqual(value(true))
  })

  test.each([false, undefined, null, ''])('required, %p: must be ticked', (input) => {
    expect(parse('checkbox', input, {}, true)).toEqual(INVALID)
  })

  // Rows are wrapped so that an array input is one argument, not spread.
  test.each([['yes'], ['no'], ['1'], ['0'], [1], [0], [' on'], [[true]], [{ checked: true }]] as const)(
    '%p: rejected',
    (input) => {
      expect(parse('checkbox', input)).toEqual(INVALID)
    },
  )
})

// ---------------------------------------------------------------- date

describe('date', () => {
  test.each([
    ['a leap day', '2024-02-29', {}, '2024-02-29'],
    ['a leap day in a year divisible by 400', '2000-02-29', {}, '2000-02-29'],
    ['the last of a 31-day month', '2026-12-31', {}, '2026-12-31'],
    ['the first possible year', '0001-01-01', {}, '0001-01-01'],
    ['surrounding spaces trimmed', ' 2026-01-15 ', {}, '2026-01-15'],
    ['min itself', '2026-01-10', { min: '2026-01-10', max: '2026-01-20' }, '2026-01-10'],
    ['max itself', '2026-01-20', { min: '2026-01-10', max: '2026-01-20' }, '2026-01-20'],
    ['after a min in the year before', '2026-01-01', { min: '2025-12-31' }, '2026-01-01'],
    ['before a max only', '1999-12-31', { max: '2000-01-01' }, '1999-12-31'],
  ] as const)('%s: %p accepted', (_case, input, config, expected) => {
    expect(parse('date', input, config)).toEqual(value(expected))
  })

  test.each([
    ['February 29 of a common year', '2026-02-29', {}],
    ['February 29 of a century year', '1900-02-29', {}],
    ['February 30', '2026-02-30', {}],
    ['April 31', '2026-04-31', {}],
    ['month 13', '2026-13-01', {}],
    ['month 00', '2026-00-10', {}],
    ['day 00', '2026-01-00', {}],
    ['day 32', '2026-01-32', {}],
    ['year 0000', '0000-01-01', {}],
    ['no zero padding', '2026-1-5', {}],
    ['no separators', '20260105', {}],
    ['slashes', '2026/01/05', {}],
    ['a datetime', '2026-01-05T00:00:00', {}],
    ['day first', '05-01-2026', {}],
    ['a five-digit year', '12026-01-05', {}],
    ['a number', 20260105, {}],
    ['just before min', '2026-01-09', { min: '2026-01-10', max: '2026-01-20' }],
    ['just after max', '2026-01-21', { min: '2026-01-10', max: '2026-01-20' }],
    ['before a min in the year after', '2025-12-30', { min: '2025-12-31' }],
    ['just after a max only', '2000-01-02', { max: '2000-01-01' }],
  ] as const)('%s: %p rejected', (_case, input, config) => {
    expect(parse('date', input, config)).toEqual(INVALID)
  })
})

// ---------------------------------------------------------------- file

describe('file', () => {
  test.each([
    ['exactly max_size', upload('a.bin', 'application/octet-stream', 100), { max_size: 100 }],
    ['exactly the default max_size, 10 MiB', upload('a.bin', '', 10 * MIB), {}],
    ['a named empty file', upload('empty.txt', 'text/plain', 0), {}],
    ['.pdf by extension', upload('report.pdf', '', 10), { accept: '.pdf' }],
    ['.pdf by extension, any case', upload('REPORT.PDF', '', 10), { accept: '.pdf' }],
    ['.PDF accepts a lower-case name', upload('report.pdf', '', 10), { accept: '.PDF' }],
    ['a double extension', upload('backup.tar.gz', '', 10), { accept: '.tar.gz' }],
    ['image/* by type', upload('photo', 'image/png', 10), { accept: 'image/*' }],
    ['image/* by type, any case', upload('photo.jpg', 'IMAGE/JPEG', 10), { accept: 'image/*' }],
    ['an exact type', upload('doc', 'application/pdf', 10), { accept: 'application/pdf' }],
    ['an exact type, any case', upload('doc', 'application/pdf', 10), { accept: 'Application/PDF' }],
    ['either token of image/*,.pdf: the extension', upload('a.pdf', '', 10), { accept: 'image/*,.pdf' }],
    ['either token of image/*,.pdf: the type', upload('a.png', 'image/png', 10), { accept: 'image/*,.pdf' }],
    ['tokens with spaces around them', upload('a.docx', '', 10), { accept: ' .pdf , .docx ' }],
  ] as const)('%s: accepted as the upload itself', (_case, input, config) => {
    expect(parse('file', input, config)).toEqual({ kind: 'upload', upload: input })
    const parsed = parse('file', input, config)
    expect(parsed.kind === 'upload' && parsed.upload).toBe(input)
  })

  test.each([
    ['one byte over max_size', upload('a.bin', '', 101), { max_size: 100 }],
    ['one byte over the default max_size', upload('a.bin', '', 10 * MIB + 1), {}],
    ['another extension', upload('a.doc', 'application/pdf', 10), { accept: '.pdf' }],
    ['.pdf not at the end', upload('a.pdf.exe', '', 10), { accept: '.pdf' }],
    ['the extension without its dot', upload('apdf', '', 10), { accept: '.pdf' }],
    ['another type family', upload('a.txt', 'text/plain', 10), { accept: 'image/*' }],
    ['image/* with no declared type', upload('a.png', '', 10), { accept: 'image/*' }],
    ['a type that only starts like the wanted one', upload('a', 'application/pdfx', 10), { accept: 'application/pdf' }],
    ['neither token of image/*,.pdf', upload('a.txt', 'text/plain', 10), { accept: 'image/*,.pdf' }],
    ['a JSON string (files need multipart)', 'https://example.com/a.pdf', {}],
    ['a JSON object shaped like a file', { name: 'a.pdf', type: 'application/pdf', bytes: [1, 2] }, {}],
    ['a JSON number', 42, {}],
  ] as const)('%s: rejected', (_case, input, config) => {
    expect(parse('file', input, config)).toEqual(INVALID)
  })

  test.each([false, true])('an empty nameless upload (no file chosen) is empty, required %p', (required) => {
    expect(parse('file', new Upload('', 'application/octet-stream', 0, 'file-id'), {}, required)).toEqual(EMPTY)
  })

  test('the messages name the limit a person must meet', () => {
    expect(parse('file', upload('a.bin', '', 101), { max_size: 100 })).toEqual({
      kind: 'invalid',
      message: 'The file must be at most 100 bytes',
      code: 'file_too_large',
      params: { size: { bytes: 100 } },
    })
    expect(parse('file', upload('a.txt', 'text/plain', 1), { accept: 'image/*,.pdf' })).toEqual({
      kind: 'invalid',
      message: 'The file must be an image or PDF',
      code: 'file_type',
      params: { types: { fileTypes: 'image/*,.pdf' } },
    })
  })

  test.each([
    ['.pdf', 'x.PDF', '', true],
    ['.pdf', 'x.pdf.zip', 'application/zip', false],
    ['image/*', 'x', 'image/svg+xml', true],
    ['image/*', 'x.png', 'imagex/png', false],
    ['audio/*,video/*', 'x', 'video/mp4', true],
    ['text/csv', 'x.csv', 'text/csv', true],
    ['text/csv', 'x.csv', 'text/plain', false],
    ['.jpg,.jpeg,.png', 'x.JPEG', '', true],
    ['.jpg,.jpeg,.png', 'x.gif', 'image/gif', false],
  ] as const)('accepts(%p, name %p, type %p) is %p', (accept, name, type, expected) => {
    expect(accepts(accept, new Upload(name, type, 1, 'file-id'))).toBe(expected)
  })

  test.each([
    ['image/*,.pdf', 'An image or PDF'],
    ['application/pdf', 'PDF'],
    ['.pdf,application/pdf', 'PDF'],
    ['.jpg,.png,.gif', 'JPG, PNG or GIF'],
    ['audio/*', 'An audio file'],
    ['video/*, text/*', 'A video or a text file'],
    ['application/x-zip', 'ZIP'],
  ] as const)('describeAccept(%p) is %p', (accept, expected) => {
    expect(describeAccept(accept)).toBe(expected)
  })

  test.each([
    [0, '0 bytes'],
    [1, '1 byte'],
    [1023, '1023 bytes'],
    [1024, '1 KB'],
    [1536, '1.5 KB'],
    [MIB, '1 MB'],
    [10 * MIB, '10 MB'],
    [25 * MIB, '25 MB'],
  ] as const)('formatSize(%p) is %p', (bytes, expected) => {
    expect(formatSize(bytes)).toBe(expected)
  })
})
