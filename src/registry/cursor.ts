/**
 * The opaque listing cursor of `GET /v1/sessions` (API.md "Sessions"): the sort key of the last
 * item returned, base64url-encoded. Listings sort by `modified` descending, then id ascending
 * (the store pages by this key), so paging stays stable while sessions are added or removed.
 */
import { createHash } from 'node:crypto'
import { InvalidCursor } from '../errors.js'
import type { ListKey } from '../storage/store.js'

/**
 * The opaque cursor of `GET /v1/search`: how many hits earlier pages held, and a digest of the
 * search it belongs to (a cursor of another search is 400).
 */
export function encodeSearchCursor (offset: number, search: string): string {
  return Buffer.from(JSON.stringify([2, offset, digestOf(search)]), 'utf8').toString('base64url')
}

/** Throws `InvalidCursor` (400) for anything `encodeSearchCursor` did not produce for `search`. */
export function decodeSearchCursor (cursor: string, search: string): number {
  const parsed = cursorJson(cursor)
  if (!Array.isArray(parsed) || parsed.length !== 3 || parsed[0] !== 2 || !Number.isSafeInteger(parsed[1]) ||
    (parsed[1] as number) < 0 || parsed[2] !== digestOf(search)) {
    throw new InvalidCursor(JSON.stringify(cursor.slice(0, 64)))
  }
  return parsed[1] as number
}

/** The JSON a cursor holds (base64url); `InvalidCursor` (400) for anything else. */
function cursorJson (cursor: string): unknown {
  try {
    if (!/^[A-Za-z0-9_-]+$/.test(cursor)) throw new Error('not base64url')
    return JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'))
  } catch {
    throw new InvalidCursor(JSON.stringify(cursor.slice(0, 64)))
  }
}

const digestOf = (text: string): string => createHash('sha256').update(text).digest('base64url').slice(0, 16)

export function encodeCursor (key: ListKey): string {
  return Buffer.from(JSON.stringify([1, key.modifiedMs, key.id]), 'utf8').toString('base64url')
}

/** Throws `InvalidCursor` (400) for anything `encodeCursor` did not produce. */
export function decodeCursor (cursor: string): ListKey {
  const parsed = cursorJson(cursor)
  if (!Array.isArray(parsed) || parsed.length !== 3 || parsed[0] !== 1 ||
    typeof parsed[1] !== 'number' || !Number.isFinite(parsed[1]) || typeof parsed[2] !== 'string') {
    throw new InvalidCursor(JSON.stringify(cursor.slice(0, 64)))
  }
  return { modifiedMs: parsed[1], id: parsed[2] }
}
