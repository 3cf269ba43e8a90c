/**
 * Operations on one path run in call order: each waits for the ones queued on its paths before
 * it. A fire-and-forget write that failed (`writeTextSync`) is kept and thrown by the next
 * operation on its path, so the failure reaches a caller instead of vanishing.
 */
import { pathKey } from '../path-tree.js'

export class PathQueues {
  /** Per path key: settles when the last operation queued on it has finished. */
  readonly #tails = new Map<string, Promise<void>>()
  /** Per path key: a failure kept for the next operation on the path. */
  readonly #failed = new Map<string, Error>()

  /** Keeps `err` for the next operation on `path`. */
  fail (path: string, err: Error): void {
    this.#failed.set(pathKey(path), err)
  }

  /** Waits for the operations queued on `path`, then throws a kept failure of it. */
  async settled (path: string): Promise<void> {
    const k = pathKey(path)
    await this.#tails.get(k)
    this.#throwFailed(k)
  }

  /**
   * Runs `fn` after every operation queued on any of `paths`, and before any queued later;
   * first throws a kept failure of one of them (unless `reportFailed` is false).
   */
  async exclusive<T> (paths: string[], fn: () => Promise<T>, reportFailed = true): Promise<T> {
    const keys = [...new Set(paths.map(pathKey))]
    const before = keys.map((k) => this.#tails.get(k))
    let done!: () => void
    const tail = new Promise<void>((resolve) => { done = resolve })
    for (const k of keys) this.#tails.set(k, tail)
    try {
      await Promise.all(before)
      if (reportFailed) for (const k of keys) this.#throwFailed(k)
      return await fn()
    } finally {
      done()
      for (const k of keys) if (this.#tails.get(k) === tail) this.#tails.delete(k)
    }
  }

  #throwFailed (k: string): void {
    const err = this.#failed.get(k)
    if (err === undefined) return
    this.#failed.delete(k)
    throw err
  }
}
