/** Content-addressed blobs (SPEC.md §9.4): the interface, both stores and the hash helpers. */
import { join } from 'node:path'
import type { StorageKind } from '../storage/index.js'
import { FileBlobStore } from './file-blob-store.js'
import { MemoryBlobStore } from './memory-blob-store.js'
import type { BlobStore } from './types.js'

export type { BlobPutResult, BlobReader, BlobRef, BlobStore } from './types.js'
export { openBlob } from './reader.js'
export { FileBlobStore } from './file-blob-store.js'
export { MemoryBlobStore } from './memory-blob-store.js'
export { BLOB_REF_PREFIX, assertBlobHash, blobRefFor, isBlobHash, parseBlobRef, sha256Hex } from './hash.js'

/** Makes the blob store of one tenant, given the tenant's storage root (`DATA_DIR` or below it). */
export type BlobStoreFactory = (root: string, tenant: string) => BlobStore

/**
 * The blob store of a storage root without a database: `memory` keeps blobs in the process,
 * `disk` as files under `<root>/blobs`. With `STORAGE=postgres` the opened storage chooses
 * (src/storage/open-storage.ts: rows of `ss_blobs`); this is the fallback of an app given none.
 */
export function createBlobStore (kind: StorageKind, root: string): BlobStore {
  return kind === 'memory' ? new MemoryBlobStore() : new FileBlobStore(join(root, 'blobs'))
}
