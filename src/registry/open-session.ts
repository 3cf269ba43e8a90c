/**
 * One session the registry holds open: its model (the session in memory), the journal that
 * stores it, and what the HTTP layer needs around them: the write lock, the group commit of
 * appends, the idempotent appends in flight, the listing summary, the etags and the count of
 * entries known stored, which live streams stop at.
 */
import type { Checkpoint, SessionModel } from '../session/session-model.js'
import { SessionSummary } from '../session/session-summary.js'
import type { Journal } from '../storage/store.js'
import { SessionEtags } from './etag.js'
import { Mutex } from './mutex.js'
import type { Appended } from './types.js'

/** An idempotent append in flight: its body's hash and its answer to come. */
export interface IdempotentAppend {
  bodyHash: string
  result: Promise<Appended>
}

export class OpenSession {
  readonly id: string
  readonly model: SessionModel
  readonly journal: Journal
  /** Serializes every change of this session (batches of appends and everything else); reads never take it. */
  readonly lock = new Mutex()
  /** Idempotent appends in flight, by key; a kept answer is the journal's. */
  readonly inFlight = new Map<string, IdempotentAppend>()
  readonly etags = new SessionEtags()
  /** Requests using this session now; a session in use is never evicted. */
  users = 0
  /** Set once the session is deleted (or gone from the store); waiters then answer 404. */
  deleted = false
  /** Last change, epoch ms with a fraction. */
  modifiedMs: number
  /** Entries `[0, stored)` are in the store (durable, or held under the deferral rule). */
  stored: number
  /** About how many bytes the session holds (its text when loaded plus what was appended since). */
  bytes: number
  /** Leaf moves and other changes this server alone knows of (they stamp the etag). */
  revision = 0
  #summary = new SessionSummary()
  #summarized = 0

  constructor (id: string, model: SessionModel, journal: Journal, modifiedMs: number, bytes: number) {
    this.id = id
    this.model = model
    this.journal = journal
    this.modifiedMs = modifiedMs
    this.bytes = bytes
    this.stored = model.entryCount()
  }

  /** Saved in the store (a file, a row without the unsaved flag): appends are durable. */
  get saved (): boolean { return this.journal.saved }

  /** Entries live streams may send: the stored ones, never one a failed write takes back. */
  visibleCount (): number { return Math.min(this.stored, this.model.entryCount()) }

  /** Listing counts, caught up with the model's entries. */
  summary (): SessionSummary {
    const count = this.model.entryCount()
    if (this.#summarized > count) {
      // Entries were taken back (a write that failed): count again from the start.
      this.#summary = new SessionSummary()
      this.#summarized = 0
    }
    if (this.#summarized < count) {
      for (const entry of this.model.entriesSlice(this.#summarized, count)) this.#summary.add(entry)
      this.#summarized = count
    }
    return this.#summary
  }

  /** A mark of the model to take appends back to. */
  checkpoint (): Checkpoint { return this.model.checkpoint() }

  rollback (mark: Checkpoint): void {
    this.model.rollback(mark)
    if (this.#summarized > this.model.entryCount()) this.summary()
  }
}
