/**
 * Blobs of an append (API.md "Blobs", "Conventions"). Before a batch is appended:
 * - a valid `blob:sha256:<hex>` ref in an image block of a `message`'s `content` or a
 *   `custom_message`'s `content` becomes the blob's base64, exactly as loading resolves it
 *   (SPEC.md §9.5), so that an entry reads the same before and after a reload;
 * - every image block the write path externalizes (SPEC.md §9.3) has its bytes stored at once,
 *   so that its ref is fetchable as soon as the append answers, even while the session is still
 *   held in memory under the deferral rule.
 * Blobs stored for a batch that is then rejected are unreferenced, which is harmless (§8.8).
 */
import type { BlobStore } from '../blobs/types.js'
import type { Logger } from '../session/logger.js'
import { prepareRecordForWrite, resolveBlobRefs } from '../session/persist-transform.js'
import type { NewEntryFields } from '../session/session-manager.js'
import type { FileRecord } from '../session/types.js'

/**
 * Resolves refs in `entries` in place (a missing blob leaves its ref and is logged), then stores
 * the bytes of every qualifying image block. Nothing else of `entries` changes.
 */
export async function prepareAppendBlobs (entries: readonly NewEntryFields[], blobs: BlobStore, log: Logger): Promise<void> {
  // The resolver only looks at entries (records with an id); the placeholder never leaves this
  // copy, whose nested objects are the request's own, so resolution lands in `entries`.
  const records = entries.map((entry): FileRecord => ({ ...entry, id: 'new' }))
  await resolveBlobRefs(records, blobs, (hash) => { log.warn({ hash }, 'Blob not found for image reference') })
  for (const record of records) await prepareRecordForWrite(record, blobs)
}
