/**
 * Listing facts of a session (API.md "SessionInfo", SPEC.md §11.1), computed in one pass over
 * its records and kept up to date incrementally for open sessions.
 */
import { isObject } from '../session/guards.js'
import type { FileRecord, SessionHeader } from '../session/types.js'
import type { SessionInfoView } from './types.js'

const NO_MESSAGES = '(no messages)'

/** Counts and texts of the records after the header; feed records in file order. */
export class SessionSummary {
  messageCount = 0
  entryCount = 0
  firstMessage: string | undefined
  /** The `shortSummary` of the last compaction, if that compaction has one. */
  compactionTitle: string | undefined
  /** How many records were fed so far. */
  consumed = 0

  add (record: FileRecord): void {
    this.consumed++
    if (typeof record.type === 'string' && record.type !== 'session' &&
      typeof record.id === 'string' && record.id !== '') this.entryCount++
    if (record.type === 'compaction') {
      this.compactionTitle = typeof record.shortSummary === 'string' ? record.shortSummary : undefined
    }
    if (record.type !== 'message') return
    this.messageCount++
    if (this.firstMessage !== undefined || !isObject(record.message) || record.message.role !== 'user') return
    const text = messageText(record.message)
    if (text !== '') this.firstMessage = text
  }
}

/** A string `content` as is; an array → the `text` of its `text` blocks joined with one space. */
function messageText (message: Record<string, unknown>): string {
  const content = message.content
  if (typeof content === 'string') return content
  if (!Array.isArray(content)) return ''
  const parts: string[] = []
  for (const block of content) {
    if (isObject(block) && block.type === 'text' && typeof block.text === 'string') parts.push(block.text)
  }
  return parts.join(' ')
}

/** An ISO string for a header timestamp or epoch ms; the raw value when it is no valid instant. */
export function isoOf (value: unknown): string {
  const date = typeof value === 'string' || typeof value === 'number' ? new Date(value) : new Date(NaN)
  return Number.isNaN(date.getTime()) ? String(value ?? '') : date.toISOString()
}

/** The listing item of a session. */
export function infoView (header: SessionHeader | FileRecord, summary: SessionSummary, modifiedMs: number): SessionInfoView {
  const info: SessionInfoView = {
    id: String(header.id),
    cwd: typeof header.cwd === 'string' ? header.cwd : '',
    created: isoOf(header.timestamp),
    modified: isoOf(modifiedMs),
    messageCount: summary.messageCount,
    firstMessage: summary.firstMessage ?? NO_MESSAGES,
    entryCount: summary.entryCount,
  }
  const title = typeof header.title === 'string' ? header.title : summary.compactionTitle
  if (title !== undefined) info.title = title
  if (typeof header.parentSession === 'string') info.parentSession = header.parentSession
  return info
}
