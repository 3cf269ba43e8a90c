/**
 * The state every registry operation shares: the id index, the open sessions, etag revisions,
 * event listeners, and the helpers that run an operation against one session (`use`,
 * `exclusive`). Operations themselves live in `session-operations.ts` and
 * `entry-operations.ts`; the public face is `SessionRegistry`.
 */
import { randomBytes } from 'node:crypto'
import { resolve } from 'node:path'
import type { BlobStore } from '../blobs/types.js'
import { databaseOutage, PreconditionFailed, SessionNotFound, StorageFailed, TooManyUnsavedSessions, withRetryAfter } from '../errors.js'
import { findMovedSessionFile } from '../session/agent-dirs.js'
import { silentLogger, type Logger } from '../session/logger.js'
import type { ManagerOptions } from '../session/session-factories.js'
import { SessionManager } from '../session/session-manager.js'
import type { SessionStorage } from '../storage/types.js'
import { ifMatchSatisfied } from './etag.js'
import type { OpenSession } from './open-session.js'
import { GlobalEventLog } from './global-events.js'
import { OpenSessions, type Loaded } from './open-sessions.js'
import { publicHeader } from './public-header.js'
import { infoView } from './session-info.js'
import { SessionIndex, scanSessions } from './session-index.js'
import { followStore, isCurrent, isStale, STALE_RETRIES, type StoreFollower } from './shared-store.js'
import { loadUnsaved } from './shared-unsaved.js'
import type { GlobalEvent, SessionEvent, SessionInfoView, SessionView } from './types.js'

export interface RegistryOptions {
  /** `DATA_DIR`; resolved against the working directory. */
  dataDir: string
  storage: SessionStorage
  blobs: BlobStore
  logger?: Logger
  /** Most sessions kept loaded at once (default 1000). */
  maxOpenSessions?: number
  /** SSE tuning; the defaults suit production. */
  streams?: Partial<StreamOptions>
  /** Memory bounds; each 0 (the default) = none. */
  limits?: Partial<RegistryLimits>
}

/** What one registry (one tenant) may hold in memory; 0 = no bound. */
export interface RegistryLimits {
  /** Sessions held only in memory (no assistant message yet) at once; beyond: 429. */
  maxUnsavedSessions: number
  /** Bytes (JSON) one unsaved session may hold; an append past it: 413. */
  maxUnsavedSessionBytes: number
  /** Entries one unsaved session may hold; an append past it: 413. */
  maxUnsavedSessionEntries: number
  /** Bytes the open-session cache holds before it evicts saved sessions (LRU). */
  maxOpenSessionBytes: number
}

/** Seconds a client refused for holding too many unsaved sessions should wait. */
const UNSAVED_RETRY_AFTER_S = 5

/** Unsent bytes a live stream may hold before its subscriber is disconnected (README "Fixed limits"). */
export const SSE_MAX_BUFFERED_BYTES = 4 * 1024 * 1024

export interface StreamOptions {
  /** A comment line is sent after this many ms without output (API.md: at most 15 s). */
  heartbeatMs: number
  /** A subscriber whose unsent backlog exceeds this many bytes is disconnected. */
  maxBufferedBytes: number
  /** A subscriber that leaves its full buffer undrained this long is disconnected. */
  drainTimeoutMs: number
  /** Lifecycle events held for `GET /v1/events` resumes (`Last-Event-ID`). */
  globalBacklog: number
  /** How long after the last `/v1/events` subscriber left events are still held for its return. */
  globalResumeWindowMs: number
}

/**
 * Now, in epoch milliseconds with a fractional part (like file mtimes), so that two changes in
 * one millisecond still sort in the order they happened ("newest first").
 */
export function preciseNow (): number {
  return performance.timeOrigin + performance.now()
}

/** The one `append` event: it carries nothing, so every append shares it. */
const APPEND_EVENT: SessionEvent = Object.freeze({ type: 'append' as const })

export type SessionListener = (event: SessionEvent) => void
export type GlobalListener = (event: GlobalEvent) => void

