/**
 * The `?blobs=ref` view of entries and contexts (API.md "Conventions"): every image block that
 * the write path externalizes (SPEC.md §9.3: an `image` element of a `content` array, at any
 * depth, whose string `data` has at least 1024 code units) shows its stored form
 * `blob:sha256:<hex>` instead of base64, and so does every `image_url` data URL. Pure: nothing is
 * read or written, the input is never mutated and unchanged sub-objects are shared. The walk is
 * iterative (src/session/copy-on-write.ts).
 */
import { createHash } from 'node:crypto'
import { copyOnWrite, DESCEND, type CopyOnWriteRules } from '../session/copy-on-write.js'
import { isBlobRef, isImageDataUrl } from '../session/persist-transform.js'
import { BLOB_EXTERNALIZE_THRESHOLD, BLOB_REF_PREFIX } from '../session/types.js'
import type { BlobMode } from './types.js'

/** Block object → its ref; in-memory blocks are stable objects, so each is hashed once. */
const refs = new WeakMap<object, string>()

/** `value` itself for `inline`, else its copy with qualifying image data replaced by refs. */
export function applyBlobMode<T> (value: T, mode: BlobMode | undefined): T {
  return mode === 'ref' ? withBlobRefs(value) : value
}

/** `value` with every qualifying image block's `data` replaced by its blob ref. */
export function withBlobRefs<T> (value: T): T {
  return copyOnWrite(value, RULES) as T
}

const RULES: CopyOnWriteRules = {
  enter (value, inContent, key) {
    if (key === 'image_url' && isImageDataUrl(value)) return dataUrlRef(value)
    if (typeof value !== 'object' || value === null) return value
    if (!Array.isArray(value) && inContent && qualifies(value as Record<string, unknown>)) {
      return { ...value, data: refOf(value as Record<string, unknown>) }
    }
    return DESCEND
  },
}

function qualifies (block: Record<string, unknown>): boolean {
  return block.type === 'image' && typeof block.data === 'string' &&
    block.data.length >= BLOB_EXTERNALIZE_THRESHOLD && !isBlobRef(block.data)
}

/** The ref of an `image_url` data URL, stored whole as UTF-8 by the write path. */
function dataUrlRef (url: string): string {
  return BLOB_REF_PREFIX + createHash('sha256').update(url, 'utf8').digest('hex')
}

function refOf (block: Record<string, unknown>): string {
  let ref = refs.get(block)
  if (ref === undefined) {
    const bytes = Buffer.from(block.data as string, 'base64')
    ref = BLOB_REF_PREFIX + createHash('sha256').update(bytes).digest('hex')
    refs.set(block, ref)
  }
  return ref
}
