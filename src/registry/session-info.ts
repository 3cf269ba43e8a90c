/**
 * Listing facts of a session (API.md "SessionInfo", SPEC.md §11.1), computed in one pass over
 * its records and kept up to date incrementally for open sessions.
 */
import { NO_MESSAGES, SessionSummary } from '../session/session-summary.js'
import type { FileRecord, SessionHeader } from '../session/types.js'
import type { SessionInfoView } from './types.js'

export { SessionSummary }

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
