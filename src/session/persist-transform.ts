/**
 * The write-side transformation of records (SPEC.md §9.1–§9.3) and blob-ref resolution on load
 * (§9.5). Writes work on a copy: the input is never mutated, unchanged sub-objects are shared,
 * and a record with nothing to change is returned as the same object.
 */
import { createHash } from 'node:crypto'
import type { BlobRef, BlobStore } from '../blobs/types.js'
import { copyOnWrite, DESCEND, type CopyOnWriteRules } from './copy-on-write.js'
import { stringifyJson } from './json-text.js'
import { isNonEmptyString, isObject } from './guards.js'
import { isEntry } from './tree.js'
import {
  BLOB_EXTERNALIZE_THRESHOLD, BLOB_REF_PREFIX, MAX_PERSIST_CHARS, TRUNCATION_NOTICE, type FileRecord,
} from './types.js'

/** A valid blob ref: the prefix plus 64 lowercase hex (§9.5). Anything else is plain data. */
export const BLOB_REF_RE = /^blob:sha256:[0-9a-f]{64}$/

/** True when `s` is a valid blob ref (`^blob:sha256:[0-9a-f]{64}$`). @see SPEC.md §9.5 */
export function isBlobRef (s: unknown): s is BlobRef {
  return typeof s === 'string' && BLOB_REF_RE.test(s)
}

/** Keys removed at any depth before writing (§9.2). */
const TRANSIENT_KEYS = new Set(['partialJson', 'jsonlEvents'])
const KEEP_CHARS = MAX_PERSIST_CHARS - TRUNCATION_NOTICE.length

/** Blob bytes to store before the line, by hash. */
type PendingBlobs = Map<string, Buffer>

/**
 * The stored form of `record`: strings over 500,000 code units truncated with the notice (never
 * a provider signature, nor any string of a signed block: the agents keep those whole),
 * `partialJson`/`jsonlEvents` removed, `lineCount` recomputed where §9.2 says so, and large
 * image blocks in `content` arrays replaced by `blob:sha256:<hex>` refs. Every referenced blob
 * is put (and awaited) before this resolves, so it is stored before the line is written.
 * @see SPEC.md §9.1, §9.2, §9.3, §9.4
 */
export async function prepareRecordForWrite (record: FileRecord, blobs: BlobStore): Promise<FileRecord> {
  const pending: PendingBlobs = new Map()
  const stored = transformObject(record, pending)
  for (const [hash, bytes] of pending) {
    const result = await blobs.put(bytes)
    if (result.hash !== hash) throw new Error(`blob store returned hash ${result.hash}, expected ${hash}`)
  }
  return stored
}

/**
 * The stored line of `record` (`serializeRecord(await prepareRecordForWrite(record))`), computed
 * synchronously, or `undefined` when the record has image data to externalize: blob writes are
 * asynchronous and must precede the line, so such a record goes through `prepareRecordForWrite`.
 */
export function storedLineSync (record: FileRecord): string | undefined {
  const form = storedForm(record)
  return form === undefined ? undefined : form.line + '\n'
}

/**
 * The stored line of `record` without its `"\n"`, when storing it needs no blob to be put first,
 * also telling whether the stored form is `record` itself (nothing in it was cut, removed or
 * externalized): the line is then `JSON.stringify(record)`.
 */
export function storedForm (record: FileRecord): { line: string, same: boolean } | undefined {
  const pending: PendingBlobs = new Map()
  const stored = transformObject(record, pending)
  return pending.size > 0 ? undefined : { line: stringifyJson(stored) as string, same: stored === record }
}

/**
 * The stored line of `record` (`serializeRecord(await prepareRecordForWrite(record))`) without
 * storing any blob: image data shows as the ref it would get. Two records are stored alike
 * exactly when these lines are equal.
 */
export function storedTextOf (record: FileRecord): string {
  return serializeRecord(transformObject(record, new Map()))
}

/** One JSONL line: `JSON.stringify(record)` plus `"\n"`, at any depth. @see SPEC.md §3.1 */
export function serializeRecord (record: FileRecord): string {
  return stringifyJson(record) + '\n'
}

