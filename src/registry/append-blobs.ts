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
  // Both steps only ever touch image blocks: a batch without any has nothing to do.
  if (!entries.some(holdsImageBlock)) return
  // The resolver only looks at entries (records with an id); the placeholder never leaves this
  // copy, whose nested objects are the request's own, so resolution lands in `entries`.
  const records = entries.map((entry): FileRecord => ({ ...entry, id: 'new' }))
  await resolveBlobRefs(records, blobs, (hash) => { log.warn({ hash }, 'Blob not found for image reference') })
  for (const record of records) await prepareRecordForWrite(record, blobs)
}

/**
 * True when some object anywhere inside `value` has `type: "image"`: a superset of the blocks
 * that ref resolution (SPEC.md §9.5) and externalization (§9.3) look at. Iterative, so a deeply
 * nested body cannot overflow the stack; allocates nothing for scalars.
 */
export function holdsImageBlock (value: unknown): boolean {
  const stack: unknown[] = [value]
  while (stack.length > 0) {
    const v = stack.pop()
    if (typeof v !== 'object' || v === null) continue
    if (Array.isArray(v)) {
      for (const item of v) if (typeof item === 'object' && item !== null) stack.push(item)
      continue
    }
    const obj = v as Record<string, unknown>
    if (obj.type === 'image') return true
    for (const key in obj) {
      const item = obj[key]
      if (typeof item === 'object' && item !== null) stack.push(item)
    }
  }
  return false
}
