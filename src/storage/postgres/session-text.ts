/**
 * A stored session as its JSONL file: the header line, then every entry line in `seq` order,
 * each ending in `"\n"`, byte for byte the disk file. Read from one repeatable-read snapshot on
 * one connection, a page of rows per query. PostgreSQL joins each run of `PIECE_ROWS` lines of a
 * page into one text, so the driver decodes a few values per page instead of a row object per
 * entry, and each value stays small enough (tens of KiB) to be young garbage for V8 and to
 * arrive without the driver copying a large message together. The next page is asked for as
 * soon as a page arrives, so that the database reads it while the reader (the session loader's
 * parser) works on the one before.
 */
import type pg from 'pg'
import { SessionNotFound } from '../../errors.js'
import { databaseError, isUnavailable } from './pool.js'

/** Entry rows per query. */
export const TEXT_PAGE_ROWS = 5000

/** Entry lines joined into one value of a page. */
const PIECE_ROWS = 100

/**
 * One page as pieces in order: how many rows each holds, the `seq` of its last, and its lines
 * joined, each followed by `"\n"`. The inner ORDER BY … LIMIT picks the page by the primary key;
 * the aggregate's own ORDER BY fixes the order of the lines within a piece, the outer one the
 * order of the pieces. A page past the last row has no pieces.
 */
const PAGE_SQL = `SELECT count(*)::int AS rows, max(seq)::text AS last, string_agg(line, E'\\n' ORDER BY seq) || E'\\n' AS text
  FROM (SELECT seq, line, (row_number() OVER (ORDER BY seq) - 1) / $5 AS piece
    FROM (SELECT seq, line FROM ss_entries WHERE tenant = $1 AND session = $2 AND seq > $3 ORDER BY seq LIMIT $4) page) numbered
  GROUP BY piece ORDER BY piece`

type Piece = [rows: number, last: string, text: string]

/**
 * The pieces of the session's text, in order, a page at a time; joined they are the whole file.
 * @throws SessionNotFound, DatabaseUnavailable
 */
export async function * sessionTextChunks (pool: pg.Pool, tenant: string, session: string, pageRows = TEXT_PAGE_ROWS): AsyncGenerator<string> {
  let client: pg.PoolClient
  try {
    client = await pool.connect()
  } catch (err) {
    throw databaseError(err)
  }
  const page = async (after: string | number): Promise<Piece[]> =>
    (await client.query<Piece>({ text: PAGE_SQL, values: [tenant, session, after, pageRows, PIECE_ROWS], rowMode: 'array' })).rows
  let next: Promise<Piece[]> | undefined
  let done = false
  let broken: unknown
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY')
    const head = await client.query<{ header: string }>('SELECT header FROM ss_sessions WHERE tenant = $1 AND id = $2', [tenant, session])
    if (head.rows[0] === undefined) throw new SessionNotFound(session)
    next = page(0)
    yield `${head.rows[0].header}\n`
    for (;;) {
      const pieces = await next
      next = undefined
      let rows = 0
      for (const [count] of pieces) rows += count
      const last = pieces[pieces.length - 1]
      // The next page is on its way while this one is handed on.
      if (rows === pageRows && last !== undefined) next = page(last[1])
      for (const [, , text] of pieces) yield text
      if (next === undefined) break
    }
    await client.query('COMMIT')
    done = true
  } catch (err) {
    if (isUnavailable(err)) broken = err
    throw databaseError(err)
  } finally {
    // A reader that stopped early: the page in flight is awaited before the connection goes back.
    if (next !== undefined) await next.catch((err: unknown) => { if (isUnavailable(err)) broken = err })
    if (!done && broken === undefined) await client.query('ROLLBACK').catch((err: unknown) => { broken = err })
    client.release(broken instanceof Error ? broken : broken === undefined ? undefined : true)
  }
}

/** The whole text of the session (`sessionTextChunks` joined). @throws SessionNotFound, DatabaseUnavailable */
export async function sessionText (pool: pg.Pool, tenant: string, session: string, pageRows = TEXT_PAGE_ROWS): Promise<string> {
  const pieces: string[] = []
  for await (const piece of sessionTextChunks(pool, tenant, session, pageRows)) pieces.push(piece)
  return pieces.join('')
}
