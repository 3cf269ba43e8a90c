/**
 * Reads of `PgSessionStorage`'s files from the database, by what the catalog knows of them
 * (pg-catalog.ts): a plain file is its bytes; a session file is its header line and its entry
 * lines in `seq` order. A file gone from the database reads as `node:fs` would: ENOENT.
 */
import type pg from 'pg'
import { hasCode } from '../../errors.js'
import { fsError } from '../path-tree.js'
import { decodeUtf8 } from '../storage-helpers.js'
import type { CatalogFile } from './pg-catalog.js'
import type { PgSessionLog } from './session-log.js'
import { sessionText, sessionTextChunks } from './session-text.js'
import { fileBytes } from './stored-files.js'

/** Entry lines read per query when a prefix of a session is wanted. */
const PREFIX_PAGE = 64

/** A session deleted under a read (SS_SESSION_NOT_FOUND) as a file reader sees it: ENOENT. */
function missingAsEnoent (err: unknown, path: string): unknown {
  return hasCode(err, 'SS_SESSION_NOT_FOUND') ? fsError('ENOENT', 'open', path) : err
}

/** The bytes of the plain file at `path` (`rel`), at most `maxBytes`. @throws ENOENT */
async function plainBytes (pool: pg.Pool, path: string, rel: string, maxBytes?: number): Promise<Buffer> {
  const bytes = await fileBytes(pool, rel, maxBytes)
  if (bytes === undefined) throw fsError('ENOENT', 'open', path)
  return bytes
}

/** The whole text of the file at `path` (`rel`). @throws ENOENT */
export async function fileText (pool: pg.Pool, path: string, rel: string, file: CatalogFile): Promise<string> {
  if (file.stored.kind === 'file') return (await plainBytes(pool, path, rel)).toString('utf8')
  try {
    return await sessionText(pool, file.stored.tenant, file.stored.id)
  } catch (err) {
    throw missingAsEnoent(err, path)
  }
}

/**
 * The file in pieces (`fileText` joined): a session's rows a page per query in one snapshot,
 * handed on while the next page is read (session-text.ts).
 */
export async function * fileTextChunks (pool: pg.Pool, path: string, rel: string, file: CatalogFile): AsyncIterable<string> {
  if (file.stored.kind === 'file') {
    yield (await plainBytes(pool, path, rel)).toString('utf8')
    return
  }
  try {
    yield * sessionTextChunks(pool, file.stored.tenant, file.stored.id)
  } catch (err) {
    throw missingAsEnoent(err, path)
  }
}

/** The first `maxBytes` bytes of the file, decoded; a session's entries are read a page at a time. */
export async function fileTextPrefix (pool: pg.Pool, log: PgSessionLog, path: string, rel: string, file: CatalogFile, maxBytes: number): Promise<string> {
  if (file.stored.kind === 'file') return decodeUtf8(await plainBytes(pool, path, rel, maxBytes))
  const { tenant, id } = file.stored
  const state = await log.state(tenant, id)
  if (state === undefined) throw fsError('ENOENT', 'open', path)
  const parts = [state.header, '\n']
  let bytes = Buffer.byteLength(state.header, 'utf8') + 1
  for (let after = 0; bytes < maxBytes;) {
    const page = await log.read(tenant, id, after, PREFIX_PAGE)
    for (const e of page) {
      parts.push(e.line, '\n')
      bytes += Buffer.byteLength(e.line, 'utf8') + 1
      after = e.seq
    }
    if (page.length < PREFIX_PAGE) break
  }
  return decodeUtf8(Buffer.from(parts.join(''), 'utf8').subarray(0, maxBytes))
}
