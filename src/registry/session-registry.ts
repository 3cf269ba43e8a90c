/**
 * The sessions of one tenant on this server, by id (API.md "Sessions", "Entries", "Live
 * stream"). It loads sessions from the store on demand (at most `maxOpenSessions`, LRU),
 * serializes writes per session, group-commits appends, follows other servers' changes and
 * publishes events for SSE. Routes call this and nothing below it.
 */
import type { SessionEntryBase } from '../session/types.js'
import * as entries from './entry-operations.js'
import type { AppendOptions, BranchSummaryInput } from './entry-operations.js'
import { RegistryCore, type GlobalListener, type RegistryLimits, type RegistryOptions, type SessionListener, type StreamOptions } from './registry-core.js'
import type { ImagesMode } from './export-images.js'
import { appendRecords, type RecordsAnswer } from './record-operations.js'
import { importSession } from './session-import.js'
import { replaceFile, type ReplaceConditions } from './session-replace.js'
import * as listing from './session-listing.js'
import type { ListQuery } from './session-listing.js'
import { search, type SearchRequest } from './session-search.js'
import { followStore } from './store-follow.js'
import * as sessions from './session-operations.js'
import type { CreateInput, ExportStream } from './session-operations.js'
import type {
  AppendAnswer, BlobMode, EntriesPage, GlobalEvent, RecentSessionView, SearchResults, SessionContext, SessionList, SessionView, Tagged, TreeView,
} from './types.js'

export type { ImagesMode, RecordsAnswer, ReplaceConditions, ExportStream, RegistryLimits, RegistryOptions, StreamOptions, SessionListener, GlobalListener, ListQuery, CreateInput, AppendOptions, BranchSummaryInput, SearchRequest }
export * from './types.js'

export class SessionRegistry {
  readonly #core: RegistryCore
  readonly #unfollow: () => void

  constructor (options: RegistryOptions) {
    this.#core = new RegistryCore(options)
    this.#unfollow = followStore(this.#core)
  }

