/**
 * Bytes in flight per client (MAX_DOWNLOAD_BYTES_PER_TOKEN): a streamed answer (a blob, an
 * export) counts its length against its client from the moment it is admitted until its
 * response closes, however it ends. A client with nothing in flight is always admitted, so an
 * answer larger than the budget can still be fetched on its own.
 */
import type { ServerResponse } from 'node:http'

export class DownloadBudget {
  readonly #max: number
  readonly #held = new Map<string, number>()

  /** `max` bytes per key at once; 0 = no budget. */
  constructor (max: number) {
    this.#max = max
  }

  /** Bytes `key` has in flight now. */
  held (key: string): number {
    return this.#held.get(key) ?? 0
  }

  /** Counts `bytes` for `key` until `res` closes; false when that would pass the budget. */
  take (key: string, bytes: number, res: ServerResponse): boolean {
    if (this.#max === 0) return true
    const held = this.held(key)
    if (held > 0 && held + bytes > this.#max) return false
    this.#held.set(key, held + bytes)
    res.once('close', () => {
      const left = this.held(key) - bytes
      if (left > 0) this.#held.set(key, left)
      else this.#held.delete(key)
    })
    return true
  }
}
