/**
 * The lenient JSONL parser and header checks (SPEC.md §5.1, §5.2). Never throws.
 */
import type { FileRecord, SessionHeader } from './types.js'

/**
 * Parses session-file text into its JSON objects, in file order. Drops a leading BOM, splits on
 * LF (one trailing CR removed per line), skips blank lines and every line that is not exactly one
 * JSON object: a torn last line, garbage, scalars, arrays, two values on one line.
 * @see SPEC.md §5.1
 */
export function parseJsonlLenient (text: string): FileRecord[] {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text
  const records: FileRecord[] = []
  let start = 0
  while (start <= body.length) {
    let end = body.indexOf('\n', start)
    if (end === -1) end = body.length
    const record = parseLine(body, start, end)
    if (record !== undefined) records.push(record)
    start = end + 1
  }
  return foldTitleSlot(records)
}

/**
 * The fixed-width title line newer agents write before the header so that a rename rewrites
 * only that line: `{"type":"title","v":1,"title","updatedAt","pad"[,"source"]}`.
 */
export function isTitleSlot (record: FileRecord | undefined): boolean {
  return record !== undefined && record.type === 'title' && record.v === 1 && typeof record.title === 'string' &&
    typeof record.updatedAt === 'string' && typeof record.pad === 'string' &&
    (record.source === undefined || record.source === 'auto' || record.source === 'user')
}

/**
 * Records as the agents read them: a title slot before a valid header is taken out and its
 * title (and source) replace the header's, an empty title removing it (docs/compatibility.md).
 * Mutates and returns `records`.
 */
export function foldTitleSlot (records: FileRecord[]): FileRecord[] {
  const slot = records[0]
  const header = records[1]
  if (!isTitleSlot(slot) || !isValidHeader(header)) return records
  records.shift()
  const { title, source } = slot as { title: string, source?: string }
  const target: FileRecord = header
  if (title !== '') target.title = title
  else delete target.title
  if (source !== undefined) target.titleSource = source
  else delete target.titleSource
  return records
}

/** The title slot line of `text` (with its `"\n"`), when its first line is one; else `''`. */
export function titleSlotLine (text: string): string {
  const end = text.indexOf('\n')
  if (end === -1) return ''
  const line = text.slice(text.charCodeAt(0) === 0xfeff ? 1 : 0, end + 1)
  return isTitleSlot(parseLine(line, 0, line.length - 1)) ? line : ''
}

/** The record of one line (without its `"\n"`) as `parseJsonlLenient` reads it; undefined when it is not an object. */
export function parseRecordLine (line: string): FileRecord | undefined {
  return parseLine(line, 0, line.length)
}

/** One line of `text` between `start` and `end` (exclusive), or undefined when it is not an object. */
function parseLine (text: string, start: number, end: number): FileRecord | undefined {
  if (end > start && text.charCodeAt(end - 1) === 13) end--
  let i = start
  while (i < end && isBlank(text.charCodeAt(i))) i++
  if (i === end) return undefined
  // Cheap pre-check: only a line that starts with `{` can be an object.
  if (text.charCodeAt(i) !== 123) return undefined
  try {
    const value: unknown = JSON.parse(text.slice(start, end))
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? value as FileRecord
      : undefined
  } catch {
    return undefined
  }
}

/**
 * `parseJsonlLenient` over text that arrives in pieces (a file read a chunk at a time), so that
 * the whole text never has to be held: `push` each piece in order, then `end`. The result is
 * exactly `parseJsonlLenient(pieces.join(''))`; `firstLine` is what the first line alone parses to.
 * @see SPEC.md §5.1
 */
export class JsonlStreamParser {
  readonly records: FileRecord[] = []
  /**
   * The records whose line may spell a blob ref (`mayHoldRef`): no other record holds one, so
   * resolving refs (§9.5) need not walk the others.
   */
  readonly refCandidates = new Set<FileRecord>()
  /** The record of the file's first line, if that line is one. */
  firstLine: FileRecord | undefined
  /** Nothing but an optional BOM and spaces, tabs, CR and LF so far (`isEmptyContent`). */
  blank = true
  /** The last character pushed, `''` before any. */
  lastChar = ''
  #pending = ''
  #started = false
  #line = 0

