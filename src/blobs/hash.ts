/**
 * Content addresses of blobs (SPEC.md §9.3–§9.5): 64 lowercase hex characters of SHA-256, and
 * refs `blob:sha256:<hash>`. Only strings that pass `isBlobHash` are ever used to build a path.
 */
import { createHash } from 'node:crypto'
import { InvalidArgument } from '../errors.js'
import type { BlobRef } from './types.js'

/** The ref prefix of SPEC.md §1.3 (`BLOB_REF_PREFIX`). */
export const BLOB_REF_PREFIX = 'blob:sha256:'

const HASH = /^[0-9a-f]{64}$/
const REF = /^blob:sha256:([0-9a-f]{64})$/

/** SHA-256 of `bytes` as 64 lowercase hex characters. */
export function sha256Hex (bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex')
}

/** True only for exactly 64 lowercase hex characters (`^[0-9a-f]{64}$`). */
export function isBlobHash (value: unknown): value is string {
  return typeof value === 'string' && HASH.test(value)
}

/** Throws `InvalidArgument` (`SS_INVALID_ARGUMENT`) unless `value` is a valid blob hash. */
export function assertBlobHash (value: unknown): asserts value is string {
  if (!isBlobHash(value)) {
    const shown = typeof value === 'string' ? JSON.stringify(value.slice(0, 80)) : typeof value
    throw new InvalidArgument(`Invalid blob hash ${shown}: expected 64 lowercase hex characters`)
  }
}

/** `blob:sha256:<hash>`; throws `InvalidArgument` for an invalid hash. */
export function blobRefFor (hash: string): BlobRef {
  assertBlobHash(hash)
  return `${BLOB_REF_PREFIX}${hash}`
}

/**
 * The hash inside a valid ref (`^blob:sha256:[0-9a-f]{64}$`), or `undefined` for anything else,
 * which callers then treat as plain data (§9.5).
 */
export function parseBlobRef (value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined
  return REF.exec(value)?.[1]
}
