/**
 * Retention of one tenant: its sessions unchanged for `days` days are deleted through the
 * registry (open sessions close, live streams get `deleted`, `GET /v1/events` tells dashboards),
 * oldest first; with `keepLabelled`, a session that holds a label (SPEC.md §3.5: its label map,
 * replayed from its `label` entries, is not empty) stays however old. The deleted sessions' blobs
 * go with the next collection (blob-gc.ts).
 */
import { SessionNotFound } from '../errors.js'
import type { SessionRegistry } from '../registry/session-registry.js'
import type { ListKey, SessionStore } from '../storage/store.js'

export interface RetentionOptions {
  store: SessionStore
  registry: SessionRegistry
  tenant: string
  days: number
  keepLabelled: boolean
}

/** What one application of retention did (logged, counted in `/metrics`). */
export interface RetentionReport {
  /** Sessions older than the cut-off. */
  examined: number
  deleted: number
  /** Kept for holding a label. */
  keptLabelled: number
}

/** Sessions read per listing page. */
const PAGE = 200
const DAY_MS = 86_400_000

/** True when the session's label map is not empty after replaying its `label` entries in order. */
export async function isLabelled (store: SessionStore, tenant: string, id: string): Promise<boolean> {
  const stored = await store.read(tenant, id)
  if (stored === undefined) return false
  const labels = new Map<string, string>()
  let rest = ''
  const take = (line: string): void => {
    if (!line.includes('label') && !line.includes('\\u')) return
    let record: { type?: unknown, targetId?: unknown, label?: unknown }
    try {
      record = JSON.parse(line) as typeof record
    } catch {
      return
    }
    if (record?.type !== 'label' || typeof record.targetId !== 'string') return
    if (typeof record.label === 'string' && record.label !== '') labels.set(record.targetId, record.label)
    else labels.delete(record.targetId)
  }
  for await (const chunk of stored.text) {
    const lines = (rest + chunk).split('\n')
    rest = lines.pop() ?? ''
    lines.forEach(take)
  }
  take(rest)
  return labels.size > 0
}

/** Deletes `tenant`'s sessions unchanged since `days` days ago (none when `days` is 0). */
export async function applyRetention (options: RetentionOptions): Promise<RetentionReport> {
  const { store, registry, tenant, days, keepLabelled } = options
  const report: RetentionReport = { examined: 0, deleted: 0, keptLabelled: 0 }
  if (days <= 0) return report
  const cutoff = Date.now() - days * DAY_MS
  // The listing is newest first: every item after this key was changed before the cut-off.
  let after: ListKey = { modifiedMs: cutoff, id: '' }
  for (;;) {
    const page = await store.list(tenant, { includeEmpty: true, after, limit: PAGE })
    for (const item of page.items) {
      report.examined++
      if (keepLabelled && await isLabelled(store, tenant, item.id)) report.keptLabelled++
      else if (await deleteIfOld(store, registry, tenant, item.id, cutoff)) report.deleted++
    }
    const last = page.items[page.items.length - 1]
    if (!page.more || last === undefined) return report
    after = { modifiedMs: last.modifiedMs, id: last.id }
  }
}

/** Deletes the session unless it changed since the listing read it; false when it did or is gone. */
async function deleteIfOld (store: SessionStore, registry: SessionRegistry, tenant: string, id: string, cutoff: number): Promise<boolean> {
  const now = await store.info(tenant, id)
  if (now === undefined || now.modifiedMs >= cutoff) return false
  try {
    await registry.delete(id)
    return true
  } catch (err) {
    if (err instanceof SessionNotFound) return false
    throw err
  }
}
