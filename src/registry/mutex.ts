/**
 * A FIFO async mutex: one per session, so writes to one session are serialized while other
 * sessions proceed in parallel (never a global lock).
 */
export class Mutex {
  #tail: Promise<void> = Promise.resolve()
  #pending = 0

  /** True while a holder runs or waiters are queued. */
  get busy (): boolean { return this.#pending > 0 }

  /**
   * Runs the synchronous `fn` at once when nobody holds or awaits the lock, else queues it like
   * `run`. Nothing can interleave with a synchronous call, so running it directly is holding the
   * lock for its duration, without the promises of `run` (this is on every append's path).
   * Returns `fn`'s result, or a promise of it when queued.
   */
  runSync<T> (fn: () => T): T | Promise<T> {
    return this.#pending === 0 ? fn() : this.run(fn)
  }

  /** Runs `fn` once every earlier holder has finished; its result or error is passed through. */
  async run<T> (fn: () => T | Promise<T>): Promise<T> {
    const previous = this.#tail
    let release!: () => void
    this.#tail = new Promise<void>((resolve) => { release = resolve })
    // With nobody ahead every earlier holder has released, so `previous` is settled: skip a tick.
    const waited = this.#pending > 0
    this.#pending++
    try {
      if (waited) await previous
      return await fn()
    } finally {
      this.#pending--
      release()
    }
  }
}
