/**
 * The `?blobs=ref` view of entries and contexts (API.md "Conventions"): every image block that
 * the write path externalizes (SPEC.md §9.3: an `image` element of a `content` array, at any
 * depth, whose string `data` has at least 1024 code units) shows its stored form
 * `blob:sha256:<hex>` instead of base64, and so does every `image_url` data URL. Pure: nothing is read or written, the input is never
 * mutated and unchanged sub-objects are shared.
 */
import { createHash } from 'node:crypto'
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
  return transform(value, false) as T
}

function transform (value: unknown, inContentArray: boolean): unknown {
  if (typeof value !== 'object' || value === null) return value
  if (Array.isArray(value)) return transformArray(value, inContentArray)
  const obj = value as Record<string, unknown>
  if (inContentArray && qualifies(obj)) return { ...obj, data: refOf(obj) }
  let out: Record<string, unknown> | undefined
  for (const key of Object.keys(obj)) {
    const v = obj[key]
    const t = key === 'image_url' && isImageDataUrl(v) ? dataUrlRef(v) : transform(v, key === 'content' && Array.isArray(v))
    if (t === v) continue
    out ??= { ...obj }
    // A plain assignment to `__proto__` would set the prototype instead of the key.
    Object.defineProperty(out, key, { value: t, enumerable: true, writable: true, configurable: true })
  }
  return out ?? obj
}

function transformArray (arr: readonly unknown[], isContent: boolean): unknown[] {
  let out: unknown[] | undefined
  for (let i = 0; i < arr.length; i++) {
    const t = transform(arr[i], isContent)
    if (t !== arr[i]) {
      out ??= arr.slice()
      out[i] = t
    }
  }
  return out ?? (arr as unknown[])
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
