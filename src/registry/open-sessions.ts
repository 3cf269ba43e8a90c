/**
 * The sessions held in memory, at most `max` of them and at most `maxBytes` of session data
 * (when set; or the one used last alone, when it is larger), least recently used evicted first
 * (its journal closed). A session is never evicted while a request uses it, while it has live
 * subscribers, or while it is still deferred (on disk it lives only in memory). Opening is
 * single-flight: concurrent requests for one id share one load, so one session never has two
 * journals here (SPEC.md §6.1 service rule).
 */
import type { Logger } from '../session/logger.js'
import type { OpenSession } from './open-session.js'

export interface OpenSessionsOptions {
  max: number
  /** Most bytes (`OpenSession.bytes`) held at once; 0 or absent = no budget. */
  maxBytes?: number
  log: Logger
  /** True when something outside this cache (SSE subscribers) needs the session loaded. */
  pinned: (id: string) => boolean
}

export class OpenSessions {
  /** Map order is recency order: the first entry is the least recently used. */
  readonly #slots = new Map<string, OpenSession>()
  readonly #opening = new Map<string, Promise<OpenSession>>()
  readonly #closing = new Map<string, Promise<void>>()
  readonly #options: OpenSessionsOptions
  /** The slot cached last; while it is still cached it is the last entry of `#slots`. */
  #newest: OpenSession | undefined
  /** Sum of `bytes` over the cached slots. */
  #bytes = 0

  constructor (options: OpenSessionsOptions) {
    this.#options = options
  }

  get size (): number { return this.#slots.size }
  /** Bytes the cached sessions hold, about (see `OpenSession.bytes`). */
  get bytes (): number { return this.#bytes }

  /** Sessions held only in memory (deferred: no assistant message yet). */
  unsavedCount (): number {
    let count = 0
    for (const slot of this.#slots.values()) if (!slot.saved && !slot.deleted) count++
    return count
  }

  /** Counts `bytes` more for `slot` (an append), then evicts others if the budget is passed. */
  grow (slot: OpenSession, bytes: number): void {
    slot.bytes += bytes
    if (this.#slots.get(slot.id) === slot) this.#bytes += bytes
    this.evictIfNeeded()
  }

  peek (id: string): OpenSession | undefined { return this.#slots.get(id) }
  values (): IterableIterator<OpenSession> { return this.#slots.values() }

  /** The open session `id` when it is loaded (counting one user until `release`), else undefined. */
  acquireLoaded (id: string): OpenSession | undefined {
    const slot = this.#slots.get(id)
    if (slot === undefined) return undefined
    slot.users++
    this.#touch(slot)
    return slot
  }

  /**
   * The open session `id`, loading it with `load` when needed; counts one user until `release`.
   */
  async acquire (id: string, load: () => Promise<OpenSession>): Promise<OpenSession> {
    for (;;) {
      const slot = this.#slots.get(id) ?? await this.#open(id, load)
      // Evicted between loading and now: load again rather than use a closed manager.
      if (this.#slots.get(id) !== slot) continue
      slot.users++
      this.#touch(slot)
      return slot
    }
  }

  release (slot: OpenSession): void {
    slot.users--
    this.evictIfNeeded()
  }

  /** Adds a session that was just created (its journal is new). */
  add (slot: OpenSession): OpenSession {
    this.#insert(slot)
    this.evictIfNeeded()
    return slot
  }

  /** Forgets `slot` without closing its journal (the caller does). */
  remove (slot: OpenSession): void {
    if (this.#slots.get(slot.id) === slot) this.#drop(slot)
  }

  /**
   * Drops `slot` from the cache and closes its journal in the background; requests still
   * holding it finish with it, the next `acquire` loads the session afresh. False when the slot
   * was no longer cached.
   */
  retire (slot: OpenSession): boolean {
    if (this.#slots.get(slot.id) !== slot) return false
    this.#drop(slot)
    this.#close(slot)
    return true
  }

  /**
   * Closes least recently used sessions until at most `max` remain and their bytes fit
   * `maxBytes`, or none can go. The session used last is never closed for the budget: when it
   * alone is larger, closing it would only load it again, whole, for its next request.
   */
  evictIfNeeded (): void {
    if (!this.#over()) return
    const newest = this.#newest
    for (const slot of [...this.#slots.values()]) {
      if (!this.#over()) return
      if (slot === newest || !this.#evictable(slot)) continue
      this.#drop(slot)
      this.#close(slot)
    }
  }

  #over (): boolean {
    const { max, maxBytes } = this.#options
    return this.#slots.size > max || (maxBytes !== undefined && maxBytes > 0 && this.#bytes > maxBytes)
  }

  /** Closes every session's journal; errors are logged. */
  async closeAll (): Promise<void> {
    const slots = [...this.#slots.values()]
    this.#slots.clear()
    this.#bytes = 0
    for (const slot of slots) this.#close(slot)
    await Promise.all([...this.#closing.values()])
  }

  #evictable (slot: OpenSession): boolean {
    return slot.users === 0 && !slot.lock.busy && slot.saved && !this.#options.pinned(slot.id)
  }

  #touch (slot: OpenSession): void {
    // The slot set last is still the most recent while it is cached: no re-insertion needed.
    if (this.#newest === slot || this.#slots.get(slot.id) !== slot) return
    this.#set(slot)
  }

  /** Caches a new `slot` as the most recently used and counts its bytes. */
  #insert (slot: OpenSession): void {
    const previous = this.#slots.get(slot.id)
    if (previous !== undefined) this.#bytes -= previous.bytes
    this.#bytes += slot.bytes
    this.#set(slot)
  }

  /** Forgets a cached `slot` and its bytes. */
  #drop (slot: OpenSession): void {
    this.#slots.delete(slot.id)
    this.#bytes -= slot.bytes
  }

  /** Caches `slot` as the most recently used. */
  #set (slot: OpenSession): void {
    this.#slots.delete(slot.id) // a re-set key would keep its old position
    this.#slots.set(slot.id, slot)
    this.#newest = slot
  }

  #close (slot: OpenSession): void {
    const previous = this.#closing.get(slot.id) ?? Promise.resolve()
    const closing = previous.then(async () => { await slot.journal.close() }).catch((err: unknown) => {
      this.#options.log.error({ err, sessionId: slot.id }, 'Closing a session failed')
    }).finally(() => {
      if (this.#closing.get(slot.id) === closing) this.#closing.delete(slot.id)
    })
    this.#closing.set(slot.id, closing)
  }

  async #open (id: string, load: () => Promise<OpenSession>): Promise<OpenSession> {
    let opening = this.#opening.get(id)
    if (opening === undefined) {
      opening = (async () => {
        await this.#closing.get(id) // the previous journal of this session must be closed first
        const existing = this.#slots.get(id)
        if (existing !== undefined) return existing
        const slot = await load()
        this.#insert(slot)
        return slot
      })().finally(() => { this.#opening.delete(id) })
      this.#opening.set(id, opening)
    }
    return await opening
  }
}
