/**
 * `GET /v1/sessions` and `GET /v1/sessions/recent` (API.md "Sessions"). Listings come from the
 * index: open sessions report their in-memory state (deferred ones included), the others are
 * summarized from their files, cached by path until the file's mtime or size changes (the cache
 * keeps only the listing item, whose texts are cut to LISTING_TEXT_MAX, never the file's full
 * first message or header, so it costs a few KiB per session however large the files). Recent
 * items come from prefix reads of the files plus the deferred sessions that have none yet.
 */
import { dirname } from 'node:path'
import { findMovedSessionFile, sessionDirsOf } from '../session/agent-dirs.js'
import { assertValidCwd } from '../session/cwd.js'
import { getRecentSessions } from '../session/discovery.js'
import { isValidHeader, parseJsonlLenient } from '../session/parser.js'
import type { FileRecord } from '../session/types.js'
import { compareListKeys, decodeCursor, encodeCursor, type ListKey } from './cursor.js'
import { Lru } from './lru.js'
import { publicHeader } from './public-header.js'
import { deferredRecent, type RecentItem } from './recent-deferred.js'
import type { RegistryCore } from './registry-core.js'
import { infoView, SessionSummary } from './session-info.js'
import type { RecentSessionView, SessionInfoView, SessionList } from './types.js'

export interface ListQuery {
  cwd?: string
  /** Default 50, at most 1000. */
  limit?: number
  cursor?: string
  includeEmpty?: boolean
}

interface Listed extends ListKey { info: SessionInfoView }
/** What the listing keeps of a closed session's file: its item, texts already cut. */
interface CachedFile { mtimeMs: number, size: number, info: SessionInfoView }

const READ_CONCURRENCY = 32

/** Closed sessions whose listing item one tenant's listing keeps (README "Fixed limits"). */
export const LISTING_CACHE_FILES = 50_000

export class SessionListing {
  readonly #core: RegistryCore
  readonly #files = new Lru<string, CachedFile>(LISTING_CACHE_FILES)

  constructor (core: RegistryCore) {
    this.#core = core
  }

  async list (query: ListQuery): Promise<SessionList> {
    const core = this.#core
    const limit = Math.min(Math.max(query.limit ?? 50, 1), 1000)
    const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor)
    const dirs = query.cwd === undefined ? undefined : new Set(this.#dirsOf(query.cwd))
    await core.ready
    await core.store.caughtUp()
    const candidates = [...core.index.entries()].filter(([, path]) => dirs === undefined || dirs.has(dirname(path)))
    const listed: Listed[] = []
    let next = 0
    const worker = async (): Promise<void> => {
      for (let i = next++; i < candidates.length; i = next++) {
        const [id, path] = candidates[i] as [string, string]
        const item = await this.#item(id, path)
        if (item !== undefined && (query.includeEmpty === true || item.info.messageCount > 0)) listed.push(item)
      }
    }
    await Promise.all(Array.from({ length: Math.min(READ_CONCURRENCY, candidates.length) }, worker))
    listed.sort(compareListKeys)
    const start = after === undefined ? 0 : firstAfter(listed, after)
    const page = listed.slice(start, start + limit)
    const last = page[page.length - 1]
    const more = start + page.length < listed.length
    return { sessions: page.map((item) => item.info), nextCursor: more && last !== undefined ? encodeCursor(last) : null }
  }

  /**
   * The newest sessions of `cwd`'s directory from prefix reads (SPEC.md §11.2), together with
   * the deferred sessions held open there, which have no file yet; default 3.
   */
  async recent (cwd: string, limit = 3): Promise<RecentSessionView[]> {
    const dirs = this.#dirsOf(cwd)
    const max = Math.min(Math.max(limit, 1), 1000)
    await this.#core.ready
    await this.#core.store.caughtUp()
    const items: RecentItem[] = []
    for (const dir of dirs) {
      for (const r of await getRecentSessions(this.#core.storage, dir, max)) items.push({ id: r.id, name: r.name, modifiedMs: r.mtime.getTime() })
    }
    items.push(...deferredRecent(this.#core.open.values(), dirs[0]!))
    items.sort((a, b) => b.modifiedMs - a.modifiedMs)
    return items.slice(0, max).map((r) => ({ id: r.id, name: r.name, modified: new Date(r.modifiedMs).toISOString() }))
  }

  /** The cwd's directory (SPEC.md §2.2) and the agents' own names for it (agent-dirs.ts). */
  #dirsOf (cwd: string): string[] {
    assertValidCwd(cwd)
    return sessionDirsOf(this.#core.dataDir, cwd)
  }

  async #item (id: string, indexed: string): Promise<Listed | undefined> {
    const slot = this.#core.open.peek(id)
    if (slot !== undefined) return { id, modifiedMs: slot.modifiedMs, info: this.#core.info(slot) }
    let path = indexed
    if (!this.#core.storage.existsSync(path)) {
      // An agent moved the directory (agent-dirs.ts): follow the file, keep the session listed.
      const moved = findMovedSessionFile(this.#core.storage, this.#core.dataDir, path)
      if (moved === undefined) return undefined
      this.#core.index.set(id, moved)
      path = moved
    }
    const file = await this.#read(path)
    if (file === undefined) return undefined
    return { id, modifiedMs: file.mtimeMs, info: { ...file.info, id } }
  }

  async #read (path: string): Promise<CachedFile | undefined> {
    const storage = this.#core.storage
    try {
      const { mtimeMs, size } = storage.statSync(path)
      const cached = this.#files.get(path)
      if (cached !== undefined && cached.mtimeMs === mtimeMs && cached.size === size) return cached
      const info = listingItemOf(parseJsonlLenient(await storage.readText(path)), this.#core.dataDir, mtimeMs)
      if (info === undefined) return undefined
      const file = { mtimeMs, size, info }
      this.#files.set(path, file)
      return file
    } catch {
      return undefined
    }
  }
}

/**
 * The listing item of a session file's records (header first), or undefined without a valid
 * header. Its first message and title are cut copies (cutText), so what a cache keeps of a file
 * with a megabyte first message is at most LISTING_TEXT_MAX characters of it, not the message.
 */
export function listingItemOf (records: readonly FileRecord[], dataDir: string, mtimeMs: number): SessionInfoView | undefined {
  const header = records[0]
  if (!isValidHeader(header)) return undefined
  return infoView(publicHeader(header, dataDir), SessionSummary.of(records), mtimeMs)
}

/** Index of the first item that sorts after `key` (binary search over the sorted list). */
function firstAfter (items: readonly ListKey[], key: ListKey): number {
  let lo = 0
  let hi = items.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (compareListKeys(items[mid] as ListKey, key) <= 0) lo = mid + 1
    else hi = mid
  }
  return lo
}