  push (chunk: string): void {
    if (chunk === '') return
    if (!this.#started) {
      this.#started = true
      if (chunk.charCodeAt(0) === 0xfeff) chunk = chunk.slice(1)
    }
    if (this.blank && !/^[ \t\r\n]*$/.test(chunk)) this.blank = false
    this.lastChar = chunk.charAt(chunk.length - 1) || this.lastChar
    let start = 0
    if (this.#pending !== '') {
      // Only the line that straddles the pieces is joined; the rest of `chunk` is read in place.
      const end = chunk.indexOf('\n')
      if (end === -1) {
        this.#pending += chunk
        return
      }
      const line = this.#pending + chunk.slice(0, end)
      this.#pending = ''
      this.#take(line, 0, line.length, mayHoldRef(line))
      start = end + 1
    }
    // The next place of each marker at or after the current line; each is looked for again only
    // once a line has passed it, so that the chunk is scanned once per marker.
    let sha = nextMarker(chunk, SHA_MARKER, start)
    let escape = nextMarker(chunk, ESCAPE_MARKER, start)
    for (let end = chunk.indexOf('\n', start); end !== -1; end = chunk.indexOf('\n', start)) {
      this.#take(chunk, start, end, sha < end || escape < end)
      if (sha < end) sha = nextMarker(chunk, SHA_MARKER, end + 1)
      if (escape < end) escape = nextMarker(chunk, ESCAPE_MARKER, end + 1)
      start = end + 1
    }
    this.#pending = chunk.slice(start)
  }

  /** Parses the last line (the text after the final `"\n"`, if any). */
  end (): FileRecord[] {
    this.#take(this.#pending, 0, this.#pending.length, mayHoldRef(this.#pending))
    this.#pending = ''
    return foldTitleSlot(this.records)
  }

  #take (text: string, start: number, end: number, mayRef: boolean): void {
    const record = parseLine(text, start, end)
    if (record !== undefined) {
      this.records.push(record)
      if (mayRef) this.refCandidates.add(record)
    }
    const line = this.#line++
    // Behind a title slot, the header is on the second line.
    if (line === 0 || (line === 1 && isTitleSlot(this.firstLine))) this.firstLine = record
  }
}

/** The two marks of a line that may hold a blob ref (`mayHoldRef`). */
const SHA_MARKER = 'sha256:'
const ESCAPE_MARKER = '\\u'

/** Where `marker` next occurs in `text` from `from` on; `text.length` when it does not. */
function nextMarker (text: string, marker: string, from: number): number {
  const at = text.indexOf(marker, from)
  return at === -1 ? text.length : at
}

/**
 * Whether a line of JSON may hold a blob ref (`blob:sha256:<hex>`): a ref is either spelled out,
 * `sha256:` included, or has a character written as a `\u` escape, the only escapes that can
 * stand for one of its characters. A line with neither mark holds no ref.
 */
function mayHoldRef (line: string): boolean {
  return line.includes(SHA_MARKER) || line.includes(ESCAPE_MARKER)
}

function isBlank (c: number): boolean {
  return c === 32 || c === 9 || c === 10 || c === 13 || c === 11 || c === 12 ||
    c === 0xa0 || c === 0xfeff || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 ||
    c === 0x3000 || c === 0x1680 || c === 0x202f || c === 0x205f
}

/** The first record is a valid header iff `type === "session"` and `id` is a string (§5.2). */
export function isValidHeader (record: FileRecord | undefined): record is SessionHeader {
  return record !== undefined && record.type === 'session' && typeof record.id === 'string'
}

/**
 * Content that counts as "empty" for loading (§5.3): nothing, or only a BOM plus spaces, tabs,
 * CR and LF.
 */
export function isEmptyContent (text: string): boolean {
  return /^\uFEFF?[ \t\r\n]*$/.test(text)
}
