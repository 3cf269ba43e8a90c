/**
 * The records of the new session that `fork` and `createBranchedSession` make (SPEC.md §6.3),
 * as pure functions: the manager writes them to a new file, the service's registry stores them
 * as a new session.
 */
import { createEntryId, createSessionId, nowIso } from './ids.js'
import { walkToRoot, type EntryIndex } from './tree.js'
import type { FileRecord, SessionEntryBase } from './types.js'

/**
 * §6.3 fork: a new header `{type, version: 3, id, title, timestamp, cwd, parentSession: old id}`
 * (a missing title omitted; other old header keys not carried over), then every other record.
 */
export function forkedRecords (records: readonly FileRecord[], cwd: string, title: string | undefined, id = createSessionId()): FileRecord[] {
  const old = records[0] as FileRecord
  const header: FileRecord = { type: 'session', version: 3, id, title, timestamp: nowIso(), cwd, parentSession: old.id }
  if (header.title === undefined) delete header.title
  return [header, ...records.slice(1)]
}

/**
 * §6.3 createBranchedSession: the path root→`leafId` without label entries, then, for every
 * target on it that is labelled now, a fresh `label` entry chained after the last kept one (in
 * label-map order), under a new header `{type, version: 3, id, timestamp, cwd}` with
 * `parentSession` when given. `leafId` must be indexed.
 */
export function branchedRecords (byId: EntryIndex, labels: ReadonlyMap<string, string>, leafId: string,
  cwd: string, parentSession: string | undefined, id = createSessionId()): FileRecord[] {
  const kept: SessionEntryBase[] = walkToRoot(byId, leafId).filter((e) => e.type !== 'label')
  const ids = new Set(kept.map((e) => e.id))
  let parentId: string | null = kept.length > 0 ? (kept[kept.length - 1] as SessionEntryBase).id : null
  for (const [targetId, label] of labels) {
    if (!ids.has(targetId)) continue
    const labelId = createEntryId((candidate) => ids.has(candidate))
    ids.add(labelId)
    kept.push({ type: 'label', id: labelId, parentId, timestamp: nowIso(), targetId, label })
    parentId = labelId
  }
  const header: FileRecord = { type: 'session', version: 3, id, timestamp: nowIso(), cwd }
  if (parentSession !== undefined) header.parentSession = parentSession
  return [header, ...kept]
}
