/**
 * One session the registry holds open: its manager plus what the HTTP layer needs around it —
 * the per-session write lock, group commit, the idempotency memory, the listing summary and
 * the durable watermark that SSE reads stop at.
 */
import type { SessionManager } from '../session/session-manager.js'
import { SessionEtags } from './etag.js'
import { Lru } from './lru.js'
import { Mutex } from './mutex.js'
import { SessionSummary } from './session-info.js'
import type { Appended } from './types.js'

/** Idempotency-Keys remembered per session. */
export const IDEMPOTENCY_KEYS = 1000

export interface IdempotentAppend {
  /** SHA-256 of the request body. */
  bodyHash: string
  /** The first answer, replayed as is (body and etag). */
  result: Promise<Appended>
}

export class OpenSession {
  readonly id: string
  readonly manager: SessionManager
  /** Serializes every mutation of this session; reads never take it. */
  readonly lock = new Mutex()
  readonly idempotency = new Lru<string, IdempotentAppend>(IDEMPOTENCY_KEYS)
  /** This session's etags (registry-core.ts `etag`). */
  readonly etags = new SessionEtags()
  /** Requests currently using this session; a session in use is never evicted. */
  users = 0
  /** Set once the session is deleted; waiters on the lock then answer 404. */
  deleted = false
  /** Last change, epoch ms. */
  modifiedMs: number
  /** Entries `[0, durable)` are known to be on disk and fsynced. */
  durable: number
  /**
   * About how many bytes the session holds: its file's size when it was loaded plus the JSON of
   * what was appended since (the open-session cache's byte budget counts this).
   */
  bytes: number
  readonly #summary = new SessionSummary()
  /** How many of the manager's entries the summary has seen. */
  #summarized = 0

  constructor (id: string, manager: SessionManager, modifiedMs: number, bytes = 0) {
    this.id = id
    this.manager = manager
    this.modifiedMs = modifiedMs
    this.bytes = bytes
    this.durable = manager.isFlushed() ? manager.entryCount() : 0
  }

  /**
   * Entries SSE subscribers may see: the durable ones of a flushed session (so that a client
   * never sees an entry a crash could take back), every entry of a deferred one (it is held in
   * memory only, by design).
   */
  visibleCount (): number {
    return this.manager.isFlushed() ? Math.min(this.durable, this.manager.entryCount()) : this.manager.entryCount()
  }

  /** Listing counts, caught up with the manager's entries. */
  summary (): SessionSummary {
    const m = this.manager
    const count = m.entryCount()
    if (this.#summarized < count) {
      for (const entry of m.entriesSlice(this.#summarized, count)) this.#summary.add(entry)
      this.#summarized = count
    }
    return this.#summary
  }

  /**
   * Resolves once everything appended before the call is durable; `onDurable` then gets the
   * durable entry count. Callers must not hold the session lock while awaiting this: the
   * manager coalesces the appends and flushes of concurrent callers into one write and one
   * fsync (group commit, SPEC.md §8.4), which only happens when they overlap.
   */
  async commit (onDurable: (count: number) => void): Promise<void> {
    const count = this.manager.entryCount()
    await this.manager.flush()
    this.durable = Math.max(this.durable, count)
    onDurable(this.durable)
  }

  /** Marks every current entry durable, after an operation that rewrote the whole file. */
  markRewritten (): void {
    if (this.manager.isFlushed()) this.durable = Math.max(this.durable, this.manager.entryCount())
  }
}
