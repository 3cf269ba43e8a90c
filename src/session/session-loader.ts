/**
 * Reading a session file into records and classifying it (SPEC.md §5.2, §5.3).
 */
import { basename, dirname, join } from 'node:path'
import type { SessionStorage } from '../storage/types.js'
import { fileTimestamp } from './cwd.js'
import type { Logger } from './logger.js'
import { assertSupportedVersion } from './migrate.js'
import { isEmptyContent, isValidHeader, parseJsonlLenient } from './parser.js'
import type { FileRecord } from './types.js'

export type FileClass =
  | { kind: 'missing' | 'empty' | 'invalid' }
  | { kind: 'valid', records: FileRecord[], /** The last line lacks its `"\n"` (a torn append). */ tornTail: boolean }

/**
 * Reads and classifies `path`: missing (ENOENT), empty, invalid (no valid header) or valid.
 * Throws the §4.1 version error for a valid header with an unsupported version; other read
 * errors propagate.
 */
export async function classifyFile (storage: SessionStorage, path: string, text?: string): Promise<FileClass> {
  if (text === undefined) {
    const read = await readIfExists(storage, path)
    if (read === undefined) return { kind: 'missing' }
    text = read
  }
  if (isEmptyContent(text)) return { kind: 'empty' }
  const records = parseJsonlLenient(text)
  if (!isValidHeader(records[0])) return { kind: 'invalid' }
  assertSupportedVersion(path, records[0])
  return { kind: 'valid', records, tornTail: !text.endsWith('\n') }
}

/** The whole file, or `undefined` when it does not exist. */
export async function readIfExists (storage: SessionStorage, path: string): Promise<string | undefined> {
  try {
    return await storage.readText(path)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw err
  }
}

/**
 * All parsed records of `path`, header first, or `[]` when the file is missing, parses to
 * nothing or lacks a valid header. Other read errors propagate. No migration.
 * @see SPEC.md §5.2
 */
export async function loadEntriesFromFile (storage: SessionStorage, path: string): Promise<FileRecord[]> {
  const text = await readIfExists(storage, path)
  if (text === undefined) return []
  const records = parseJsonlLenient(text)
  return isValidHeader(records[0]) ? records : []
}

/**
 * Renames a file whose header is invalid to `<basename>.corrupt-<fileTs>` (adding `-1`, `-2`, …
 * while taken) and logs both paths. Nothing is deleted or overwritten (§5.3).
 */
export async function setAsideCorrupt (storage: SessionStorage, path: string, log: Logger): Promise<string> {
  const stem = join(dirname(path), `${basename(path)}.corrupt-${fileTimestamp(new Date().toISOString())}`)
  let target = stem
  for (let n = 1; storage.existsSync(target); n++) target = `${stem}-${n}`
  await storage.rename(path, target)
  log.warn({ path, movedTo: target }, 'Session file has no valid header; set aside')
  return target
}
