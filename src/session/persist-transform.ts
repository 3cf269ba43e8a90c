/**
 * The write-side transformation of records (SPEC.md §9.1–§9.3) and blob-ref resolution on load
 * (§9.5). Writes work on a copy: the input is never mutated, unchanged sub-objects are shared,
 * and a record with nothing to change is returned as the same object.
 */
import { createHash } from 'node:crypto'
import type { BlobRef, BlobStore } from '../blobs/types.js'
import { copyOnWrite, DESCEND, type CopyOnWriteRules } from './copy-on-write.js'
import { stringifyJson } from './json-text.js'
import { isObject } from './guards.js'
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
 * The stored form of `record`: strings over 500,000 code units truncated with the notice,
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
  const pending: PendingBlobs = new Map()
  const stored = transformObject(record, pending)
  return pending.size > 0 ? undefined : serializeRecord(stored)
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

/**
 * §9.2 and §9.3 as copy-on-write rules (walked iteratively: entries of other writers may nest
 * thousands of levels deep). Strings are truncated, transient keys dropped, a changed object
 * with a string `content` and a number `lineCount` gets its `lineCount` recomputed, and a
 * qualifying image block in a `content` array gets the ref of its bytes as `data`.
 */
function rulesFor (pending: PendingBlobs): CopyOnWriteRules {
  return {
    enter: (value) => {
      if (typeof value === 'string') return truncateForPersist(value)
      return typeof value === 'object' && value !== null ? DESCEND : value
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
 * Replaces, in place, valid blob refs in image blocks of `message.content` arrays (`message`
 * entries) and `content` arrays (`custom_message` entries) with the canonical base64 of the
 * blob's bytes. A missing blob leaves the ref and calls `warn(hash)`. Invalid refs and refs
 * anywhere else are never looked up.
 * @see SPEC.md §9.5
 */
export async function resolveBlobRefs (
  entries: readonly FileRecord[],
  blobs: BlobStore,
  warn: (hash: string) => void
): Promise<void> {
  const cache = new Map<string, Buffer | null>()
  for (const record of entries) {
    const content = resolvableContent(record)
    if (content === undefined) continue
    for (const block of content) {
      if (!isObject(block) || block.type !== 'image' || !isBlobRef(block.data)) continue
      const hash = block.data.slice(BLOB_REF_PREFIX.length)
      let bytes = cache.get(hash)
      if (bytes === undefined) {
        bytes = await blobs.get(hash)
        cache.set(hash, bytes)
      }
      if (bytes === null) warn(hash)
      else block.data = bytes.toString('base64')
    }
  }
}

/** The content array §9.5 resolves for this record, if any. */
function resolvableContent (record: FileRecord): unknown[] | undefined {
  if (!isEntry(record)) return undefined
  if (record.type === 'message') {
    const message = record.message
    return isObject(message) && Array.isArray(message.content) ? message.content : undefined
  }
  if (record.type === 'custom_message') return Array.isArray(record.content) ? record.content : undefined
  return undefined
}
