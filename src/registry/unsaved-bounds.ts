/**
 * The bounds of a session held in memory under the deferral rule (SPEC.md §8.3: no file until
 * the first assistant message). Such a session is never written out early to make room, because
 * that would leave a file the deferral rule says must not exist; an append that would take it
 * past a bound is refused whole instead (413), and an append that carries the assistant message
 * is always accepted, since it saves the session.
 */
import { UnsavedSessionTooLarge } from '../errors.js'
import type { OpenSession } from './open-session.js'
import type { RegistryLimits } from './registry-core.js'

/** True for a `message` entry of role `assistant`: the entry that ends the deferral. */
export function isAssistantMessage (entry: { type?: unknown, message?: unknown }): boolean {
  return entry.type === 'message' && (entry.message as { role?: unknown } | undefined)?.role === 'assistant'
}

/** About how many bytes `entries` hold: `known` (the request body's length) when given, else their JSON. */
export function batchBytes (entries: readonly object[], known?: number): number {
  if (known !== undefined && Number.isSafeInteger(known) && known >= 0) return known
  let bytes = 0
  for (const entry of entries) bytes += JSON.stringify(entry).length
  return bytes
}

/**
 * Throws `UnsavedSessionTooLarge` (413) when adding `count` entries of `bytes` bytes, none an
 * assistant message, would take the still unsaved session of `slot` past a bound.
 */
export function assertUnsavedFits (limits: RegistryLimits, slot: OpenSession, count: number, bytes: number): void {
  if (slot.saved) return
  const { maxUnsavedSessionEntries: maxEntries, maxUnsavedSessionBytes: maxBytes } = limits
  if (maxEntries > 0 && slot.model.entryCount() + count > maxEntries) {
    throw new UnsavedSessionTooLarge(slot.id, `${maxEntries} entries`)
  }
  if (maxBytes > 0 && slot.bytes + bytes > maxBytes) throw new UnsavedSessionTooLarge(slot.id, `${maxBytes} bytes`)
}
