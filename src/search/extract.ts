/**
 * What of a session the search indexes hold: one document per searchable part of a record,
 * the same for every store.
 * - `message` entries: text of every role (user and assistant text, tool results, shell output),
 *   tool-call names and arguments; an assistant's thinking is a part of its own (`thinking`),
 *   searched only when a query asks for it;
 * - `custom_message` content, `compaction` summaries (and short summaries), `branch_summary`
 *   summaries;
 * - the header's `title` (a document of type `session`, with no entry id).
 * Other entry types, unknown ones included, and image data hold nothing to search.
 * Records are walked without recursion, so nesting of any depth costs no stack.
 */
import { indexText } from './text.js'

/** The part of a record a document holds. */
export const PART_TEXT = 0
export const PART_THINKING = 1

/** One searchable document. */
export interface SearchDoc {
  /** The entry's id; `null` for the session's title. */
  entryId: string | null
  /** The record's `type` (`session` for the title). */
  type: string
  /** The message's role, for `message` entries. */
  role: string | null
  /** The record's `timestamp` as stored (`''` when it has none). */
  timestamp: string
  part: typeof PART_TEXT | typeof PART_THINKING
  /** The text as the indexes hold it (text.ts). */
  text: string
}

/** Characters of one document beyond which its text is not indexed. */
export const MAX_DOC_CHARS = 1_000_000

type Rec = Record<string, unknown>
const isRec = (v: unknown): v is Rec => typeof v === 'object' && v !== null && !Array.isArray(v)
const str = (v: unknown): string | undefined => typeof v === 'string' ? v : undefined

/** Every string inside `value` (object keys left out), in document order, up to `MAX_DOC_CHARS`. */
export function stringsIn (value: unknown, into: string[] = []): string[] {
  const stack: unknown[] = [value]
  let chars = 0
  while (stack.length > 0 && chars < MAX_DOC_CHARS) {
    const v = stack.pop()
    if (typeof v === 'string') {
      into.push(v)
      chars += v.length
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push(v[i])
    } else if (isRec(v)) {
      const values = Object.values(v)
      for (let i = values.length - 1; i >= 0; i--) stack.push(values[i])
    }
  }
  return into
}

/** The text and thinking of message content (a string, or blocks). */
function contentText (content: unknown, text: string[], thinking: string[]): void {
  if (typeof content === 'string') {
    text.push(content)
    return
  }
  if (!Array.isArray(content)) return
  for (const block of content) {
    if (!isRec(block)) continue
    if (block.type === 'text') text.push(str(block.text) ?? '')
    else if (block.type === 'thinking') thinking.push(str(block.thinking) ?? '')
    else if (block.type === 'toolCall') {
      text.push(str(block.name) ?? '')
      stringsIn(block.arguments, text)
    }
  }
}

function messageParts (message: unknown, text: string[], thinking: string[]): string | null {
  if (!isRec(message)) return null
  const role = str(message.role) ?? null
  if (role === 'toolResult') text.push(str(message.toolName) ?? '')
  if (role === 'bashExecution' || role === 'pythonExecution') {
    text.push(str(message.command) ?? str(message.code) ?? '', str(message.output) ?? '')
  }
  contentText(message.content, text, thinking)
  return role
}

const joined = (parts: string[]): string => {
  const text = parts.filter((p) => p !== '').join('\n')
  return indexText(text.length > MAX_DOC_CHARS ? text.slice(0, MAX_DOC_CHARS) : text)
}

/** The documents of one parsed record (a header or an entry); none for a record with nothing to search. */
export function docsOf (record: unknown): SearchDoc[] {
  if (!isRec(record)) return []
  const type = str(record.type)
  const timestamp = str(record.timestamp) ?? ''
  if (type === 'session') {
    const title = str(record.title)
    return title === undefined || title === '' ? [] : [{ entryId: null, type, role: null, timestamp, part: PART_TEXT, text: joined([title]) }]
  }
  const entryId = str(record.id)
  if (type === undefined || entryId === undefined || entryId === '') return []
  const text: string[] = []
  const thinking: string[] = []
  let role: string | null = null
  if (type === 'message') role = messageParts(record.message, text, thinking)
  else if (type === 'custom_message') contentText(record.content, text, [])
  else if (type === 'compaction') text.push(str(record.shortSummary) ?? '', str(record.summary) ?? '')
  else if (type === 'branch_summary') text.push(str(record.summary) ?? '')
  const docs: SearchDoc[] = []
  const body = joined(text)
  if (body.trim() !== '') docs.push({ entryId, type, role, timestamp, part: PART_TEXT, text: body })
  const thought = joined(thinking)
  if (thought.trim() !== '') docs.push({ entryId, type, role, timestamp, part: PART_THINKING, text: thought })
  return docs
}

/** The documents of one JSONL line; none for a line that is not JSON. */
export function docsOfLine (line: string): SearchDoc[] {
  let record: unknown
  try {
    record = JSON.parse(line)
  } catch {
    return []
  }
  return docsOf(record)
}
