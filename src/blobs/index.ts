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

/**
 * The blob store of a storage root (`DATA_DIR` or a tenant's root), and the one place where the
 * blob store is chosen: `memory` keeps blobs in the process; `disk` and, for now, `postgres`
 * keep them as files under `<root>/blobs`.
 */
export function createBlobStore (kind: StorageKind, root: string): BlobStore {
  return kind === 'memory' ? new MemoryBlobStore() : new FileBlobStore(join(root, 'blobs'))
}
