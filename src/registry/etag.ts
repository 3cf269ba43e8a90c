/**
 * Session etags and `If-Match` (API.md "Conventions"). An etag hashes what a client can observe
 * of a session: its id, entry count, leaf and header, plus a revision stamp that changes on
 * every leaf move or header change. The stamp is `<boot id>:<n>` within one registry instance
 * and empty for a session nobody moved or renamed since it was loaded, so an etag survives
 * eviction and reload unchanged while nothing changed, and an etag minted before a restart
 * never matches a state reached by a later mutation.
 */
import { hash } from 'node:crypto'
import type { SessionHeader } from '../session/types.js'

export interface EtagInput {
  id: string
  entryCount: number
  leafId: string | null
  header: SessionHeader
  /** `''` or `<boot id>:<revision>`. */
  stamp: string
}

/**
 * A strong, quoted etag: 22 base64url characters of a SHA-256 over the NUL-joined fields. One
 * one-shot hash of one string (an etag is computed for every append).
 */
export function computeEtag (input: EtagInput): string {
  const text = `${input.id}\0${input.entryCount}\0${input.leafId ?? '\u0001null'}\0${JSON.stringify(input.header)}\0${input.stamp}`
  return `"${hash('sha256', text, 'base64url').slice(0, 22)}"`
}

/**
 * True when `ifMatch` is absent, `*`, or lists `etag` (strong comparison; an unquoted value is
 * accepted as the same tag). Weak tags (`W/"…"`) never match, as RFC 9110 §13.1.1 requires.
 */
export function ifMatchSatisfied (ifMatch: string | undefined, etag: string): boolean {
  if (ifMatch === undefined) return true
  for (const part of ifMatch.split(',')) {
    const tag = part.trim()
    if (tag === '*') return true
    if (tag.startsWith('W/')) continue
    if (tag === etag || `"${tag}"` === etag) return true
  }
  return false
}
