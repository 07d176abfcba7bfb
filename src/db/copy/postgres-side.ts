// Types only: `Bun.SQL` is read when a PostgreSQL end is opened (see db/postgres/connect.ts).
import type { SQL, TransactionSQL } from 'bun'
import { DatabaseOpenError, DatabaseUnreachable } from '../driver.ts'
import { describeFailure, isConnectionFailure, redact, secretsOf } from '../postgres/connect.ts'
import { copyText, quote } from './escaping.ts'
import { type Endpoint, notCopied, type Row, type TableColumns, type WritableSide } from './sides.ts'

/** One connection to the database at `endpoint`, that has answered; PGPASSWORD and the other PG* variables fill in what the URL leaves out. */
export async function connectPostgres(endpoint: Extract<Endpoint, { kind: 'postgres' }>): Promise<SQL> {
  const secrets = secretsOfEndpoint(endpoint)
  let sql: SQL
  try {
    const database = decodeURIComponent(new URL(endpoint.url).pathname.slice(1))
    // The URL's database, explicitly: PGDATABASE would otherwise win over it.
    sql = new Bun.SQL(endpoint.url, { ...(database ? { database } : {}), max: 1, connectionTimeout: 10 })
  } catch (error) {
    throw new DatabaseOpenError(
      `Cannot use the PostgreSQL database at ${endpoint.location}: ${redact(describeFailure(error), secrets)}`,
    )
  }
  try {
    await sql.unsafe('SELECT 1')
  } catch (error) {
    await sql.close({ timeout: 0 }).catch(() => {})
    const why = `Cannot reach the PostgreSQL database at ${endpoint.location}: ${redact(describeFailure(error), secrets)}`
    throw isConnectionFailure(error) ? new DatabaseUnreachable(why) : new DatabaseOpenError(why)
  }
  return sql
}

export async function postgresSchema(tx: SQL): Promise<{ version: number }> {
  const [table] = await tx.unsafe(`SELECT to_regclass('intake_schema') IS NOT NULL AS present`)
  if (!table.present) return { version: 0 }
  const [row] = await tx.unsafe('SELECT version FROM intake_schema')
  return { version: row ? Number(row.version) : 0 }
}

export async function postgresTableNames(tx: SQL): Promise<string[]> {
  const rows = await tx.unsafe(`SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename`)
  return (rows as Array<{ tablename: string }>)
    .map((row) => row.tablename)
    .filter((name) => !notCopied('postgres', name))
}

export const postgresCount = async (tx: SQL, table: string) =>
  Number((await tx.unsafe(`SELECT count(*) AS n FROM ${quote(table)}`))[0].n)

/** A table's column types and primary key, as PostgreSQL holds them. */
interface PostgresShape {
  types: Map<string, string>
  primaryKey: string[]
}

/**
 * Bun's client takes and gives bytea in binary only in statements with
 * parameters; elsewhere (a cursor's FETCH, COPY's text format) as hex text,
 * twice the bytes and several times slower. So tables with bytea (file
 * chunks) are read by primary key a page at a time and written with
 * parameters; the others through a cursor and COPY.
 */
