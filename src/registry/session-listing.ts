/**
 * `GET /v1/sessions` and `GET /v1/sessions/recent` (API.md "Sessions"): pages from the store's
 * index by keyset (`modified` descending, then id), however many sessions the tenant has.
 */
import { assertValidCwd } from '../session/cwd.js'
import { decodeCursor, encodeCursor } from './cursor.js'
import { infoView, type RegistryCore } from './registry-core.js'
import type { RecentSessionView, SessionList } from './types.js'

export interface ListQuery {
  cwd?: string
  /** Default 50, at most 1000. */
  limit?: number
  cursor?: string
  includeEmpty?: boolean
}

export async function list (core: RegistryCore, query: ListQuery): Promise<SessionList> {
  const limit = Math.min(Math.max(query.limit ?? 50, 1), 1000)
  const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor)
  if (query.cwd !== undefined) assertValidCwd(query.cwd)
  const page = await core.store.list(core.tenant, { cwd: query.cwd, includeEmpty: query.includeEmpty === true, after, limit })
  const last = page.items[page.items.length - 1]
  return {
    sessions: page.items.map(infoView),
    nextCursor: page.more && last !== undefined ? encodeCursor({ modifiedMs: last.modifiedMs, id: last.id }) : null,
  }
}

/** The newest sessions of `cwd` (SPEC.md §11.2 names), header-only and unsaved ones included; default 3. */
export async function recent (core: RegistryCore, cwd: string, limit = 3): Promise<RecentSessionView[]> {
  assertValidCwd(cwd)
  const items = await core.store.recent(core.tenant, cwd, Math.min(Math.max(limit, 1), 1000))
  return items.map((r) => ({ id: r.id, name: r.name, modified: new Date(r.modifiedMs).toISOString() }))
}
