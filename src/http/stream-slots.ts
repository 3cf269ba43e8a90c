/**
 * The cap on live SSE streams per client (MAX_SSE_PER_TOKEN): a stream takes a slot when it is
 * admitted and gives it back when its response closes, however it ends (client gone, session
 * deleted, server stopping, or an error answered before streaming).
 */
import type { ServerResponse } from 'node:http'

/** Open streams per client key, against one cap. */
export class StreamSlots {
  readonly #max: number
  readonly #open = new Map<string, number>()

  /** `max` streams per key at once; 0 = no cap. */
  constructor (max: number) {
    this.#max = max
  }

  /** Streams `key` holds now. */
  count (key: string): number {
    return this.#open.get(key) ?? 0
  }

  /** Takes a slot for `key` until `res` closes; false when `key` already holds `max`. */
  take (key: string, res: ServerResponse): boolean {
    if (this.#max === 0) return true
    const held = this.count(key)
    if (held >= this.#max) return false
    this.#open.set(key, held + 1)
    res.once('close', () => { this.#release(key) })
    return true
  }

  #release (key: string): void {
    const held = this.count(key) - 1
    if (held > 0) this.#open.set(key, held)
    else this.#open.delete(key)
  }
}
