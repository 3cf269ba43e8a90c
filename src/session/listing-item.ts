/**
 * Listing facts of a session (API.md "SessionInfo", SPEC.md §11.1), computed in one pass over
 * its records and kept up to date incrementally for open sessions. Stores keep the item with
 * every change and answer listings with it.
 */
import type { ListingItem } from '../storage/store.js'
import { isValidHeader } from './parser.js'
import { publicHeader } from './public-header.js'
import { NO_MESSAGES, SessionSummary } from './session-summary.js'
import type { FileRecord, SessionHeader } from './types.js'

export { SessionSummary }

/** An ISO string for a header timestamp or epoch ms; the raw value when it is no valid instant. */
export function isoOf (value: unknown): string {
  const date = typeof value === 'string' || typeof value === 'number' ? new Date(value) : new Date(NaN)
  return Number.isNaN(date.getTime()) ? String(value ?? '') : date.toISOString()
}

/** Header timestamps and their `isoOf`, for the listing item that every append makes anew. */
const createdTexts = new Map<string, string>()
const CREATED_TEXTS_MAX = 4096

/** `isoOf(value)`, remembered for string values (parsing a date costs more than the rest of the item). */
function createdOf (value: unknown): string {
  if (typeof value !== 'string') return isoOf(value)
  let text = createdTexts.get(value)
  if (text === undefined) {
    if (createdTexts.size >= CREATED_TEXTS_MAX) createdTexts.clear()
    createdTexts.set(value, text = isoOf(value))
  }
  return text
}

/**
 * Most UTF-16 code units of `firstMessage` and `title` in a listing item (API.md "SessionInfo"),
 * which listings and `/v1/events` send: a session's first message can be megabytes.
 */
export const LISTING_TEXT_MAX = 1024

/** Longest title accepted on create and rename, in characters (400 beyond; routes/sessions.schema.ts). */
export const MAX_TITLE_LENGTH = 1024

/**
 * `text`, cut to `max - 1` code units plus `…` when longer (a surrogate pair is never split). A
 * cut text is a copy of its own: a plain `slice` would share (and keep alive) the whole of
 * `text`, so that a cached cut of a megabyte message would still hold the megabyte.
 */
export function cutText (text: string, max: number): string {
  if (text.length <= max) return text
  let end = max - 1
  const last = text.charCodeAt(end - 1)
  if (last >= 0xd800 && last <= 0xdbff) end-- // a high surrogate without its partner
  return Buffer.from(text.slice(0, end) + '…', 'utf16le').toString('utf16le')
}

/** The listing item of a session whose header is as answers show it (`publicHeader`). */
export function listingItem (header: SessionHeader | FileRecord, summary: SessionSummary, modifiedMs: number): ListingItem {
  const info: ListingItem = {
    id: String(header.id),
    cwd: typeof header.cwd === 'string' ? header.cwd : '',
    created: createdOf(header.timestamp),
    modifiedMs,
    messageCount: summary.messageCount,
    firstMessage: cutText(summary.firstMessage ?? NO_MESSAGES, LISTING_TEXT_MAX),
    entryCount: summary.entryCount,
  }
  const title = typeof header.title === 'string' ? header.title : summary.compactionTitle
  if (title !== undefined) info.title = cutText(title, LISTING_TEXT_MAX)
  if (typeof header.parentSession === 'string') info.parentSession = header.parentSession
  return info
}

/**
 * The listing item of a session's records (header first), or undefined without a valid header.
 * Its first message and title are cut copies (cutText): what a store keeps of a session with a
 * megabyte first message is at most LISTING_TEXT_MAX characters of it.
 */
export function listingItemOf (records: readonly FileRecord[], dataDir: string, modifiedMs: number): ListingItem | undefined {
  const header = records[0]
  if (!isValidHeader(header)) return undefined
  return listingItem(publicHeader(header, dataDir), SessionSummary.of(records), modifiedMs)
}
