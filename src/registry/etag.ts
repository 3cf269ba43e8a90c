/**
 * Session etags and `If-Match` (API.md "Conventions": opaque). An etag stands for what a client
 * can observe of a session: its id, entry count, leaf and header, plus a revision stamp that
 * changes on every leaf move or header change. The stamp is `<boot id>:<n>` within one registry instance
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

/** A leaf id as it may stand in an etag as it is (every id the service mints is 8 or 16 hex digits). */
const PLAIN_ID = /^[\w-]{1,64}$/

/** 22 base64url characters of a SHA-256 of `text`. */
const digest = (text: string): string => hash('sha256', text, 'base64url').slice(0, 22)

/**
 * The leaf's part of an etag: a plain id as it is, `''` for no leaf, `~` and a digest for any
 * other id (`~` is not in a plain id, so no two leaves share a part).
 */
function leafTag (leafId: string | null): string {
  if (leafId === null) return ''
  return PLAIN_ID.test(leafId) ? leafId : `~${digest(leafId)}`
}

/**
 * The etags of one session. A strong, quoted etag `"<state>.<entry count in base 36>.<leaf>"`:
 * `<state>` is 22 base64url characters of a SHA-256 over the NUL-joined id, header (as JSON)
 * and stamp. Only the header or the stamp change that digest, so it is computed again only
 * when they did: an append, whose etag is computed on every call, changes the count and leaf.
 */
export class SessionEtags {
  #header = ''
  #stamp = ''
  #state: string | undefined

  of (input: EtagInput): string {
    const header = JSON.stringify(input.header)
    if (this.#state === undefined || header !== this.#header || input.stamp !== this.#stamp) {
      this.#state = digest(`${input.id}\0${header}\0${input.stamp}`)
      this.#header = header
      this.#stamp = input.stamp
    }
    return `"${this.#state}.${input.entryCount.toString(36)}.${leafTag(input.leafId)}"`
  }
}

/** The etag of a session in the state `input` (`SessionEtags.of`, without remembering anything). */
export function computeEtag (input: EtagInput): string {
  return new SessionEtags().of(input)
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
