/**
 * A time as a database returns it: integer milliseconds, a number from SQLite
 * and an int8 from PostgreSQL, which Bun's client returns as a string.
 */
export type RowTime = number | string

export const timeOf = (value: RowTime): number => Number(value)
export const optionalTimeOf = (value: RowTime | null): number | null => (value === null ? null : Number(value))
