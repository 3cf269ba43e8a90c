/**
 * The behaviour every `SessionStorageWriter` shares (SPEC.md §10.2), independent of where bytes
 * go: operations run one after another in call order, the first error latches, `close()` is
 * idempotent and best effort. Adapters supply only a `WriterBackend`.
 */
import { WriterClosed } from '../errors.js'
import type { SessionStorageWriter } from './types.js'

/** Where a writer's bytes go. Calls never overlap: `SerialWriter` runs them one at a time. */
export interface WriterBackend {
  /** Writes every byte of `line` (UTF-8), opening or creating the file on first use. */
  write(line: string): Promise<void>
  /** Makes what was written durable, opening or creating the file on first use. */
  sync(): Promise<void>
  /** Releases the handle, if one was opened. Called exactly once, also after an error. */
  release(): Promise<void>
}

function toError (err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err))
}

/**
 * A `SessionStorageWriter` over a `WriterBackend`.
 *
 * - Calls are queued: `writeLine` calls land in call order, even when not awaited.
 * - The first error any step meets is latched (`getError()`); afterwards every queued or new
 *   `writeLine`, `flush` and `fsync` rejects with that same error object.
 * - After `close()`, `writeLine` and `fsync` reject with `Writer closed` (`SS_WRITER_CLOSED`);
 *   that refusal is a usage error, so it is neither latched nor passed to `onError`.
 * - `close()` waits for queued operations, always releases the handle, and rejects with the
 *   latched error if the writer has one. Every later call returns the same promise.
 * - `onError` is called once for every error met (the latched one and any later close error).
 */
export class SerialWriter implements SessionStorageWriter {
  readonly #backend: WriterBackend
  readonly #onError: ((err: Error) => void) | undefined
  #chain: Promise<void> = Promise.resolve()
  #error: Error | undefined
  #closing: Promise<void> | undefined

  constructor (backend: WriterBackend, onError?: (err: Error) => void) {
    this.#backend = backend
    this.#onError = onError
  }

  /** Queues `line` (which carries its own `"\n"`, possibly several lines); resolves once written, not durable. */
  writeLine (line: string): Promise<void> {
    const refused = this.#refusal()
    if (refused !== undefined) return Promise.reject(refused)
    return this.#enqueue(() => this.#backend.write(line))
  }

  /** Resolves when every operation queued before this call has completed. */
  flush (): Promise<void> {
    if (this.#error !== undefined) return Promise.reject(this.#error)
    return this.#enqueue(async () => {})
  }

  /** Resolves once everything written before this call is durable. */
  fsync (): Promise<void> {
    const refused = this.#refusal()
    if (refused !== undefined) return Promise.reject(refused)
    return this.#enqueue(() => this.#backend.sync())
  }

  /** Waits for queued operations, then releases the handle. Idempotent. */
  close (): Promise<void> {
    if (this.#closing !== undefined) return this.#closing
    this.#closing = this.#chain.then(async () => {
      try {
        await this.#backend.release()
      } catch (err) {
        this.#record(err)
      }
      if (this.#error !== undefined) throw this.#error
    })
    this.#chain = this.#closing.catch(() => {})
    return this.#closing
  }

  getError (): Error | undefined {
    return this.#error
  }

  #refusal (): Error | undefined {
    if (this.#closing !== undefined) return new WriterClosed()
    return this.#error
  }

  #enqueue (step: () => Promise<void>): Promise<void> {
    const run = this.#chain.then(async () => {
      if (this.#error !== undefined) throw this.#error
      try {
        await step()
      } catch (err) {
        throw this.#record(err)
      }
    })
    this.#chain = run.catch(() => {})
    return run
  }

  /** Latches the first error, reports every error to `onError`, returns the latched one. */
  #record (err: unknown): Error {
    const error = toError(err)
    this.#error ??= error
    try {
      this.#onError?.(error)
    } catch {
      // A throwing listener must not change the writer's outcome.
    }
    return this.#error
  }
}