export class RegistryCore {
  readonly dataDir: string
  readonly storage: SessionStorage
  readonly blobs: BlobStore
  readonly log: Logger
  readonly streams: StreamOptions
  readonly limits: RegistryLimits
  index = new SessionIndex()
  readonly open: OpenSessions
  readonly ready: Promise<void>
  indexed = false
  shuttingDown = false
  readonly listeners = new Map<string, Set<SessionListener>>()
  readonly globalListeners = new Set<GlobalListener>()
  readonly globalEvents: GlobalEventLog
  readonly shutdownHooks = new Set<() => void>()
  /** The changes of other servers on the store (shared-store.ts). */
  readonly store: StoreFollower
  /** Per-session revision of leaf moves and header changes; outlives eviction (see etag.ts). */
  readonly #revisions = new Map<string, number>()
  readonly #bootId = randomBytes(6).toString('base64url')

  constructor (options: RegistryOptions) {
    this.dataDir = resolve(options.dataDir)
    this.storage = options.storage
    this.blobs = options.blobs
    this.log = options.logger ?? silentLogger
    this.streams = {
      heartbeatMs: 15_000,
      maxBufferedBytes: SSE_MAX_BUFFERED_BYTES,
      drainTimeoutMs: 30_000,
      globalBacklog: 1000,
      globalResumeWindowMs: 5 * 60_000,
      ...options.streams,
    }
    this.globalEvents = new GlobalEventLog(this.#bootId, this.streams.globalBacklog, this.streams.globalResumeWindowMs)
    this.limits = {
      maxUnsavedSessions: 0, maxUnsavedSessionBytes: 0, maxUnsavedSessionEntries: 0, maxOpenSessionBytes: 0, ...options.limits,
    }
    this.open = new OpenSessions({
      max: options.maxOpenSessions ?? 1000,
      maxBytes: this.limits.maxOpenSessionBytes,
      log: this.log,
      pinned: (id) => (this.listeners.get(id)?.size ?? 0) > 0,
    })
    this.ready = scanSessions(this.storage, this.dataDir, this.log).then((index) => {
      for (const [id, path] of this.index.entries()) index.set(id, path) // created during the scan
      this.index = index
      this.indexed = true
      this.log.info({ sessions: index.size }, 'session index built')
    })
    this.ready.catch((err: unknown) => { this.log.error({ err }, 'Building the session index failed') })
    this.store = followStore(this)
  }

  /** Options for every `SessionManager` factory call. */
  managerOptions (terminalId?: string): ManagerOptions {
    const options: ManagerOptions = { dataDir: this.dataDir, blobs: this.blobs, logger: this.log }
    if (terminalId !== undefined) options.terminalId = terminalId
    return options
  }

  /**
   * Runs `fn` with the open session `id` (loading it if needed); the session is not evicted
   * meanwhile. A latched persistence error surfaces as `StorageFailed` (507). On a store that
   * other servers share, the open session is first checked against the store (unless `check`
   * is false: the caller's writes are checked by the store anyway) and loaded again when it
   * changed; `fn` runs again on the session loaded anew when its writes met a change of
   * another server (shared-store.ts).
   */
  async use<T> (id: string, fn: (slot: OpenSession) => T | Promise<T>, check = true): Promise<T> {
    if (!this.indexed) await this.ready
    for (let attempt = 1; ; attempt++) {
      const slot = this.open.acquireLoaded(id) ?? await this.open.acquire(id, async () => await this.#load(id))
      try {
        if (slot.deleted) throw new SessionNotFound(id)
        if (check && !await isCurrent(this, slot)) {
          this.open.retire(slot)
          continue
        }
        return await fn(slot)
      } catch (err) {
        if (isStale(err) && attempt < STALE_RETRIES) {
          this.log.info({ sessionId: id, attempt }, 'Session changed by another server meanwhile; trying again on it reloaded')
          this.open.retire(slot)
          continue
        }
        if (isStale(err)) this.log.error({ err, sessionId: id, attempts: attempt }, 'Session kept changing on other servers; giving up')
        throw this.storageError(slot, err)
      } finally {
        this.open.release(slot)
      }
    }
  }

  /** `use` under the session's write lock, after checking `If-Match`. */
  async exclusive<T> (id: string, ifMatch: string | undefined, fn: (slot: OpenSession) => T | Promise<T>): Promise<T> {
    return await this.use(id, async (slot) => await this.locked(slot, ifMatch, fn))
  }

  /** Runs `fn` under the session's write lock once the session still exists and `If-Match` holds. */
  async locked<T> (slot: OpenSession, ifMatch: string | undefined, fn: (slot: OpenSession) => T | Promise<T>): Promise<T> {
    return await slot.lock.run(async () => {
      if (slot.deleted) throw new SessionNotFound(slot.id)
      this.assertIfMatch(slot, ifMatch)
      return await fn(slot)
    })
  }

  /**
   * `StorageFailed` wrapping `err` when it is the session's latched error, else `err`; but a
   * latched error that a database outage caused is answered as that outage (503). A latched
   * session whose file exists is retired from the cache, so the next request reloads it from
   * disk (SPEC.md §8.7 recovery: `setSessionFile(samePath)` on a fresh manager): entries that
   * never reached the disk are dropped, and writes work again once the storage does.
   */
  storageError (slot: OpenSession, err: unknown): unknown {
    const latched = slot.manager.getLatchedError()
    if (latched === undefined || (err !== latched && (err as { cause?: unknown })?.cause !== latched)) return err
    const file = slot.manager.getSessionFile()
    if (slot.manager.isFlushed() && file !== undefined && this.#hasContent(file) && this.open.retire(slot)) {
      this.log.warn({ sessionId: slot.id, err: latched }, 'Session retired after a storage failure; the next request reloads it from disk')
      // Its live streams load it again themselves, once the storage answers (event-streams.ts).
      this.emit(slot.id, APPEND_EVENT)
    }
    const outage = databaseOutage(latched)
    if (outage !== undefined) return outage
    if ((err as { code?: unknown }).code === 'SS_STORAGE_FAILED') return err
    return new StorageFailed(slot.id, { cause: latched })
  }

  /**
   * The file holds something to reload. A first flush that failed leaves none (the partial
   * write is undone): that session lives on in memory, still latched, rather than be lost.
   */
  #hasContent (file: string): boolean {
    try {
      return this.storage.statSync(file).size > 0
    } catch {
      return false
    }
  }

  /**
   * Throws `TooManyUnsavedSessions` (429) when the tenant already holds `maxUnsavedSessions`
   * sessions without an assistant message: a new one would be held in memory only.
   */
  assertUnsavedRoom (): void {
    const max = this.limits.maxUnsavedSessions
    if (max > 0 && this.open.unsavedCount() >= max) {
      throw withRetryAfter(new TooManyUnsavedSessions(max), UNSAVED_RETRY_AFTER_S)
    }
  }

  /** Indexes and holds a manager that was just created, and announces it. */
  adopt (manager: SessionManager): OpenSession {
    const id = manager.getSessionId()
    const file = manager.getSessionFile()
    if (file !== undefined) this.index.set(id, file)
    const bytes = this.#size(file) ?? sizeOfRecords(manager)
    const slot = this.open.add(id, manager, this.#mtime(file) ?? preciseNow(), bytes)
    this.emitGlobal('session-created', this.info(slot))
    return slot
  }

  assertIfMatch (slot: OpenSession, ifMatch: string | undefined): void {
    // No If-Match, no etag to compute before the append.
    if (ifMatch !== undefined && !ifMatchSatisfied(ifMatch, this.etag(slot))) throw new PreconditionFailed(ifMatch)
  }

  etag (slot: OpenSession): string {
    const m = slot.manager
    const revision = this.#revisions.get(slot.id)
    // On a shared store the stored file's generation (new with each rewrite: title, move)
    // stamps the etag alike on every server; the revision then counts only leaf moves, which
    // this server alone holds.
    const file = m.getSessionFile()
    const generation = file === undefined ? undefined : this.storage.generation?.(file)
    const local = revision === undefined ? '' : `${this.#bootId}:${revision}`
    const stamp = generation === undefined ? local : `g${generation}${local === '' ? '' : `/${local}`}`
    return slot.etags.of({ id: slot.id, entryCount: m.entryCount(), leafId: m.getLeafId(), header: m.getHeader(), stamp })
  }

  /** Records a leaf move or header change (appends change the etag through the entry count). */
  bumpRevision (id: string): void {
    this.#revisions.set(id, (this.#revisions.get(id) ?? 0) + 1)
  }

  forget (id: string): void {
    this.#revisions.delete(id)
    this.index.delete(id)
  }

  view (slot: OpenSession): SessionView {
    const m = slot.manager
    return {
      header: publicHeader(m.getHeader(), this.dataDir),
      leafId: m.getLeafId(),
      entryCount: m.entryCount(),
      messageCount: slot.summary().messageCount,
      persisted: m.isFlushed(),
      modified: new Date(slot.modifiedMs).toISOString(),
      etag: this.etag(slot),
    }
  }

  info (slot: OpenSession): SessionInfoView {
    return infoView(publicHeader(slot.manager.getHeader(), this.dataDir), slot.summary(), slot.modifiedMs)
  }

  /** Records a change of the session now. */
  touch (slot: OpenSession): void {
    slot.modifiedMs = Math.max(preciseNow(), slot.modifiedMs + 0.001)
  }

  emit (id: string, event: SessionEvent): void {
    const set = this.listeners.get(id)
    if (set === undefined) return
    for (const listener of [...set]) listener(event)
  }

  emitGlobal (type: GlobalEvent['type'], info: SessionInfoView): void {
    const event = this.globalEvents.record(type, info)
    for (const listener of [...this.globalListeners]) listener(event)
  }

  /** Wakes the session's readers and tells dashboards, once new entries are visible. */
  announceAppend (slot: OpenSession): void {
    if (slot.deleted) return
    this.emit(slot.id, APPEND_EVENT)
    // The listing view costs date formatting per append: build it only for a listener or for
    // the resume log of one that may come back.
    if (this.globalListeners.size > 0 || this.globalEvents.recording) this.emitGlobal('session-updated', this.info(slot))
    else this.globalEvents.skip()
  }

  /** A header change: new etag, `session` event, `session-updated`. */
  announceHeader (slot: OpenSession): void {
    if (this.storage.generation === undefined) this.bumpRevision(slot.id)
    this.touch(slot)
    this.emit(slot.id, { type: 'session', session: this.view(slot) })
    this.emitGlobal('session-updated', this.info(slot))
  }

  async #load (id: string): Promise<Loaded> {
    let path = this.index.get(id) ?? await this.#located(id)
    // An agent may have moved the directory (agent-dirs.ts): follow the file by its name.
    if (path !== undefined && !this.storage.existsSync(path)) {
      const moved = findMovedSessionFile(this.storage, this.dataDir, path)
      if (moved !== undefined) this.index.set(id, moved)
      path = moved
    }
    // A file that vanished is not recreated: opening a missing path would start a new session.
    if (path === undefined) {
      // No file yet: kept unsaved on a store other servers share, or saved by one of them just now.
      const unsaved = await loadUnsaved(this, id)
      if (unsaved !== undefined) return { ...unsaved, modifiedMs: preciseNow() }
      path = this.storage.unsaved === undefined ? undefined : await this.store.locate(id)
      if (path !== undefined) this.index.set(id, path)
    }
    if (path === undefined) {
      this.index.delete(id)
      throw new SessionNotFound(id)
    }
    await this.storage.track?.(path) // before the read: a change after it then counts as one
    const manager = await SessionManager.open(path, undefined, this.storage, this.managerOptions())
    if (manager.getSessionId() !== id) {
      // The file was replaced since it was indexed; index it under the id it has now.
      await manager.close().catch(() => {})
      this.index.delete(id)
      this.index.set(manager.getSessionId(), path)
      throw new SessionNotFound(id)
    }
    return { manager, modifiedMs: this.#mtime(path) ?? preciseNow(), bytes: this.#size(path) ?? 0 }
  }

  /** The file of session `id` when another server made it since this one indexed. */
  async #located (id: string): Promise<string | undefined> {
    const path = await this.store.locate(id)
    if (path !== undefined && this.index.get(id) === undefined) this.index.set(id, path)
    return this.index.get(id)
  }

  #size (path: string | undefined): number | undefined {
    if (path === undefined) return undefined
    try {
      return this.storage.statSync(path).size
    } catch {
      return undefined
    }
  }

  #mtime (path: string | undefined): number | undefined {
    if (path === undefined) return undefined
    try {
      return this.storage.statSync(path).mtimeMs
    } catch {
      return undefined
    }
  }
}

/** About how many bytes a manager's records hold as JSON (a session with no file yet). */
export function sizeOfRecords (manager: SessionManager): number {
  let bytes = JSON.stringify(manager.getHeader()).length
  for (const entry of manager.getEntries()) bytes += JSON.stringify(entry).length
  return bytes
}
