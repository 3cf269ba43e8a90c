/** Helpers for `BlobStore.open` (src/blobs/types.ts). */
import { Readable } from 'node:stream'
import type { BlobReader, BlobStore } from './types.js'

/** Bytes of a blob's beginning kept for sniffing its content type (src/blobs/sniff.ts needs 12). */
export const HEAD_BYTES = 16

/** A reader over bytes already in memory. */
export function bufferReader (bytes: Buffer): BlobReader {
  return { size: bytes.length, head: bytes.subarray(0, HEAD_BYTES), stream: () => Readable.from([bytes]), close: async () => {} }
}

/** `store.open(hash)`, or a reader over `store.get(hash)` for a store that cannot stream. */
export async function openBlob (store: BlobStore, hash: string): Promise<BlobReader | null> {
  if (store.open !== undefined) return await store.open(hash)
  const bytes = await store.get(hash)
  return bytes === null ? null : bufferReader(bytes)
}
