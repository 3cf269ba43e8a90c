/**
 * `BlobStore` in memory (SPEC.md §9.4), for tests and in-memory sessions. Same validation and
 * results as the disk store; stored bytes are copies, so callers cannot change them afterwards.
 */
import { assertBlobHash, blobRefFor, sha256Hex } from './hash.js'
import { bufferReader } from './reader.js'
import type { BlobPutResult, BlobReader, BlobStat, BlobStore, BlobUsage } from './types.js'

interface Held {
  bytes: Buffer
  /** When the bytes were last put, epoch ms. */
  touchedMs: number
}

export class MemoryBlobStore implements BlobStore {
  readonly #blobs = new Map<string, Held>()
  #bytes = 0

  /** Number of distinct blobs stored. */
  get size (): number {
    return this.#blobs.size
  }

  /** Stores a copy of `bytes` under their SHA-256 unless present (then marks them put now); `created` tells which. */
  async put (bytes: Uint8Array): Promise<BlobPutResult> {
    const hash = sha256Hex(bytes)
    const held = this.#blobs.get(hash)
    if (held !== undefined) held.touchedMs = Date.now()
    else {
      this.#blobs.set(hash, { bytes: Buffer.from(bytes), touchedMs: Date.now() })
      this.#bytes += bytes.length
    }
    return { hash, ref: blobRefFor(hash), created: held === undefined }
  }

  /** A copy of the bytes, or `null`. Rejects with `InvalidArgument` for an invalid hash. */
  async get (hash: string): Promise<Buffer | null> {
    assertBlobHash(hash)
    const held = this.#blobs.get(hash)
    return held === undefined ? null : Buffer.from(held.bytes)
  }

  /** A reader over the stored bytes (no copy), or `null`. Rejects with `InvalidArgument` for an invalid hash. */
  async open (hash: string): Promise<BlobReader | null> {
    assertBlobHash(hash)
    const held = this.#blobs.get(hash)
    return held === undefined ? null : bufferReader(held.bytes)
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

  async * scan (): AsyncIterable<BlobStat> {
    for (const [hash, held] of [...this.#blobs]) yield { hash, size: held.bytes.length, touchedMs: held.touchedMs }
  }

  async remove (hashes: readonly string[], untouchedBefore: number): Promise<BlobStat[]> {
    const removed: BlobStat[] = []
    for (const hash of hashes) {
      assertBlobHash(hash)
      const held = this.#blobs.get(hash)
      if (held === undefined || held.touchedMs >= untouchedBefore) continue
      this.#blobs.delete(hash)
      this.#bytes -= held.bytes.length
      removed.push({ hash, size: held.bytes.length, touchedMs: held.touchedMs })
    }
    return removed
  }

  async usage (): Promise<BlobUsage> {
    return { blobs: this.#blobs.size, bytes: this.#bytes }
  }
}
