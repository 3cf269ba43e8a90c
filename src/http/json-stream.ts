/**
 * Large JSON answers sent as they are serialized: `JSON.stringify` of the object, a batch of
 * elements of one big array at a time, in chunks of about `CHUNK_CHARS`. The process never holds
 * the whole answer as one string plus its bytes (a 100 MB session's context is ~40 MB of JSON),
 * and the first bytes leave while the rest is being serialized.
 */
import { Readable } from 'node:stream'
import { stringifyJson } from '../session/json-text.js'

/** Characters per chunk handed to the socket. */
const CHUNK_CHARS = 256 * 1024

/**
 * The text of `JSON.stringify(value)` (depth-safe: `stringifyJson`) in pieces: punctuation, the
 * elements of `value[arrayKey]` a batch at a time, and every other property whole.
 */
function * jsonPieces (value: object, arrayKey: string, batchChars: number): Generator<string> {
  yield '{'
  let first = true
  for (const [key, item] of Object.entries(value)) {
    if (key === arrayKey && Array.isArray(item)) {
      yield `${first ? '' : ','}${JSON.stringify(key)}:[`
      first = false
      yield * elementPieces(item, batchChars)
      yield ']'
      continue
    }
    const json = stringifyJson(item)
    if (json === undefined) continue // functions, symbols, undefined: left out, as JSON.stringify does
    yield `${first ? '' : ','}${JSON.stringify(key)}:${json}`
    first = false
  }
  yield '}'
}

/**
 * The elements of `items` as the members of a JSON array, comma-separated, joined into pieces of
 * about `batchChars` characters (one element more at most): a piece per element would cost as
 * much again as serializing small ones, in handing each on and encoding it alone.
 */
function * elementPieces (items: unknown[], batchChars: number): Generator<string> {
  let batch: string[] = []
  let chars = 0
  let first = true
  for (const item of items) {
    const text = stringifyJson(item) ?? 'null'
    batch.push(text)
    chars += text.length
    if (chars < batchChars) continue
    yield `${first ? '' : ','}${batch.join(',')}`
    first = false
    batch = []
    chars = 0
  }
  if (batch.length > 0) yield `${first ? '' : ','}${batch.join(',')}`
}

/** `jsonPieces` joined into strings of about `chunkChars` characters. */
export function * jsonChunks (value: object, arrayKey: string, chunkChars = CHUNK_CHARS): Generator<string> {
  let out = ''
  for (const piece of jsonPieces(value, arrayKey, chunkChars / 4)) {
    out += piece
    if (out.length >= chunkChars) {
      yield out
      out = ''
    }
  }
  yield out
}

/**
 * `jsonPieces` encoded as UTF-8 straight into buffers of `chunkBytes` (a piece larger than that
 * gets a buffer of its own). Encoding each piece where it lands costs one pass over its text; a
 * chunk built by string concatenation is first flattened, then encoded.
 */
export function * jsonByteChunks (value: object, arrayKey: string, chunkBytes = CHUNK_CHARS): Generator<Buffer> {
  let buf = Buffer.allocUnsafe(chunkBytes)
  let used = 0
  for (const piece of jsonPieces(value, arrayKey, chunkBytes / 4)) {
    // A UTF-16 code unit takes at most 3 bytes: a piece that fits even so is written without
    // first counting its bytes (a pass over its text).
    if (piece.length * 3 <= chunkBytes - used) {
      used += buf.write(piece, used, 'utf8')
      continue
    }
    const length = Buffer.byteLength(piece, 'utf8')
    if (used + length > chunkBytes && used > 0) {
      yield buf.subarray(0, used)
      buf = Buffer.allocUnsafe(chunkBytes)
      used = 0
    }
    if (length > chunkBytes) yield Buffer.from(piece, 'utf8')
    else used += buf.write(piece, used, 'utf8')
  }
  if (used > 0) yield buf.subarray(0, used)
}

/** `jsonByteChunks` as a byte stream, for `reply.send`. */
export function jsonStream (value: object, arrayKey: string): Readable {
  return Readable.from(jsonByteChunks(value, arrayKey), { objectMode: false })
}
