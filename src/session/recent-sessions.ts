/**
 * The cheap "recent sessions" view (SPEC.md §11.2): only a `PREFIX_READ_BYTES` prefix of each
 * session file is read, header-only sessions count, and display names are sanitized and short.
 * Re-exported by `discovery.ts`, which is the module to import.
 */
import { basename } from 'node:path'
import { isObject } from './guards.js'
import { parseJsonlLenient, isValidHeader } from './parser.js'
import { PREFIX_READ_BYTES, type FileRecord } from './types.js'
import type { SessionStorage } from '../storage/types.js'

/** One item of `getRecentSessions`. @see SPEC.md §11.2 */
export interface RecentSession {
  path: string
  /** Header `id`. */
  id: string
  /** File mtime. */
  mtime: Date
  /** The sanitized display name before shortening. */
  fullName: string
  /** `fullName`, cut to 39 code units plus `…` when longer than 40. */
  name: string
  /** Age of `mtime` relative to `now`, see `timeAgo`. */
  timeAgo: string
}

const NAME_MAX_UNITS = 40
const MINUTE = 60_000
const HOUR = 60 * MINUTE
const DAY = 24 * HOUR

/**
 * The `limit` most recently modified sessions directly in `dir`, from a `PREFIX_READ_BYTES`
 * prefix read of each file; header-only sessions included. Never rejects.
 * @param now epoch ms the ages are measured from
 * @see SPEC.md §11.2
 */
export async function getRecentSessions (
  storage: SessionStorage, dir: string, limit = 3, now = Date.now()
): Promise<RecentSession[]> {
  const found = await scanRecent(storage, dir, limit)
  return found.map(({ path, mtimeMs, records }) => {
    const header = records[0] as FileRecord & { id: string }
    const fullName = displayName(path, header, records)
    return {
      path,
      id: header.id,
      mtime: new Date(mtimeMs),
      fullName,
      name: fullName.length <= NAME_MAX_UNITS ? fullName : fullName.slice(0, NAME_MAX_UNITS - 1) + '…',
      timeAgo: timeAgo(mtimeMs, now),
    }
  })
}

/**
 * Path of the most recently modified `*.jsonl` directly in `dir` whose first record is a valid
 * header (header-only files count), or `null`, also for a missing or empty directory.
 * @see SPEC.md §11.2
 */
export async function findMostRecentSession (storage: SessionStorage, dir: string): Promise<string | null> {
  const [first] = await scanRecent(storage, dir, 1)
  return first?.path ?? null
}

interface Candidate { path: string, mtimeMs: number, records: FileRecord[] }

/**
 * Sorts the directory's files by mtime first, then reads prefixes newest first until `limit`
 * valid sessions are found, so that `findMostRecentSession` usually reads one file.
 */
async function scanRecent (storage: SessionStorage, dir: string, limit: number): Promise<Candidate[]> {
  const stats: Array<{ path: string, mtimeMs: number }> = []
  for (const path of listJsonlFiles(storage, dir)) {
    try {
      stats.push({ path, mtimeMs: storage.statSync(path).mtimeMs })
    } catch {
      // Vanished or unreadable: not a candidate.
    }
  }
  stats.sort((a, b) => b.mtimeMs - a.mtimeMs || byPathDesc(a.path, b.path))
  const found: Candidate[] = []
  for (const { path, mtimeMs } of stats) {
    if (found.length >= limit) break
    let records: FileRecord[]
    try {
      // The parser drops a line torn by the cut: it is not a complete JSON object.
      records = parseJsonlLenient(await storage.readTextPrefix(path, PREFIX_READ_BYTES))
    } catch {
      continue
    }
    if (isValidHeader(records[0])) found.push({ path, mtimeMs, records })
  }
  return found
}

/**
 * The §11.2 display name (`name`, cut to 40 code units) of a session whose text starts with
 * `prefix` (at least its first `PREFIX_READ_BYTES` bytes, or all of it): what a prefix read of its
 * file would give. `fileName` stands in when nothing else names it.
 */
