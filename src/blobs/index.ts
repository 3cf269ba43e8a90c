/** Content-addressed blobs (SPEC.md §9.4): the interface, both stores and the hash helpers. */
export type { BlobPutResult, BlobReader, BlobRef, BlobStore } from './types.js'
export { openBlob } from './reader.js'
export { FileBlobStore } from './file-blob-store.js'
export { MemoryBlobStore } from './memory-blob-store.js'
export { BLOB_REF_PREFIX, assertBlobHash, blobRefFor, isBlobHash, parseBlobRef, sha256Hex } from './hash.js'
