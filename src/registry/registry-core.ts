/**
 * What every registry operation shares: the tenant's sessions in its store, the sessions open
 * here, their etags, events and listeners, and the helpers that run an operation against one
 * session (`use`, `exclusive`). Operations live in `session-operations.ts`, `entry-operations.ts`
 * and `session-import.ts`; the public face is `SessionRegistry`.
 */
import { randomBytes } from 'node:crypto'
import { resolve } from 'node:path'
import type { BlobStore } from '../blobs/types.js'
import { databaseOutage, IdempotencyKeyReused, PreconditionFailed, SessionNotFound, StorageFailed, TooManyUnsavedSessions, withRetryAfter } from '../errors.js'
import { listingItem } from '../session/listing-item.js'
import { silentLogger, type Logger } from '../session/logger.js'
import { publicHeader } from '../session/public-header.js'
import type { ListingItem, Newer, SessionStore } from '../storage/store.js'
import { ifMatchSatisfied } from './etag.js'
import { GlobalEventLog } from './global-events.js'
import type { OpenSession } from './open-session.js'
import { OpenSessions } from './open-sessions.js'
import { openLoaded, recordsOf } from './session-load.js'
import type { GlobalEvent, SessionEvent, SessionInfoView, SessionView } from './types.js'

export interface RegistryOptions {
  /** The tenant whose sessions these are. */
  tenant: string
  /** The tenant's root (`DATA_DIR`, or `DATA_DIR/tenants/<tenant>`): headers never show paths below it. */
  dataDir: string
  store: SessionStore
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

/** Tries of one request whose session was replaced in the store meanwhile (it is loaded anew each time). */
const RELOAD_TRIES = 5

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

/** Now, in epoch ms with a fraction (two changes in one millisecond still sort in order). */
export function preciseNow (): number {
  return performance.timeOrigin + performance.now()
}

/** The session changed whole in the store: the request runs again on it loaded anew. */
class SessionReplaced extends Error {}

/** The one `append` event: it carries nothing, so every append shares it. */
const APPEND_EVENT: SessionEvent = Object.freeze({ type: 'append' as const })

export type SessionListener = (event: SessionEvent) => void
export type GlobalListener = (event: GlobalEvent) => void

export class RegistryCore {
  readonly tenant: string
  readonly dataDir: string
  readonly store: SessionStore
  readonly blobs: BlobStore
  readonly log: Logger
  readonly streams: StreamOptions
  readonly limits: RegistryLimits
  readonly open: OpenSessions
  readonly listeners = new Map<string, Set<SessionListener>>()
  readonly globalListeners = new Set<GlobalListener>()
  readonly globalEvents: GlobalEventLog
  readonly shutdownHooks = new Set<() => void>()
  shuttingDown = false
  readonly #bootId = randomBytes(6).toString('base64url')

  constructor (options: RegistryOptions) {
    this.tenant = options.tenant
    this.dataDir = resolve(options.dataDir)
    this.store = options.store
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
  }

  /**
   * Runs `fn` with the open session `id` (loaded from the store if needed); it is not evicted
   * meanwhile. First the session catches up with what other servers stored since (`fresh`; an
   * append need not: its write is refused when the session moved on, and it catches up then).
   * When the session was replaced whole in the store meanwhile, `fn` runs again on it loaded anew.
   */
  async use<T> (id: string, fn: (session: OpenSession) => T | Promise<T>, fresh = true): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const session = this.open.acquireLoaded(id) ?? await this.open.acquire(id, async () => await this.#load(id))
      try {
        if (session.deleted) throw new SessionNotFound(id)
        if (fresh) await session.lock.run(async () => { await this.refresh(session) })
        return await fn(session)
      } catch (err) {
        if (!(err instanceof SessionReplaced) || attempt >= RELOAD_TRIES) throw err
      } finally {
        this.open.release(session)
      }
    }
  }

  /** `use` under the session's write lock, caught up with the store, after checking `If-Match`. */
  async exclusive<T> (id: string, ifMatch: string | undefined, fn: (session: OpenSession) => T | Promise<T>): Promise<T> {
    return await this.use(id, async (session) => await session.lock.run(async () => {
      await this.refresh(session)
      if (session.deleted) throw new SessionNotFound(session.id)
      this.assertIfMatch(session, ifMatch)
      return await fn(session)
    }), false)
  }

  /** Catches `session` up with what other servers stored since (call it under the session's lock). */
  async refresh (session: OpenSession): Promise<void> {
    const newer = await session.journal.refresh()
    if (newer !== undefined) await this.catchUp(session, newer)
  }

  /** Throws `TooManyUnsavedSessions` (429) when the tenant holds `maxUnsavedSessions` unsaved sessions. */
  assertUnsavedRoom (): void {
    const max = this.limits.maxUnsavedSessions
    if (max > 0 && this.open.unsavedCount() >= max) throw withRetryAfter(new TooManyUnsavedSessions(max), UNSAVED_RETRY_AFTER_S)
  }

  assertIfMatch (session: OpenSession, ifMatch: string | undefined): void {
    if (ifMatch !== undefined && !ifMatchSatisfied(ifMatch, this.etag(session))) throw new PreconditionFailed(ifMatch)
  }

  /** Holds a session that was just created, and announces it. */
  adopt (session: OpenSession): OpenSession {
    this.open.add(session)
    this.emitGlobal('session-created', this.info(session))
    return session
  }

