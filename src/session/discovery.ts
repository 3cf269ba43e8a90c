/**
 * Discovery helpers over a `SessionStorage` (SPEC.md §11.1, §11.2): full listings of a session
 * directory or of every directory, and (re-exported from `recent-sessions.ts`) the cheap
 * "recent sessions" view that reads only a prefix of each file. Nothing here writes, migrates
 * or throws on bad files.
 */
import { parseJsonlLenient } from './parser.js'
import { byPathDesc, listJsonlFiles } from './recent-sessions.js'
import { NO_MESSAGES, SessionSummary } from './session-summary.js'
import type { FileRecord } from './types.js'
import type { SessionStorage } from '../storage/types.js'

export {
  findMostRecentSession, getRecentSessions, sanitizeName, timeAgo, type RecentSession,
} from './recent-sessions.js'

/** One session of a full listing. @see SPEC.md §11.1 */
export interface SessionInfo {
  /** File path, as returned by the storage listing. */
  path: string
  /** Header `id` (coerced to a string when another truthy value). */
  id: string
  /** Header `cwd` if a string, else `""`. */
  cwd: string
  /** Header `title`, else the `shortSummary` of the last `compaction` record, else absent. */
  title?: string
  /** Header `parentSession` (an id or a file path, see §3.3), when a string. */
  parentSessionPath?: string
  /** `new Date(header.timestamp)`; an invalid date when the header has no usable timestamp. */
  created: Date
  /** File mtime. */
  modified: Date
  /** Number of `message` records, all roles and branches. */
  messageCount: number
  /** Text of the first `user` message with non-empty text, else `"(no messages)"`. */
  firstMessage: string
  /** Non-empty texts of all `user` and `assistant` messages joined with one space. */
  allMessagesText: string
  /** Records after the header with a string `type` other than `session` and a non-empty string `id`. */
  entryCount: number
  /** The header record verbatim (unknown keys included). */
  header: FileRecord
}

export interface ListSessionsOptions {
  /** List sessions without any `message` record too (API.md `includeEmpty=true`). Default false. */
  includeEmpty?: boolean
}

const READ_CONCURRENCY = 16

/**
 * SPEC `list`: every `*.jsonl` directly in `sessionDir`, newest `modified` first. Files that
 * cannot be read, lack a header with a truthy `id`, or (unless `includeEmpty`) hold no `message`
 * record are skipped. Never rejects; an unreadable directory yields `[]`.
 * @see SPEC.md §11.1
 */
export async function listSessions (
  storage: SessionStorage, sessionDir: string, options: ListSessionsOptions = {}
): Promise<SessionInfo[]> {
  return await readInfos(storage, listJsonlFiles(storage, sessionDir), options)
}

/**
 * SPEC `listAll`: every `*.jsonl` at any depth below `sessionsRoot` (`DATA_DIR/sessions`),
 * newest `modified` first, with the same skipping rules as `listSessions`. Never rejects.
 * @see SPEC.md §11.1
 */
export async function listAllSessions (
  storage: SessionStorage, sessionsRoot: string, options: ListSessionsOptions = {}
): Promise<SessionInfo[]> {
  const files: string[] = []
  const seen = new Set<string>()
  const pending = [sessionsRoot]
  for (let dir = pending.pop(); dir !== undefined; dir = pending.pop()) {
    if (seen.has(dir)) continue // guards against a storage that reports a cycle
    seen.add(dir)
    files.push(...listJsonlFiles(storage, dir))
    try {
      pending.push(...storage.listDirsSync(dir))
    } catch {
      // An unreadable subdirectory hides its sessions, not everyone else's.
    }
  }
  return await readInfos(storage, files, options)
}

async function readInfos (
  storage: SessionStorage, files: string[], options: ListSessionsOptions
): Promise<SessionInfo[]> {
  const infos = await mapLimit(files, READ_CONCURRENCY, async (path) => await readInfo(storage, path, options))
  const found = infos.filter((info): info is SessionInfo => info !== undefined)
  return found.sort((a, b) => b.modified.getTime() - a.modified.getTime() || byPathDesc(a.path, b.path))
}

async function readInfo (
  storage: SessionStorage, path: string, options: ListSessionsOptions
): Promise<SessionInfo | undefined> {
  let text: string
  let modified: Date
  try {
    text = await storage.readText(path)
    modified = new Date(storage.statSync(path).mtimeMs)
  } catch {
    return undefined
  }
  const records = parseJsonlLenient(text)
  const header = records[0]
  // §11.1 asks for a truthy id here, which is looser than the §5.2 string check.
  if (header === undefined || header.type !== 'session' || !header.id) return undefined
  const summary = SessionSummary.of(records, true)
  if (summary.messageCount === 0 && options.includeEmpty !== true) return undefined
  const info: SessionInfo = {
    path,
    id: typeof header.id === 'string' ? header.id : String(header.id),
    cwd: typeof header.cwd === 'string' ? header.cwd : '',
    created: new Date(header.timestamp as string | number),
    modified,
    messageCount: summary.messageCount,
    firstMessage: summary.firstMessage ?? NO_MESSAGES,
    allMessagesText: (summary.texts ?? []).join(' '),
    entryCount: summary.entryCount,
    header,
  }
  const title = typeof header.title === 'string' ? header.title : summary.compactionTitle
  if (title !== undefined) info.title = title
  if (typeof header.parentSession === 'string') info.parentSessionPath = header.parentSession
  return info
}

/** Maps with at most `limit` calls in flight, keeping input order. */
async function mapLimit<T, R> (items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length)
  let next = 0
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++
      results[i] = await fn(items[i] as T)
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker))
  return results
}