export function postgresSide(tx: TransactionSQL): WritableSide {
  let cursors = 0
  const shapes = new Map<string, Promise<PostgresShape>>()
  const shapeOf = (table: string) => {
    let shape = shapes.get(table)
    if (!shape) {
      shape = (async () => {
        const columns = (await tx.unsafe(
          `SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1`,
          [table],
        )) as Array<{ column_name: string; data_type: string }>
        const key = (await tx.unsafe(
          `SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
            WHERE i.indrelid = to_regclass($1) AND i.indisprimary ORDER BY array_position(i.indkey::int2[], a.attnum)`,
          [quote(table)],
        )) as Array<{ attname: string }>
        return {
          types: new Map(columns.map((column) => [column.column_name, column.data_type])),
          primaryKey: key.map((column) => column.attname),
        }
      })()
      shapes.set(table, shape)
    }
    return shape
  }

  /** Rows by primary key, a page at a time, each page a statement with parameters. */
  async function* byPrimaryKey(table: string, columns: string[], key: string[], size: number): AsyncGenerator<Row[]> {
    const selected = [...columns, ...key.filter((column) => !columns.includes(column))]
    const keyAt = key.map((column) => selected.indexOf(column))
    const select = `SELECT ${selected.map(quote).join(', ')} FROM ${quote(table)}`
    const order = `ORDER BY ${key.map(quote).join(', ')} LIMIT ${size}`
    const after = `WHERE (${key.map(quote).join(', ')}) > (${key.map((_, i) => `$${i + 1}`).join(', ')})`
    let last: unknown[] | undefined
    for (;;) {
      const rows = (await (last
        ? tx.unsafe(`${select} ${after} ${order}`, last)
        : tx.unsafe(`${select} ${order}`)
      ).values()) as Row[]
      if (rows.length === 0) return
      last = keyAt.map((at) => rows.at(-1)![at])
      yield rows.map((row) => row.slice(0, columns.length))
      if (rows.length < size) return
    }
  }

  /** Rows through a cursor in the transaction: the server hands them over a batch at a time. */
  async function* throughCursor(
    table: string,
    columns: string[],
    size: number,
    orderBy?: string,
  ): AsyncGenerator<Row[]> {
    const cursor = `copy_${++cursors}`
    await tx.unsafe(
      `DECLARE ${cursor} NO SCROLL CURSOR FOR SELECT ${columns.map(quote).join(', ')} FROM ${quote(table)}${orderBy ? ` ORDER BY ${orderBy}` : ''}`,
    )
    for (;;) {
      const rows = (await tx.unsafe(`FETCH ${size} FROM ${cursor}`).values()) as Row[]
      if (rows.length === 0) break
      yield rows
    }
    await tx.unsafe(`CLOSE ${cursor}`)
  }

  return {
    kind: 'postgres',
    async tables() {
      const rows = (await tx.unsafe(
        `SELECT table_name, column_name, is_nullable, column_default FROM information_schema.columns
          WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position`,
      )) as Array<{ table_name: string; column_name: string; is_nullable: string; column_default: string | null }>
      const tables = new Map<string, TableColumns>()
      for (const table of await postgresTableNames(tx)) {
        const columns = rows.filter((row) => row.table_name === table)
        tables.set(table, {
          names: columns.map((column) => column.column_name),
          required: columns
            .filter((column) => column.is_nullable === 'NO' && column.column_default === null)
            .map((column) => column.column_name),
        })
      }
      return tables
    },
    count: (table) => postgresCount(tx, table),
    fileBytes: async () =>
      Number((await tx.unsafe('SELECT coalesce(sum(octet_length(bytes)), 0) AS n FROM file_chunks'))[0].n),
    async *batches(table, columns, { size, orderBy }) {
      const { types, primaryKey } = await shapeOf(table)
      // int8 arrives as text: times and sizes are numbers everywhere else.
      const bigint = columns.map((column) => types.get(column) === 'bigint')
      const binary = columns.some((column) => types.get(column) === 'bytea') && primaryKey.length > 0
      // By primary key: the one order asked for (file_id, seq) is that key.
      const pages = binary
        ? byPrimaryKey(table, columns, primaryKey, size)
        : throughCursor(table, columns, size, orderBy)
      for await (const rows of pages) {
        for (const row of rows)
          for (let i = 0; i < row.length; i++) if (bigint[i] && row[i] !== null) row[i] = Number(row[i])
        yield rows
      }
    },
    async load(table, columns, fill, batches, written) {
      const { types } = await shapeOf(table)
      const names = [...columns, ...Object.keys(fill)]
      const list = names.map(quote).join(', ')
      const filled = Object.values(fill)
      let send: (batch: Row[]) => Promise<unknown>
      if (names.some((name) => types.get(name) === 'bytea')) {
        send = (batch) => {
          const params = batch.flatMap((row) => [...row, ...filled])
          const tuples = batch.map((_, r) => `(${names.map((_, c) => `$${r * names.length + c + 1}`).join(', ')})`)
          return tx.unsafe(`INSERT INTO ${quote(table)} (${list}) VALUES ${tuples.join(', ')}`, params)
        }
      } else {
        // COPY in its text format, one per batch: the server checks foreign
        // keys at the end of each statement and holds those checks until then.
        const copy = `COPY ${quote(table)} (${list}) FROM STDIN`
        const filledText = filled.map(copyText)
        send = async (batch) => {
          let text = ''
          for (const row of batch) text += `${[...row.map(copyText), ...filledText].join('\t')}\n`
          const stream = tx.unsafe(copy).writable().getWriter()
          try {
            await stream.write(text)
            await stream.close()
          } catch (error) {
            await stream.abort(error).catch(() => {})
            throw error
          }
        }
      }
      // The next batch is read while the server stores this one.
      let stored: Promise<void> = Promise.resolve()
      for await (const batch of batches) {
        await stored
        stored = send(batch).then(() => written(batch))
        // Awaited with the next batch or after the last; a failure of the reader meanwhile ends the transaction.
        stored.catch(() => {})
      }
      await stored
    },
    async eventMarks() {
      // Every transaction id given out before this snapshot is below its xmax, so every position this store
      // gave an event in it is below xmax + floor (the floor is set only by a copy, before any event is written);
      // copied events are at or below the floor.
      const [marks] = await tx.unsafe(
        `SELECT greatest(coalesce((SELECT floor FROM event_positions), 0) + pg_snapshot_xmax(pg_current_snapshot())::text::bigint,
                         coalesce((SELECT max(position) FROM events), 0)) AS position,
                coalesce((SELECT max(seq) FROM events), 0) AS seq`,
      )
      return { position: Number(marks.position), seq: Math.max(Number(marks.seq), await sequenceValue()) }
    },
    async placeNewEventsAfter(marks) {
      await tx.unsafe(
        'INSERT INTO event_positions (id, floor) VALUES (1, $1) ON CONFLICT (id) DO UPDATE SET floor = greatest(event_positions.floor, excluded.floor)',
        [marks.position],
      )
      // Rows copied with their seq leave the sequence where it was.
      if (marks.seq > (await sequenceValue()))
        await tx.unsafe(`SELECT setval(pg_get_serial_sequence('events', 'seq'), $1)`, [marks.seq])
    },
  }

  /** The largest seq the events' sequence has given (0 before the first), though that event be gone. */
  async function sequenceValue(): Promise<number> {
    const [{ name }] = await tx.unsafe(`SELECT pg_get_serial_sequence('events', 'seq') AS name`)
    const [row] = await tx.unsafe(`SELECT CASE WHEN is_called THEN last_value ELSE 0 END AS value FROM ${name}`)
    return Number(row.value)
  }
}

/** What may not be shown of an endpoint: its URL's password, and PGPASSWORD. */
export const secretsOfEndpoint = (endpoint: Endpoint): string[] =>
  endpoint.kind === 'postgres' ? secretsOf(endpoint.url) : []
