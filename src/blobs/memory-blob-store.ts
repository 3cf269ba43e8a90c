/**
 * `BlobStore` in memory (SPEC.md §9.4), for tests and in-memory sessions. Same validation and
 * results as the disk store; stored bytes are copies, so callers cannot change them afterwards.
 */
import { assertBlobHash, blobRefFor, sha256Hex } from './hash.js'
import { bufferReader } from './reader.js'
import type { BlobPutResult, BlobReader, BlobStore } from './types.js'

export class MemoryBlobStore implements BlobStore {
  readonly #blobs = new Map<string, Buffer>()

  /** Number of distinct blobs stored. */
  get size (): number {
    return this.#blobs.size
  }

  /** Stores a copy of `bytes` under their SHA-256 unless present; `created` tells which. */
  async put (bytes: Uint8Array): Promise<BlobPutResult> {
    const hash = sha256Hex(bytes)
    const created = !this.#blobs.has(hash)
    if (created) this.#blobs.set(hash, Buffer.from(bytes))
    return { hash, ref: blobRefFor(hash), created }
  }

  /** A copy of the bytes, or `null`. Rejects with `InvalidArgument` for an invalid hash. */
  async get (hash: string): Promise<Buffer | null> {
    assertBlobHash(hash)
    const bytes = this.#blobs.get(hash)
    return bytes === undefined ? null : Buffer.from(bytes)
  }

  /** A reader over the stored bytes (no copy), or `null`. Rejects with `InvalidArgument` for an invalid hash. */
  async open (hash: string): Promise<BlobReader | null> {
    assertBlobHash(hash)
    const bytes = this.#blobs.get(hash)
    return bytes === undefined ? null : bufferReader(bytes)
  }

  /** Rejects with `InvalidArgument` for an invalid hash. */
  async has (hash: string): Promise<boolean> {
    assertBlobHash(hash)
    return this.#blobs.has(hash)
  }

  /** The stored hashes, in the order they were first put. */
  async * list (): AsyncIterable<string> {
    yield * [...this.#blobs.keys()]
  }
}