  etag (session: OpenSession): string {
    const m = session.model
    const stamp = session.revision === 0 ? '' : `${this.#bootId}:${session.revision}`
    return session.etags.of({ id: session.id, entryCount: m.entryCount(), leafId: m.getLeafId(), header: m.getHeader(), stamp })
  }

  /** Records a change only this server knows of (a leaf move): a new etag. */
  bumpRevision (session: OpenSession): void { session.revision++ }

  view (session: OpenSession): SessionView {
    const m = session.model
    return {
      header: publicHeader(m.getHeader(), this.dataDir),
      leafId: m.getLeafId(),
      entryCount: m.entryCount(),
      messageCount: session.summary().messageCount,
      persisted: session.saved,
      modified: new Date(session.modifiedMs).toISOString(),
      etag: this.etag(session),
    }
  }

  /** The listing item the store keeps for `session`. */
  listing (session: OpenSession): ListingItem {
    return listingItem(publicHeader(session.model.getHeader(), this.dataDir), session.summary(), session.modifiedMs)
  }

  info (session: OpenSession): SessionInfoView { return infoView(this.listing(session)) }

  /** Records a change of the session now. */
  touch (session: OpenSession): void {
    session.modifiedMs = Math.max(preciseNow(), session.modifiedMs + 0.001)
  }

  /** Every entry of `session` is stored now, `bytes` more of text than before: its readers are told. */
  stored (session: OpenSession, bytes: number): void {
    session.stored = session.model.entryCount()
    this.open.grow(session, bytes)
    this.announceAppend(session)
  }

  /**
   * The error to answer for a write of `session` that failed (`StorageFailed`, 507, or the outage
   * of the database, 503). A saved session is closed here, so the next request loads what the
   * store holds: nothing it did not store is kept. An unsaved one stays as it was before the
   * write (on disk it lives in memory only, SPEC.md §8.3).
   */
  writeFailed (session: OpenSession, err: unknown): unknown {
    // A refusal (a move onto another session's file) changed nothing: not a failure.
    const status = (err as { statusCode?: unknown })?.statusCode
    if (typeof status === 'number' && status < 500) return err
    this.log.error({ err, sessionId: session.id }, 'Session persistence error.')
    // Its live streams load it again.
    if (session.saved && this.open.retire(session)) this.emit(session.id, APPEND_EVENT)
    return databaseOutage(err) ?? new StorageFailed(session.id, { cause: err })
  }

  /** The session moved on in the store (another server changed it): `session` catches up, or goes. */
  async catchUp (session: OpenSession, newer: Newer): Promise<void> {
    if (newer.kind === 'appended') {
      session.model.addStoredRecords(await recordsOf(this, newer.lines))
      this.touch(session)
      this.stored(session, newer.lines.reduce((n, l) => n + l.length + 1, 0))
      return
    }
    if (this.open.retire(session)) this.emit(session.id, APPEND_EVENT)
    if (newer.kind === 'removed') {
      this.gone(session)
      throw new SessionNotFound(session.id)
    }
    throw new SessionReplaced()
  }

  /** `session` was deleted (here or by another server): its streams end, dashboards are told. */
  gone (session: OpenSession): void {
    if (session.deleted) return
    session.deleted = true
    const info = this.info(session)
    this.open.remove(session)
    this.emit(session.id, { type: 'deleted', id: session.id })
    this.listeners.delete(session.id)
    this.emitGlobal('session-deleted', info)
  }

  keyReused (): Error { return new IdempotencyKeyReused() }
  notFound (session: OpenSession): Error { return new SessionNotFound(session.id) }

  emit (id: string, event: SessionEvent): void {
    const set = this.listeners.get(id)
    if (set === undefined) return
    for (const listener of [...set]) listener(event)
  }

  emitGlobal (type: GlobalEvent['type'], info: SessionInfoView): void {
    const event = this.globalEvents.record(type, info)
    for (const listener of [...this.globalListeners]) listener(event)
  }

  /** True when a lifecycle event now would reach a dashboard (one listens, or may resume). */
  get dashboardsListen (): boolean { return this.globalListeners.size > 0 || this.globalEvents.recording }

  /** Wakes the session's readers and tells dashboards, once new entries are visible. */
  announceAppend (session: OpenSession): void {
    if (session.deleted) return
    this.emit(session.id, APPEND_EVENT)
    // The listing view costs date formatting per append: build it only for a listener or for
    // the resume log of one that may come back.
    if (this.dashboardsListen) this.emitGlobal('session-updated', this.info(session))
    else this.globalEvents.skip()
  }

  /** A header change: new etag, `session` event, `session-updated`. */
  announceHeader (session: OpenSession): void {
    this.emit(session.id, { type: 'session', session: this.view(session) })
    this.emitGlobal('session-updated', this.info(session))
  }

  async #load (id: string): Promise<OpenSession> {
    const loaded = await this.store.load(this.tenant, id)
    if (loaded === undefined) throw new SessionNotFound(id)
    return await openLoaded(this, id, loaded)
  }
}

/** The listing item as answers show it (API.md "SessionInfo"). */
export function infoView (item: ListingItem): SessionInfoView {
  const { modifiedMs, ...rest } = item
  return { ...rest, modified: new Date(modifiedMs).toISOString() }
}