  /** SSE tuning (heartbeat interval, per-subscriber buffer limit). */
  get streamOptions (): StreamOptions { return this.#core.streams }

  /** The memory bounds of this registry (a tenant's registry copies the default one's). */
  get limits (): RegistryLimits { return this.#core.limits }

  /** The tenant whose sessions these are. */
  get tenant (): string { return this.#core.tenant }

  /** Not shutting down. */
  isReady (): boolean { return !this.#core.shuttingDown }

  // ── Sessions ──────────────────────────────────────────────────────────────
  create (input: CreateInput): Promise<SessionView> { return sessions.create(this.#core, input) }
  list (query: ListQuery): Promise<SessionList> { return listing.list(this.#core, query) }
  recent (cwd: string, limit?: number): Promise<RecentSessionView[]> { return listing.recent(this.#core, cwd, limit) }
  /** README "Search": hits in the tenant's sessions, best match first, then newest. */
  search (request: SearchRequest): Promise<SearchResults> { return search(this.#core, request) }
  continueRecent (cwd: string, terminalId?: string): Promise<{ session: SessionView, created: boolean }> {
    return sessions.continueRecent(this.#core, cwd, terminalId)
  }

  get (id: string): Promise<SessionView> { return sessions.getSession(this.#core, id) }
  rename (id: string, title: string, ifMatch?: string, charge?: (bytes: number) => void): Promise<SessionView> {
    return sessions.rename(this.#core, id, title, ifMatch, charge)
  }

  move (id: string, cwd: string, ifMatch?: string): Promise<SessionView> { return sessions.move(this.#core, id, cwd, ifMatch) }
  fork (id: string, leafId?: string, ifMatch?: string): Promise<SessionView> { return sessions.fork(this.#core, id, leafId, ifMatch) }
  import (jsonl: string, options: { newId?: boolean } = {}): Promise<SessionView> {
    return importSession(this.#core, jsonl, options.newId === true)
  }

  /** The stored file, tagged with the session's etag. */
  export (id: string): Promise<Tagged<string>> { return sessions.exportJsonl(this.#core, id) }
  /** `export`, as a stream read while it is sent (the HTTP answer); `inline` resolves its blob refs. */
  exportStream (id: string, images?: ImagesMode): Promise<Tagged<ExportStream>> { return sessions.exportStream(this.#core, id, images) }
  /** The session as `text` (a session file) says: created (`created`) or replaced whole. */
  replaceFile (id: string, text: string, conditions: ReplaceConditions = {}): Promise<{ session: SessionView, created: boolean }> {
    return replaceFile(this.#core, id, text, conditions)
  }

  delete (id: string, ifMatch?: string): Promise<void> { return sessions.remove(this.#core, id, ifMatch) }

  // ── Entries ───────────────────────────────────────────────────────────────
  // Reads and appends come tagged with the session's etag at that moment (the `ETag` header).
  entries (id: string, after: number, limit: number, blobs?: BlobMode): Promise<Tagged<EntriesPage>> {
    return entries.entriesPage(this.#core, id, after, limit, blobs)
  }

  entry (id: string, entryId: string, blobs?: BlobMode): Promise<Tagged<SessionEntryBase>> {
    return entries.getEntry(this.#core, id, entryId, blobs)
  }

  /** `replayed`: an earlier answer for the same Idempotency-Key and body, returned again. */
  append (id: string, body: unknown, options: AppendOptions = {}): Promise<AppendAnswer> {
    return entries.append(this.#core, id, body, options)
  }

  /** Entries as an agent wrote them, with their own ids: the new ones appended, the known ones no-ops. */
  appendRecords (id: string, body: unknown, options: AppendOptions = {}): Promise<RecordsAnswer> {
    return appendRecords(this.#core, id, body, options)
  }

  /** `durable`: record the move on disk as the agents do (see `entries.setLeaf`). */
  setLeaf (id: string, leafId: string | null, ifMatch?: string, durable = false): Promise<entries.LeafMoved> {
    return entries.setLeaf(this.#core, id, leafId, ifMatch, durable)
  }

  branchSummary (id: string, input: BranchSummaryInput, ifMatch?: string, blobs?: BlobMode): Promise<Tagged<{ entry: SessionEntryBase, leafId: string | null }>> {
    return entries.branchSummary(this.#core, id, input, ifMatch, blobs)
  }

  tree (id: string): Promise<Tagged<TreeView>> { return entries.tree(this.#core, id) }
  /** Root → `leafId` (default: the leaf); `[]` for an unknown id, as `getBranch` (SPEC.md §6.6). */
  branch (id: string, leafId?: string, blobs?: BlobMode): Promise<Tagged<SessionEntryBase[]>> {
    return entries.branch(this.#core, id, leafId, blobs)
  }

  context (id: string, leafId?: string, blobs?: BlobMode): Promise<Tagged<SessionContext>> {
    return entries.context(this.#core, id, leafId, blobs)
  }

  // ── Live stream ───────────────────────────────────────────────────────────
  /**
   * Entries a subscriber may see after `after` (1-based seq), at most `max`: durable ones of a
   * flushed session, all of a deferred one.
   */
  readVisible (id: string, after: number, max: number): Promise<SessionEntryBase[]> {
    return entries.readVisible(this.#core, id, after, max)
  }

  /** `readVisible` without waiting: undefined when that would need a load (or it was deleted). */
  readVisibleNow (id: string, after: number, max: number): SessionEntryBase[] | undefined {
    return entries.readVisibleNow(this.#core, id, after, max)
  }

  /** Listens to one session (404 when unknown); the session stays loaded until unsubscribed. */
  async subscribe (id: string, listener: SessionListener): Promise<() => void> {
    const core = this.#core
    return await core.use(id, (session) => {
      let set = core.listeners.get(id)
      if (set === undefined) core.listeners.set(id, set = new Set())
      set.add(listener)
      const listeners = set
      return () => {
        listeners.delete(listener)
        if (listeners.size === 0 && core.listeners.get(id) === listeners) core.listeners.delete(id)
        core.open.evictIfNeeded()
      }
    })
  }

  /** Listens to `session-created/updated/deleted` of every session. */
  subscribeAll (listener: GlobalListener): () => void {
    this.#core.globalListeners.add(listener)
    const leave = this.#core.globalEvents.join()
    return () => {
      this.#core.globalListeners.delete(listener)
      leave()
    }
  }

  /**
   * The held lifecycle events after `lastEventId` (oldest first), or `undefined` when the
   * registry no longer holds that id (the stream then starts with a `reset`).
   */
  globalEventsSince (lastEventId: string): GlobalEvent[] | undefined {
    return this.#core.globalEvents.since(lastEventId)
  }

  /** The id of the newest lifecycle event, sent with a `reset`. */
  get lastGlobalEventId (): string { return this.#core.globalEvents.lastId }

  /** Runs `hook` on `shutdown()` (SSE streams end themselves there). Returns the unregister function. */
  onShutdown (hook: () => void): () => void {
    this.#core.shutdownHooks.add(hook)
    return () => { this.#core.shutdownHooks.delete(hook) }
  }

  /** What the open-session cache holds now: sessions, of them unsaved ones, and their bytes. */
  openStats (): { sessions: number, unsaved: number, bytes: number } {
    const open = this.#core.open
    return { sessions: open.size, unsaved: open.unsavedCount(), bytes: open.bytes }
  }

  /** Number of live streams registered through `onShutdown`. */
  get streamCount (): number { return this.#core.shutdownHooks.size }

  /** Number of sessions held loaded in memory now. */
  get openSessionCount (): number { return this.#core.open.size }

  /** Ends every live stream; the registry stops reporting ready. */
  shutdown (): void {
    this.#core.shuttingDown = true
    for (const hook of [...this.#core.shutdownHooks]) hook()
  }

  /** Ends streams, then closes every open session (its journal). */
  async close (): Promise<void> {
    this.#unfollow()
    this.shutdown()
    await this.#core.open.closeAll()
  }
}

/** The registry of one tenant over a store. */
export function createRegistry (options: RegistryOptions): SessionRegistry {
  return new SessionRegistry(options)
}
