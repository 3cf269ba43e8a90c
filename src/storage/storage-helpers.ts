/**
 * Pure helpers shared by the storage adapters, so that both interpret patterns, byte counts and
 * UTF-8 exactly alike (SPEC.md §10.1).
 */
import { InvalidArgument } from '../errors.js'

/**
 * A filename matcher for `listFilesSync`: `*` (everything), `*<suffix>` such as `*.jsonl`, or an
 * exact name. Any other use of `*` is an `InvalidArgument`.
 */
export function nameMatcher (pattern: string): (name: string) => boolean {
  if (pattern === '*') return () => true
  const star = pattern.indexOf('*')
  if (star === -1) return (name) => name === pattern
  const suffix = pattern.slice(1)
  if (star !== 0 || suffix.includes('*')) throw new InvalidArgument(`Unsupported file pattern ${pattern}`)
  return (name) => name.endsWith(suffix)
}

/** Rejects a `maxBytes` that is not a non-negative safe integer. */
export function assertByteCount (maxBytes: number): void {
  if (!Number.isSafeInteger(maxBytes) || maxBytes < 0) {
    throw new InvalidArgument(`maxBytes must be a non-negative integer, got ${maxBytes}`)
  }
}

/** Shared: a decode without `stream` starts from a clean state every time. */
const UTF8 = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true })

/** UTF-8 decoding that keeps a BOM (like `readText`) and turns invalid or cut sequences into U+FFFD. */
export function decodeUtf8 (bytes: Uint8Array): string {
  return UTF8.decode(bytes)
}
