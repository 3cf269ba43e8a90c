/**
 * Headers as answers show them. Files written by earlier builds (and branched sessions of the
 * session model as SPEC.md first described it) hold the parent's absolute file path in
 * `parentSession`; an answer never names a server path (docs/compatibility.md), so a path inside
 * `DATA_DIR` is shown as the parent's session id, read from its file name `<fileTs>_<id>.jsonl`.
 * The file itself is left as it is.
 */
import { basename, isAbsolute, relative } from 'node:path'
import type { FileRecord } from './types.js'

/** `<fileTs>_<id>.jsonl`: the session id after the first `_`. */
const FILE_NAME_RE = /^[^_]*_(.+)\.jsonl$/

/** The parent marker to show for `value`: itself, unless it is a path inside `dataDir`. */
export function publicParentSession (value: string, dataDir: string): string | undefined {
  if (!isAbsolute(value)) return value
  const rel = relative(dataDir, value)
  if (rel.startsWith('..') || isAbsolute(rel)) return value
  return FILE_NAME_RE.exec(basename(value))?.[1]
}

/** `header` itself, or a copy whose server-path `parentSession` is replaced (or dropped). */
export function publicHeader<T extends FileRecord> (header: T, dataDir: string): T {
  const parent = header.parentSession
  if (typeof parent !== 'string') return header
  const shown = publicParentSession(parent, dataDir)
  if (shown === parent) return header
  const copy: FileRecord = { ...header }
  if (shown === undefined) delete copy.parentSession
  else copy.parentSession = shown
  return copy as T
}