/**
 * §9.2 truncation: the first 499,953 code units (one fewer when the last kept unit is a high
 * surrogate) plus `TRUNCATION_NOTICE`; strings of at most 500,000 units are returned as is.
 */
export function truncateForPersist (s: string): string {
  if (s.length <= MAX_PERSIST_CHARS) return s
  let keep = KEEP_CHARS
  const last = s.charCodeAt(keep - 1)
  if (last >= 0xd800 && last <= 0xdbff) keep--
  return s.slice(0, keep) + TRUNCATION_NOTICE
}

/** Keys holding provider signatures: a cut signature is rejected by the provider, so never cut. */
const SIGNATURE_KEYS: ReadonlySet<string> = new Set(['thinkingSignature', 'thoughtSignature', 'textSignature'])

/**
 * A block the provider signed or encrypted, which the agents persist verbatim (no string in it is
 * cut): thinking with a signature, text with a text signature, a tool call with a thought
 * signature, redacted thinking, and an encrypted reasoning item.
 */
function isSignedBlock (obj: Record<string, unknown>): boolean {
  switch (obj.type) {
    case 'thinking': return isNonEmptyString(obj.thinkingSignature)
    case 'text': return isNonEmptyString(obj.textSignature)
    case 'toolCall': return isNonEmptyString(obj.thoughtSignature)
    case 'redactedThinking': return isNonEmptyString(obj.data)
    case 'reasoning': return isNonEmptyString(obj.encrypted_content)
    default: return false
  }
}

/**
 * §9.2 and §9.3 as copy-on-write rules (walked iteratively: entries of other writers may nest
 * thousands of levels deep). Strings are truncated (never a provider signature), transient keys
 * dropped, a changed object with a string `content` and a number `lineCount` gets its
 * `lineCount` recomputed, a block the provider signed is kept whole, an `image_url` data URL is
 * stored as a blob, and a qualifying image block in a `content` array gets the ref of its bytes
 * as `data`.
 */
function rulesFor (pending: PendingBlobs): CopyOnWriteRules {
  return {
    enter: (value, inContent, key) => {
      if (typeof value === 'string') {
        if (key === 'image_url' && isImageDataUrl(value)) return externalizeDataUrl(value, pending)
        return key !== undefined && SIGNATURE_KEYS.has(key) ? value : truncateForPersist(value)
      }
      if (typeof value !== 'object' || value === null) return value
      if (!Array.isArray(value) && !(inContent && isExternalizable(value as Record<string, unknown>)) &&
        isSignedBlock(value as Record<string, unknown>)) return value
      return DESCEND
    },
    dropKey: (key) => TRANSIENT_KEYS.has(key),
    exit: (source, copy, inContent) => {
      if (Array.isArray(source)) return copy ?? source
      const out = copy as Record<string, unknown> | undefined
      if (out !== undefined && typeof out.content === 'string' && typeof out.lineCount === 'number') {
        out.lineCount = out.content.split('\n').length
      }
      const block = source as Record<string, unknown>
      return inContent && isExternalizable(block) ? externalize(block, out, pending) : out ?? block
    },
  }
}

/** Returns `obj` itself when nothing below it changed, else a copy with the same key order. */
function transformObject (obj: Record<string, unknown>, pending: PendingBlobs): Record<string, unknown> {
  return copyOnWrite(obj, rulesFor(pending)) as Record<string, unknown>
}

/** An image block whose string `data` has at least 1024 code units (§9.3). */
function isExternalizable (block: Record<string, unknown>): boolean {
  return block.type === 'image' && typeof block.data === 'string' && block.data.length >= BLOB_EXTERNALIZE_THRESHOLD
}

/** A provider image data URL (`data:image/…;base64,…`), which the agents store as a blob (§9.3). */
export function isImageDataUrl (value: unknown): value is string {
  return typeof value === 'string' && value.startsWith('data:image/') && value.includes(';base64,')
}

/** The ref of a data URL stored whole as UTF-8, as the agents store `image_url` values. */
function externalizeDataUrl (url: string, pending: PendingBlobs): string {
  const bytes = Buffer.from(url, 'utf8')
  const hash = createHash('sha256').update(bytes).digest('hex')
  pending.set(hash, bytes)
  return BLOB_REF_PREFIX + hash
}

