/**
 * Reading a session file into records and classifying it (SPEC.md §5.2, §5.3).
 */
import { basename, dirname, join } from 'node:path'
import { expectLoad } from '../heap-growth.js'
import type { SessionStorage } from '../storage/types.js'
import { fileTimestamp } from './cwd.js'
import type { Logger } from './logger.js'
import { assertSupportedVersion } from './migrate.js'
import { isValidHeader, JsonlStreamParser } from './parser.js'
import type { FileRecord } from './types.js'

export type FileClass =
  | { kind: 'missing' | 'empty' | 'invalid' }
  | {
    kind: 'valid'
    records: FileRecord[]
    /** The last line lacks its `"\n"` (a torn append). */
    tornTail: boolean
    /** The only records that may hold a blob ref (`JsonlStreamParser.refCandidates`). */
    refCandidates: ReadonlySet<FileRecord>
  }

/** What one read of a session file yields, before it is classified. */
export interface ParsedFile {
  /** ENOENT. */
  missing: boolean
  /** `isEmptyContent` of the text. */
  empty: boolean
  /** `parseJsonlLenient` of the text. */
  records: FileRecord[]
  /** What the first line alone parses to (the factories learn the cwd from it). */
  first: FileRecord | undefined
  /** The text does not end in `"\n"`. */
  tornTail: boolean
  /** The only records that may hold a blob ref (`JsonlStreamParser.refCandidates`). */
  refCandidates: ReadonlySet<FileRecord>
}

const MISSING: ParsedFile = { missing: true, empty: true, records: [], first: undefined, tornTail: false, refCandidates: new Set() }

/** `parseFile` of text already in hand. */
export function parseText (text: string): ParsedFile {
  const parser = new JsonlStreamParser()
  parser.push(text)
  return parsed(parser)
}

function parsed (parser: JsonlStreamParser): ParsedFile {
  const records = parser.end()
  return { missing: false, empty: parser.blank, records, first: parser.firstLine, tornTail: parser.lastChar !== '\n', refCandidates: parser.refCandidates }
}

/**
 * Reads and parses `path` a chunk at a time (`parseChunks`). Read errors other than ENOENT
 * propagate.
 */
export async function parseFile (storage: SessionStorage, path: string): Promise<ParsedFile> {
  try {
    return await parseChunks(storage.readTextChunks(path), sizeOf(storage, path))
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return MISSING
    throw err
  }
}

/**
 * Parses a session's text from its pieces, so that a large session is never held whole as text
 * next to its records; meanwhile the heap may grow by what is still to read (`size` bytes in
 * all) before V8 collects (`expectLoad`).
 */
export async function parseChunks (chunks: AsyncIterable<string>, size: number): Promise<ParsedFile> {
  const parser = new JsonlStreamParser()
  const load = expectLoad(size)
  try {
    for await (const chunk of readAhead(chunks)) {
      parser.push(chunk)
      load.read(chunk.length)
    }
  } finally {
    load.done()
  }
  return parsed(parser)
}

/**
 * The pieces of `source` in order, the next one always asked for before the current one is
 * handed out: a read the source has to wait for (a file read on the thread pool) then runs while
 * the caller parses the piece before it, instead of after. At most one piece is held ahead.
 */
export async function * readAhead<T> (source: AsyncIterable<T>): AsyncGenerator<T> {
  const it = source[Symbol.asyncIterator]()
  let done = false
  try {
    let next = it.next()
    for (;;) {
      const result = await next
      if (result.done === true) {
        done = true
        return
      }
      next = it.next()
      // A rejection of the piece asked for ahead is awaited (and thrown) on the next turn; until
      // then it must not count as unhandled.
      next.catch(() => {})
      yield result.value
    }
  } finally {
    if (!done) await it.return?.()
  }
}

/** The size of `path` in bytes; 0 when it cannot be read (the read then says why). */
function sizeOf (storage: SessionStorage, path: string): number {
  try {
    return storage.statSync(path).size
  } catch {
    return 0
  }
}

/**
 * Classifies a parsed file: missing (ENOENT), empty, invalid (no valid header) or valid. Throws
 * the §4.1 version error for a valid header with an unsupported version.
 */
export function classifyParsed (path: string, file: ParsedFile): FileClass {
  if (file.missing) return { kind: 'missing' }
  if (file.empty) return { kind: 'empty' }
  if (!isValidHeader(file.records[0])) return { kind: 'invalid' }
  assertSupportedVersion(path, file.records[0])
  return { kind: 'valid', records: file.records, tornTail: file.tornTail, refCandidates: file.refCandidates }
}

/**
 * Reads and classifies `path` (or `text`, its content already read): missing (ENOENT), empty,
 * invalid (no valid header) or valid. Throws the §4.1 version error for a valid header with an
 * unsupported version; other read errors propagate.
 */
export async function classifyFile (storage: SessionStorage, path: string, text?: string): Promise<FileClass> {
  return classifyParsed(path, text === undefined ? await parseFile(storage, path) : parseText(text))
}

/** The whole file, or `undefined` when it does not exist. */
export async function readIfExists (storage: SessionStorage, path: string): Promise<string | undefined> {
  try {
    return await storage.readText(path)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw err
  }
}

/**
 * All parsed records of `path`, header first, or `[]` when the file is missing, parses to
 * nothing or lacks a valid header. Other read errors propagate. No migration.
 * @see SPEC.md §5.2
 */
export async function loadEntriesFromFile (storage: SessionStorage, path: string): Promise<FileRecord[]> {
  const { records } = await parseFile(storage, path)
  return isValidHeader(records[0]) ? records : []
}

/**
 * Renames a file whose header is invalid to `<basename>.corrupt-<fileTs>` (adding `-1`, `-2`, …
 * while taken) and logs both paths. Nothing is deleted or overwritten (§5.3).
 */
export async function setAsideCorrupt (storage: SessionStorage, path: string, log: Logger): Promise<string> {
  const stem = join(dirname(path), `${basename(path)}.corrupt-${fileTimestamp(new Date().toISOString())}`)
  let target = stem
  for (let n = 1; storage.existsSync(target); n++) target = `${stem}-${n}`
  await storage.rename(path, target)
  log.warn({ path, movedTo: target }, 'Session file has no valid header; set aside')
  return target
}
