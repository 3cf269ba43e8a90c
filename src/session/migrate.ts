/**
 * File versions and the in-memory migrations v1 → v2 → v3 (SPEC.md §4). No I/O: the manager
 * persists the migrated records itself (§4.4).
 */
import { SessionVersionInvalid, SessionVersionTooNew } from '../errors.js'
import { isObject } from './guards.js'
import { createEntryId } from './ids.js'
import { isEntry } from './tree.js'
import { CURRENT_SESSION_VERSION, type FileRecord } from './types.js'

/**
 * The header's `version` as stored, with absent or `null` read as 1. Any other value is
 * returned unchanged (possibly not a valid version: see `assertSupportedVersion`).
 * @see SPEC.md §4.1
 */
export function fileVersion (header: FileRecord): unknown {
  const v = header.version
  return v === undefined || v === null ? 1 : v
}

/**
 * Returns the file version (an integer 1…3) or throws: `SessionVersionInvalid` when it is not
 * an integer ≥ 1, `SessionVersionTooNew` when it is above `CURRENT_SESSION_VERSION`. Both
 * messages name `path` and the value (JSON form, so `"3"` and `3` differ).
 * @see SPEC.md §4.1
 */
export function assertSupportedVersion (path: string, header: FileRecord): number {
  const v = fileVersion(header)
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1) {
    throw new SessionVersionInvalid(path, describe(v))
  }
  if (v > CURRENT_SESSION_VERSION) throw new SessionVersionTooNew(path, describe(v))
  return v
}

function describe (v: unknown): string {
  try {
    return JSON.stringify(v) ?? String(v)
  } catch {
    return String(v)
  }
}

/**
 * Migrates parsed records (header at index 0) to the current version, in place. Returns true
 * when any step ran, i.e. the caller must persist the result. Records without a header of type
 * `"session"` are left alone (returns false). An unsupported version throws as
 * `assertSupportedVersion` does, naming `path`.
 * @see SPEC.md §4.2, §4.3, §5.4
 */
export function migrateSessionEntries (records: FileRecord[], path = '(in-memory records)'): boolean {
  const header = records[0]
  if (header === undefined || header.type !== 'session') return false
  const version = assertSupportedVersion(path, header)
  if (version >= CURRENT_SESSION_VERSION) return false
  if (version < 2) migrateV1ToV2(records)
  migrateV2ToV3(records)
  return true
}

/**
 * v1 → v2: one forward pass giving every non-header record whose `type` is not `"session"` a
 * fresh id chained to the previous one, and turning `firstKeptEntryIndex` into
 * `firstKeptEntryId`.
 * @see SPEC.md §4.2
 */
function migrateV1ToV2 (records: FileRecord[]): void {
  records[0]!.version = 2
  const assigned = new Set<string>()
  const idAt: Array<string | undefined> = []
  let previous: string | null = null
  for (let i = 1; i < records.length; i++) {
    const record = records[i]!
    if (record.type === 'session') continue
    const id = createEntryId((candidate) => assigned.has(candidate))
    assigned.add(id)
    idAt[i] = id
    record.id = id
    record.parentId = previous
    previous = id
    if (record.type === 'compaction' && Object.hasOwn(record, 'firstKeptEntryIndex')) {
      convertFirstKeptIndex(record, i, idAt)
    }
  }
}

/** Index `i` with `1 ≤ i ≤ own` selects the id assigned to record `i`; anything else selects none. */
function convertFirstKeptIndex (record: FileRecord, own: number, idAt: Array<string | undefined>): void {
  const i = record.firstKeptEntryIndex
  const kept = typeof i === 'number' && Number.isInteger(i) && i >= 1 && i <= own ? idAt[i] : undefined
  if (kept === undefined) delete record.firstKeptEntryId
  else record.firstKeptEntryId = kept
  delete record.firstKeptEntryIndex
}

/**
 * v2 → v3: role `hookMessage` becomes `custom` on every `message` entry; opaque records (§5.4)
 * are not touched.
 * @see SPEC.md §4.3
 */
function migrateV2ToV3 (records: FileRecord[]): void {
  records[0]!.version = 3
  for (let i = 1; i < records.length; i++) {
    const record = records[i]!
    if (!isEntry(record) || record.type !== 'message') continue
    const message = record.message
    if (isObject(message) && message.role === 'hookMessage') message.role = 'custom'
  }
}
