/**
 * A stored session as its JSONL file: the header line, then every entry line in `seq` order,
 * each ending in `"\n"`, byte for byte the disk file. Read from one repeatable-read snapshot on
 * one connection, a page of rows per query, and handed on in pieces of about `CHUNK_CHARS`, so
 * that a large session is never held whole as one text (a string of tens of MiB lives in V8's
 * large-object space until a full collection) and its reader (the session loader's parser) works
 * on a page while the database already reads the next one.
 */
import type pg from 'pg'
import { SessionNotFound } from '../../errors.js'
import { databaseError, isUnavailable } from './pool.js'

/** Entry rows per query. */
export const TEXT_PAGE_ROWS = 2000

/** A piece is handed on once it holds this many characters: young garbage for V8, as the disk storage's pieces. */
const CHUNK_CHARS = 64 * 1024

const PAGE_SQL = 'SELECT seq, line FROM ss_entries WHERE tenant = $1 AND session = $2 AND seq > $3 ORDER BY seq LIMIT $4'

type PageRow = [seq: string, line: string]

/**
 * The pieces of the session's text, in order; joined they are the whole file.
 * @throws SessionNotFound, DatabaseUnavailable
 */
export async function * sessionTextChunks (pool: pg.Pool, tenant: string, session: string, pageRows = TEXT_PAGE_ROWS): AsyncGenerator<string> {
  let client: pg.PoolClient
  try {
    client = await pool.connect()
  } catch (err) {
    throw databaseError(err)
  }
  const page = async (after: string | number): Promise<PageRow[]> =>
    (await client.query<PageRow>({ text: PAGE_SQL, values: [tenant, session, after, pageRows], rowMode: 'array' })).rows
  let next: Promise<PageRow[]> | undefined
  let done = false
  let broken: unknown
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY')
    const head = await client.query<{ header: string }>('SELECT header FROM ss_sessions WHERE tenant = $1 AND id = $2', [tenant, session])
    if (head.rows[0] === undefined) throw new SessionNotFound(session)
    next = page(0)
    let parts = [head.rows[0].header, '\n']
    let chars = head.rows[0].header.length + 1
    for (;;) {
      const rows = await next
      next = undefined
      const last = rows[rows.length - 1]
      // The next page is on its way while this one is handed on.
      if (rows.length === pageRows && last !== undefined) next = page(last[0])
      for (const [, line] of rows) {
        parts.push(line, '\n')
        chars += line.length + 1
        if (chars >= CHUNK_CHARS) {
          yield parts.join('')
          parts = []
          chars = 0
        }
      }
      if (next === undefined) break
    }
    if (chars > 0) yield parts.join('')
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
