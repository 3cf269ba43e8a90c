/**
 * Idempotency-Keys on a store several servers share (`storage.replays`): an append with a key
 * claims it in the store before it appends, and keeps its answer there in the claim's place, so
 * that of two attempts with one key, on any servers and at any moment, one appends and the
 * other answers what it answered (`Idempotent-Replayed: true`), or `IdempotencyKeyReused` for
 * another body. An attempt that finds the key held by another one in flight waits for its
 * answer, as a retry on one server does (open-session.ts): it looks again, more and more
 * slowly, and takes the key over once it is freed (that attempt failed, so nothing was kept) or
 * its claim goes stale (its server died). An attempt of this server in flight is awaited here
 * rather than looked for in the store. Where the store can, the answer is kept by the very
 * transaction that writes the append's lines (`keepWithLines`), so that no moment lies between
 * the entries being stored and their answer being kept.
 */
import { randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { IdempotencyKeyReused } from '../errors.js'
import type { KeptWithLines, ReplayStore } from '../storage/types.js'
import type { IdempotentAppend, OpenSession } from './open-session.js'
import type { RegistryCore } from './registry-core.js'
import type { Appended } from './types.js'

/** The waits between looks at a key another attempt holds, in ms; the last one repeats. */
const LOOK_AGAIN_MS = [5, 10, 20, 50, 100]

/** What an earlier attempt with the key answers: kept in the store, or still to come on this server. */
export type Earlier = { kept: Appended } | { inFlight: IdempotentAppend }

interface Held { store: ReplayStore, file: string, session: string }

/** One append's hold on its Idempotency-Key in the store; a new one for each request. */
export class KeyClaim {
  readonly #core: RegistryCore
  readonly #key: string
  readonly #bodyHash: string
  readonly #owner = randomUUID()
  #held: Held | undefined
  #renewal: NodeJS.Timeout | undefined
  /** The answer handed to the write of the append's lines (`withLines`). */
  #withLines: KeptWithLines | undefined

  constructor (core: RegistryCore, key: string, bodyHash: string) {
    this.#core = core
    this.#key = key
    this.#bodyHash = bodyHash
  }

  /**
   * What an earlier attempt with the key answers (waiting for one in flight on another server);
   * undefined once this one holds the key, and always on a store of one process (the open
   * session's memory of keys serves there).
   */
  async take (slot: OpenSession): Promise<Earlier | undefined> {
    const store = this.#core.storage.replays
    const file = slot.manager.getSessionFile()
    if (store === undefined || file === undefined) return undefined
    for (let look = 0; ; look++) {
      const prior = slot.idempotency.get(this.#key)
      if (prior !== undefined) {
        if (prior.bodyHash !== this.#bodyHash) throw new IdempotencyKeyReused()
        return { inFlight: prior }
      }
      const found = await store.claim(file, slot.id, this.#key, this.#bodyHash, this.#owner)
      if (found.held) {
        this.#hold({ store, file, session: slot.id })
        return undefined
      }
      if (found.bodyHash !== this.#bodyHash) throw new IdempotencyKeyReused()
      if (found.response !== undefined) return { kept: found.response as Appended }
      await sleep(LOOK_AGAIN_MS[Math.min(look, LOOK_AGAIN_MS.length - 1)])
    }
  }

  /**
   * Hands `answer`, what the append of `entryIds` answers once they are durable, to the write of
   * those lines, when this attempt holds the key and the store can keep it there. Called in the
   * synchronous run that queued the lines, before any write of them can start.
   */
  withLines (answer: Appended, entryIds: readonly string[]): void {
    const held = this.#held
    if (held === undefined || held.store.keepWithLines === undefined) return
    this.#withLines?.drop() // an earlier run of this attempt (the session had changed elsewhere)
    this.#withLines = held.store.keepWithLines(held.file, held.session, this.#key, this.#owner, { bodyHash: this.#bodyHash, response: answer }, entryIds)
  }

  /**
   * Keeps `answer` in place of the claim, when this attempt holds the key and the write of its
   * lines did not keep it already. A failure is logged, not answered: the append itself is
   * done; the claim left goes stale, and a retry after that appends again.
   */
  async keep (answer: Appended): Promise<void> {
    const keptWithLines = this.#withLines?.committed === true
    const held = this.#unhold()
    if (held === undefined || keptWithLines) return
    try {
      const kept = await held.store.keep(held.file, held.session, this.#key, this.#owner, { bodyHash: this.#bodyHash, response: answer })
      if (!kept) this.#core.log.warn({ sessionId: held.session }, 'An idempotent append outlasted its claim on the key; its answer is not kept')
    } catch (err) {
      this.#core.log.warn({ err, sessionId: held.session }, 'Keeping the answer to an idempotent append failed')
    }
  }

  /** Frees the key when this attempt still holds it (it failed), so that a retry appends. */
  async release (): Promise<void> {
    const held = this.#unhold()
    if (held === undefined) return
    await held.store.release(held.file, held.session, this.#key, this.#owner).catch((err: unknown) => {
      this.#core.log.warn({ err, sessionId: held.session }, 'Freeing the key of a failed idempotent append failed; a retry waits until its claim goes stale')
    })
  }

  #hold (held: Held): void {
    this.#held = held
    this.#renewal ??= setInterval(() => {
      const now = this.#held
      if (now === undefined) return
      now.store.renew(now.file, now.session, this.#key, this.#owner).catch((err: unknown) => {
        this.#core.log.warn({ err, sessionId: now.session }, 'Renewing the claim on an Idempotency-Key failed')
      })
    }, held.store.renewMs)
    this.#renewal.unref()
  }

  #unhold (): Held | undefined {
    this.#withLines?.drop()
    this.#withLines = undefined
    clearInterval(this.#renewal)
    this.#renewal = undefined
    const held = this.#held
    this.#held = undefined
    return held
  }
}
