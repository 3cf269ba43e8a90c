/**
 * Sessions held in memory under the deferral rule have no file yet, so a prefix read of the
 * session directory (SPEC.md §11.2) cannot see them; `GET /v1/sessions/recent` lists them too,
 * as the file they would become: named from the first `PREFIX_READ_BYTES` of their JSONL form,
 * like a header-only or short session file (API.md "RecentSession": header-only included).
 */
import { basename, dirname, resolve } from 'node:path'
import { isObject } from '../session/guards.js'
import { parseJsonlLenient } from '../session/parser.js'
import { serializeRecord } from '../session/persist-transform.js'
import { sanitizeName } from '../session/discovery.js'
import { PREFIX_READ_BYTES, type FileRecord } from '../session/types.js'
import type { OpenSession } from './open-session.js'

/** Display names longer than this many code units are cut (SPEC.md §1.3). */
const NAME_MAX_UNITS = 40

export interface RecentItem {
  id: string
  name: string
  /** Epoch ms. */
  modifiedMs: number
}

/** The records a prefix read of the session's future file would see. */
function prefixRecords (slot: OpenSession): FileRecord[] {
  const m = slot.manager
  let text = serializeRecord(m.getHeader())
  for (let i = 0; i < m.entryCount() && Buffer.byteLength(text) < PREFIX_READ_BYTES; i++) {
    text += serializeRecord(m.entriesSlice(i, i + 1)[0] as FileRecord)
  }
  return parseJsonlLenient(Buffer.from(text).subarray(0, PREFIX_READ_BYTES).toString('utf8'))
}

/** Text of the first `user` message: string content, or the first block with a string `text`. */
function firstUserText (records: readonly FileRecord[]): string {
  for (const record of records.slice(1)) {
    const message = record.type === 'message' && isObject(record.message) ? record.message : undefined
    if (message?.role !== 'user') continue
    if (typeof message.content === 'string') return message.content
    const block = Array.isArray(message.content)
      ? message.content.find((b): b is { text: string } => isObject(b) && typeof b.text === 'string')
      : undefined
    return block?.text ?? ''
  }
  return ''
}

/** SPEC.md §11.2: title → first user text (only without a title) → id → file name; then cut. */
function displayName (records: readonly FileRecord[], file: string): string {
  const header = records[0] ?? {}
  const hasTitle = typeof header.title === 'string'
  const candidates = [hasTitle ? header.title as string : '', hasTitle ? '' : firstUserText(records), String(header.id ?? '')]
  const full = candidates.map(sanitizeName).find((name) => name !== '') ?? basename(file, '.jsonl')
  return full.length <= NAME_MAX_UNITS ? full : full.slice(0, NAME_MAX_UNITS - 1) + '…'
}

/** Recent items of the open sessions in `dir` that have no file yet. */
export function deferredRecent (slots: Iterable<OpenSession>, dir: string): RecentItem[] {
  const items: RecentItem[] = []
  for (const slot of slots) {
    const file = slot.manager.getSessionFile()
    if (slot.deleted || slot.manager.isFlushed() || file === undefined || dirname(resolve(file)) !== resolve(dir)) continue
    items.push({ id: slot.id, name: displayName(prefixRecords(slot), file), modifiedMs: slot.modifiedMs })
  }
  return items
}
