/**
 * The opaque listing cursor of `GET /v1/sessions` (API.md "Sessions"): the sort key of the last
 * item returned, base64url-encoded. Listings sort by `modified` descending, then id ascending
 * (the store pages by this key), so paging stays stable while sessions are added or removed.
 */
import { InvalidCursor } from '../errors.js'
import type { ListKey } from '../storage/store.js'

export function encodeCursor (key: ListKey): string {
  return Buffer.from(JSON.stringify([1, key.modifiedMs, key.id]), 'utf8').toString('base64url')
}

/** Throws `InvalidCursor` (400) for anything `encodeCursor` did not produce. */
export function decodeCursor (cursor: string): ListKey {
  let parsed: unknown
  try {
    if (!/^[A-Za-z0-9_-]+$/.test(cursor)) throw new Error('not base64url')
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'))
  } catch {
    throw new InvalidCursor(JSON.stringify(cursor.slice(0, 64)))
  }
  if (!Array.isArray(parsed) || parsed.length !== 3 || parsed[0] !== 1 ||
    typeof parsed[1] !== 'number' || !Number.isFinite(parsed[1]) || typeof parsed[2] !== 'string') {
    throw new InvalidCursor(JSON.stringify(cursor.slice(0, 64)))
  }
  return { modifiedMs: parsed[1], id: parsed[2] }
}
