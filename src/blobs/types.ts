/** Content-addressed image bytes shared by all sessions (SPEC.md §9.4). */
import type { Readable } from 'node:stream'

/** `blob:sha256:` + 64 lowercase hex. */
export type BlobRef = `blob:sha256:${string}`

export interface BlobPutResult {
  /** 64 lowercase hex characters: SHA-256 of the bytes. */
  hash: string
  ref: BlobRef
  /** True when this call stored the bytes, false when they were already there. */
  created: boolean
}

/** An opened blob, to be streamed (or closed unread). */
export interface BlobReader {
  /** Size in bytes. */
  size: number
  /** The first bytes (up to 16), enough to sniff the content type. */
  head: Buffer
  /** The bytes, read a chunk at a time as the consumer asks (backpressure); call at most once. */
  stream(): Readable
  /** Releases the blob when it is not streamed (a stream releases it when it ends or is destroyed). */
  close(): Promise<void>
}

/** One stored blob, as a collection (src/hygiene/blob-gc.ts) sees it. */
export interface BlobStat {
  hash: string
  /** Bytes. */
  size: number
  /** When the bytes were last put (stored, or put again while stored), epoch ms. */
  touchedMs: number
}

/** What a tenant's blobs take. */
export interface BlobUsage {
  blobs: number
  /** Bytes of all the blobs together. */
  bytes: number
}

export interface BlobStore {
  /**
   * Stores `bytes` under their SHA-256 unless already present. Durable on return:
   * temp file, fsync, rename, directory fsync. A put of bytes already stored marks them as put
   * now (`BlobStat.touchedMs`), so that a collection keeps them for its grace period: a write
   * path puts the bytes of every ref it is about to write.
   */
  put(bytes: Uint8Array): Promise<BlobPutResult>
  /** The bytes, or `null` when absent. `hash` MUST already be validated as 64 lowercase hex. */
  get(hash: string): Promise<Buffer | null>
  has(hash: string): Promise<boolean>
  /**
   * The blob opened for streaming, or `null` when absent, so that answers never hold a whole
   * blob in memory. Optional: without it, callers use `get`.
   */
  open?(hash: string): Promise<BlobReader | null>
  /**
   * Every stored hash, each once, in no promised order (for copying a whole store). Optional:
   * a store without it cannot be the source of `session-store migrate --from`.
   */
  list?(): AsyncIterable<string>
  /** Every stored blob, each once, in no promised order; blobs put or removed meanwhile may or may not show. */
  scan(): AsyncIterable<BlobStat>
  /**
   * Removes each blob of `hashes` unless it was put at or after `untouchedBefore` (epoch ms),
   * and answers those it removed. Atomic against a put of the same bytes: a put either lands
   * before (the blob is then kept, touched) or after (it is stored again).
   */
  remove(hashes: readonly string[], untouchedBefore: number): Promise<BlobStat[]>
  /** How many blobs are stored and their bytes. */
  usage(): Promise<BlobUsage>
}
