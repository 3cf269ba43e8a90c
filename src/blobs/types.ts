/** Content-addressed image bytes shared by all sessions (SPEC.md §9.4). */

/** `blob:sha256:` + 64 lowercase hex. */
export type BlobRef = `blob:sha256:${string}`

export interface BlobPutResult {
  /** 64 lowercase hex characters: SHA-256 of the bytes. */
  hash: string
  ref: BlobRef
  /** True when this call stored the bytes, false when they were already there. */
  created: boolean
}

export interface BlobStore {
  /**
   * Stores `bytes` under their SHA-256 unless already present. Durable on return:
   * temp file, fsync, rename, directory fsync.
   */
  put(bytes: Uint8Array): Promise<BlobPutResult>
  /** The bytes, or `null` when absent. `hash` MUST already be validated as 64 lowercase hex. */
  get(hash: string): Promise<Buffer | null>
  has(hash: string): Promise<boolean>
}
