/**
 * A session file read a piece at a time, for the listing and the search index (reconcile.ts):
 * its lines come in pieces of about `PIECE_CHARS` characters and its listing facts are gathered
 * record by record, so that what is held at once is one piece and the facts, however large the
 * file. Holding a 100 MB file whole, parsed, split and copied to the search worker took about
 * nine times its size at a first start.
 */
import { listingItem } from '../../session/listing-item.js'
import { fileVersion } from '../../session/migrate.js'
import { foldTitleSlot, isTitleSlot, isValidHeader, parseRecordLine } from '../../session/parser.js'
import { publicHeader } from '../../session/public-header.js'
import { SessionSummary } from '../../session/session-summary.js'
import type { FileRecord } from '../../session/types.js'
import type { ListingItem } from '../store.js'
import type { SessionStorage } from '../types.js'

/** Characters of lines handed on at a time. */
export const PIECE_CHARS = 1 << 20
/** Files of at most this many bytes are read whole. */
export const WHOLE_FILE_BYTES = 1 << 20

/** The lines of one file, read a chunk at a time. */
export class LineReader {
  /** Bytes read so far (UTF-8). */
  bytes = 0
  /** The text's first characters, at least `prefixChars` of them once read that far. */
  prefix = ''
  readonly #storage: SessionStorage
  readonly #path: string
  readonly #prefixChars: number
  readonly #size: number | undefined

  /** `size`: the file's size when known; a small file is read in one call. */
  constructor (storage: SessionStorage, path: string, prefixChars = 0, size?: number) {
    this.#storage = storage
    this.#path = path
    this.#prefixChars = prefixChars
    this.#size = size
  }

  /** The text in chunks: one for a small file (a start may read a hundred thousand of them), else a chunk at a time. */
  async #chunks (): Promise<AsyncIterable<string> | string[]> {
    if (this.#size !== undefined && this.#size <= WHOLE_FILE_BYTES) return [await this.#storage.readText(this.#path)]
    return this.#storage.readTextChunks(this.#path)
  }

  /**
   * The file's lines in order, without their `"\n"` (a leading BOM dropped, a last line without
   * `"\n"` included when not empty), in pieces of about `PIECE_CHARS` characters.
   */
  async * pieces (): AsyncGenerator<string[]> {
    let rest = ''
    let first = true
    let piece: string[] = []
    let chars = 0
    for await (let chunk of await this.#chunks()) {
      this.bytes += Buffer.byteLength(chunk, 'utf8')
      if (this.prefix.length < this.#prefixChars) this.prefix += chunk.slice(0, this.#prefixChars - this.prefix.length)
      if (first && chunk.charCodeAt(0) === 0xfeff) chunk = chunk.slice(1)
      first = false
      let start = 0
      for (let end = chunk.indexOf('\n'); end !== -1; end = chunk.indexOf('\n', start)) {
        const line = rest === '' ? chunk.slice(start, end) : rest + chunk.slice(start, end)
        rest = ''
        piece.push(line)
        chars += line.length
        start = end + 1
      }
      rest += chunk.slice(start)
      if (chars >= PIECE_CHARS) {
        yield piece
        piece = []
        chars = 0
      }
    }
    if (rest !== '') piece.push(rest)
    if (piece.length > 0) yield piece
  }
}

/**
 * The listing facts of a file's records, fed in file order; a title slot before the header is
 * folded into it as `parseJsonlLenient` does.
 */
export class ListingScan {
  /** The first records, until the header is known. */
  #head: FileRecord[] = []
  #header: FileRecord | undefined
  #summary: SessionSummary | undefined

  /** Feeds one line (lines that are not JSON objects count for nothing, as in the agents' readers). */
  line (line: string): void {
    const record = parseRecordLine(line)
    if (record === undefined) return
    if (this.#summary !== undefined) {
      this.#summary.add(record)
      return
    }
    this.#head.push(record)
    if (this.#head.length === 2 || !isTitleSlot(this.#head[0])) this.#settle()
  }

  /** The listing item of what was fed; undefined without a valid header. */
  item (dataDir: string, modifiedMs: number): ListingItem | undefined {
    if (this.#summary === undefined) this.#settle()
    const header = this.#header
    if (!isValidHeader(header)) return undefined
    return listingItem(publicHeader(header, dataDir), this.#summary as SessionSummary, modifiedMs)
  }

  /** Takes the header out of the first records; the others start the summary. */
  #settle (): void {
    const records = foldTitleSlot(this.#head)
    this.#head = []
    this.#header = records[0]
    this.#summary = new SessionSummary(false, records[0] !== undefined && fileVersion(records[0]) === 1)
    for (const record of records.slice(1)) this.#summary.add(record)
  }
}