/**
 * The stored copy of an image block: `data` becomes the ref of its base64-decoded bytes (Node's
 * lenient decoder); the other fields went through §9.2 like any value (`transformed`: the
 * block's copy when one of them changed).
 */
function externalize (block: Record<string, unknown>, transformed: Record<string, unknown> | undefined, pending: PendingBlobs): Record<string, unknown> {
  const bytes = Buffer.from(block.data as string, 'base64')
  const hash = createHash('sha256').update(bytes).digest('hex')
  pending.set(hash, bytes)
  const out = transformed ?? { ...block }
  out.data = BLOB_REF_PREFIX + hash
  return out
}

/**
 * Replaces, in place, every valid blob ref the agents' readers resolve when they load a file
 * (docs/compatibility.md), in every entry at any depth:
 * - the `data` of an image block that is, or is an element of (arrays nested in arrays count),
 *   the value of a `content` key, and of an image payload in an `images` array (`type: "image"`
 *   or an `image/*` `mimeType`): the canonical base64 of the blob's bytes;
 * - the `result` of an `image_generation_call` object: base64 as well;
 * - an `image_url` string: the blob's bytes as UTF-8 (the data URL stored whole).
 * A missing blob leaves the ref and calls `warn(hash)`. Invalid refs are never looked up; the
 * header and opaque records are left alone.
 * @see SPEC.md §9.5
 */
export async function resolveBlobRefs (
  entries: readonly FileRecord[],
  blobs: BlobStore,
  warn: (hash: string) => void
): Promise<void> {
  const cache = new Map<string, Buffer | null>()
  const bytesOf = async (ref: string): Promise<Buffer | null> => {
    const hash = ref.slice(BLOB_REF_PREFIX.length)
    let bytes = cache.get(hash)
    if (bytes === undefined) {
      bytes = await blobs.get(hash)
      cache.set(hash, bytes)
    }
    if (bytes === null) warn(hash)
    return bytes
  }
  for (const record of entries) {
    if (isEntry(record) && containsRef(record)) await resolveIn(record, undefined, bytesOf)
  }
}

type BytesOf = (ref: string) => Promise<Buffer | null>

/** Walks `value` (found under `key`) and resolves the refs in reader positions. Iterative over arrays. */
async function resolveIn (value: unknown, key: string | undefined, bytesOf: BytesOf): Promise<void> {
  if (Array.isArray(value)) {
    for (const item of value) await resolveIn(item, key, bytesOf)
    return
  }
  if (!isObject(value)) return
  if (key !== 'frames' && isImagePosition(value, key) && isBlobRef(value.data)) {
    const bytes = await bytesOf(value.data)
    if (bytes !== null) value.data = bytes.toString('base64')
    return
  }
  if (value.type === 'image_generation_call' && isBlobRef(value.result)) {
    const bytes = await bytesOf(value.result)
    if (bytes !== null) value.result = bytes.toString('base64')
  }
  if (isBlobRef(value.image_url)) {
    const bytes = await bytesOf(value.image_url)
    if (bytes !== null) value.image_url = bytes.toString('utf8')
  }
  for (const child of Object.keys(value)) {
    const v = value[child]
    if (typeof v === 'object' && v !== null) await resolveIn(v, child, bytesOf)
  }
}

/** An image block under `content`, or an image payload under `images`. */
function isImagePosition (value: Record<string, unknown>, key: string | undefined): value is Record<string, unknown> & { data: string } {
  if (typeof value.data !== 'string') return false
  if (key === 'content') return value.type === 'image'
  if (key === 'images') return value.type === 'image' || (typeof value.mimeType === 'string' && value.mimeType.toLowerCase().startsWith('image/'))
  return false
}

/** Whether any string below `value` is a valid ref: most entries have none and are skipped. */
function containsRef (value: unknown): boolean {
  const stack: unknown[] = [value]
  while (stack.length > 0) {
    const v = stack.pop()
    if (typeof v === 'string') {
      if (v.length === 76 && isBlobRef(v)) return true
    } else if (Array.isArray(v)) {
      for (const item of v) stack.push(item)
    } else if (typeof v === 'object' && v !== null) {
      for (const k of Object.keys(v)) stack.push((v as Record<string, unknown>)[k])
    }
  }
  return false
}