export function recentName (prefix: string, fileName: string): string {
  const records = parseJsonlLenient(Buffer.from(prefix, 'utf8').subarray(0, PREFIX_READ_BYTES).toString('utf8'))
  const header = records[0]
  const fullName = isValidHeader(header) ? displayName(fileName, header, records) : basename(fileName, '.jsonl')
  return fullName.length <= NAME_MAX_UNITS ? fullName : fullName.slice(0, NAME_MAX_UNITS - 1) + '…'
}

/** Title → first user text (only without a title) → id → file name; first non-empty wins. */
function displayName (path: string, header: FileRecord & { id: string }, records: FileRecord[]): string {
  const hasTitle = typeof header.title === 'string'
  const candidates = [
    hasTitle ? header.title as string : '',
    hasTitle ? '' : firstUserText(records),
    header.id,
  ]
  for (const candidate of candidates) {
    const name = sanitizeName(candidate)
    if (name !== '') return name
  }
  return basename(path, '.jsonl')
}

/** Text of the first `user` message: string content, or the first block with a string `text`. */
function firstUserText (records: FileRecord[]): string {
  for (let i = 1; i < records.length; i++) {
    const record = records[i] as FileRecord
    const message = record.type === 'message' ? asObject(record.message) : undefined
    if (message?.role !== 'user') continue
    if (typeof message.content === 'string') return message.content
    if (!Array.isArray(message.content)) return ''
    for (const block of message.content) {
      const text = asObject(block)?.text
      if (typeof text === 'string') return text
    }
    return ''
  }
  return ''
}

/**
 * Display-name sanitizing: keeps the first line (split on `\r?\n`), deletes U+0000–U+001F and
 * U+007F, and trims.
 * @see SPEC.md §11.2
 */
export function sanitizeName (text: string): string {
  const firstLine = text.split(/\r?\n/, 1)[0] ?? ''
  // eslint-disable-next-line no-control-regex
  return firstLine.replace(/[\u0000-\u001f\u007f]/g, '').trim()
}

/**
 * Age of `ms` (epoch ms) seen from `now`: `just now` under a minute (and for future times),
 * `<m>m ago` under an hour, `<h>h ago` under a day, `<d>d ago` under 7 days (whole units rounded
 * down), else the UTC date `YYYY-MM-DD` of `ms`.
 * @see SPEC.md §11.2
 */
export function timeAgo (ms: number, now: number = Date.now()): string {
  const age = now - ms
  if (!(age >= MINUTE)) return 'just now'
  if (age < HOUR) return `${Math.floor(age / MINUTE)}m ago`
  if (age < DAY) return `${Math.floor(age / HOUR)}h ago`
  if (age < 7 * DAY) return `${Math.floor(age / DAY)}d ago`
  const date = new Date(ms)
  if (Number.isNaN(date.getTime())) return 'unknown'
  const pad = (n: number, width: number): string => String(n).padStart(width, '0')
  return `${pad(date.getUTCFullYear(), 4)}-${pad(date.getUTCMonth() + 1, 2)}-${pad(date.getUTCDate(), 2)}`
}

/**
 * Full paths of the `*.jsonl` files directly in `dir`; `[]` when the directory is missing or
 * cannot be listed. Internal to discovery.
 */
export function listJsonlFiles (storage: SessionStorage, dir: string): string[] {
  try {
    return storage.listFilesSync(dir, '*.jsonl').filter((path) => path.endsWith('.jsonl'))
  } catch {
    return []
  }
}

/**
 * Tie-break for equal mtimes: later path first (file names start with the creation timestamp).
 * Internal to discovery.
 */
export function byPathDesc (a: string, b: string): number {
  return a < b ? 1 : a > b ? -1 : 0
}

function asObject (value: unknown): FileRecord | undefined {
  return isObject(value) ? value : undefined
}
