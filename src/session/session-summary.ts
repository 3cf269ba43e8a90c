/**
 * The listing facts of a session (SPEC.md §11.1), computed in one pass over its records and
 * kept up to date incrementally by callers that feed new entries as they come.
 */
import { isObject } from './guards.js'
import { fileVersion } from './migrate.js'
import type { FileRecord } from './types.js'

export const NO_MESSAGES = '(no messages)'

/** Counts and texts of the records after the header; feed records in file order. */
export class SessionSummary {
  /** Number of `message` records, all roles and branches. */
  messageCount = 0
  /**
   * Number of entries (§1.2): records with a string type other than `session` and a non-empty id.
   * In a file older than version 2 it counts what the migration makes entries (§4.2: every
   * record after the header with a string type other than `session` gets an id), so that a
   * listing agrees with the session once opened.
   */
  entryCount = 0
  readonly #unmigrated: boolean
  /** Text of the first `user` message with non-empty text. */
  firstMessage: string | undefined
  /** `shortSummary` of the last compaction, if that compaction has one. */
  compactionTitle: string | undefined
  /** Non-empty texts of every user and assistant message, when collected. */
  readonly texts: string[] | undefined

  /**
   * `collectTexts`: keep every user/assistant text (for `allMessagesText`). `unmigrated`: the
   * records come from a file older than version 2, which gives its records their ids on load.
   */
  constructor (collectTexts = false, unmigrated = false) {
    this.texts = collectTexts ? [] : undefined
    this.#unmigrated = unmigrated
  }

  /** Summarizes `records[from..]`; the header is at index 0, so the default skips it. */
  static of (records: readonly FileRecord[], collectTexts = false, from = 1): SessionSummary {
    const version = records[0] === undefined ? undefined : fileVersion(records[0])
    const summary = new SessionSummary(collectTexts, version === 1)
    for (let i = from; i < records.length; i++) summary.add(records[i] as FileRecord)
    return summary
  }

  add (record: FileRecord): void {
    if (typeof record.type === 'string' && record.type !== 'session' &&
      (this.#unmigrated || (typeof record.id === 'string' && record.id !== ''))) this.entryCount++
    if (record.type === 'compaction') {
      // The last compaction decides, even when it has no shortSummary.
      this.compactionTitle = typeof record.shortSummary === 'string' ? record.shortSummary : undefined
    }
    if (record.type !== 'message') return
    this.messageCount++
    const message = record.message
    if (!isObject(message) || (message.role !== 'user' && message.role !== 'assistant')) return
    if (this.texts === undefined && (message.role !== 'user' || this.firstMessage !== undefined)) return
    const text = messageText(message)
    if (text === '') return
    this.texts?.push(text)
    if (message.role === 'user') this.firstMessage ??= text
  }
}

/** A string `content` as is; an array → the `text` of its `text` blocks joined with one space. */
export function messageText (message: FileRecord): string {
  const content = message.content
  if (typeof content === 'string') return content
  if (!Array.isArray(content)) return ''
  const parts: string[] = []
  for (const block of content) {
    if (isObject(block) && block.type === 'text' && typeof block.text === 'string') parts.push(block.text)
  }
  return parts.join(' ')
}
