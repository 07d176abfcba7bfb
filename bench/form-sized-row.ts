/**
 * The row both write limits commit (bench/write-limit.ts on SQLite,
 * bench/pg-write-limit.ts on PostgreSQL): about the size of a form row, a
 * ULID key and a few hundred bytes of JSON. One definition, so the two limits
 * measure the same work.
 */
export const FORM_SIZED_BODY = JSON.stringify({
  title: 'Book the team dinner',
  description: 'Pick what suits you; we book on Friday.',
  fields: Array.from({ length: 5 }, (_, i) => ({
    key: `field_${i}`,
    type: 'text',
    label: `Field ${i}`,
    required: i === 0,
    config: {},
  })),
  context: { thread: 'T-1234' },
})
