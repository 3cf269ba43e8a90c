/**
 * A byte budget per key (a tenant), as a token bucket: it holds at most `maxBytes`, refills
 * evenly over `windowMs`, and a charge passes only when the bucket holds the bytes (or is full:
 * one file larger than the whole budget may still be rewritten, once per window).
 */
export class ByteBudget {
  readonly #buckets = new Map<string, { bytes: number, at: number }>()

  constructor (readonly maxBytes: number, readonly windowMs: number) {}

  /** Takes `bytes` from `key`'s bucket: `0` when it passed, else the seconds until it would. */
  charge (key: string, bytes: number, now = Date.now()): number {
    if (this.maxBytes === 0) return 0
    const rate = this.maxBytes / this.windowMs
    const bucket = this.#buckets.get(key) ?? { bytes: this.maxBytes, at: now }
    bucket.bytes = Math.min(this.maxBytes, bucket.bytes + (now - bucket.at) * rate)
    bucket.at = now
    this.#buckets.set(key, bucket)
    if (bucket.bytes >= bytes || bucket.bytes >= this.maxBytes) {
      bucket.bytes -= bytes
      if (bucket.bytes >= this.maxBytes) this.#buckets.delete(key)
      return 0
    }
    return Math.max(1, Math.ceil((Math.min(bytes, this.maxBytes) - bucket.bytes) / rate / 1000))
  }
}
