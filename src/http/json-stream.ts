/**
 * Large JSON answers sent as they are serialized: `JSON.stringify` of the object, one element of
 * one big array at a time, in chunks of about `CHUNK_CHARS`. The process never holds the whole
 * answer as one string plus its bytes (a 100 MB session's context is ~40 MB of JSON), and the
 * first bytes leave while the rest is being serialized.
 */
import { Readable } from 'node:stream'
import { stringifyJson } from '../session/json-text.js'

/** Characters per chunk handed to the socket. */
const CHUNK_CHARS = 256 * 1024

/**
 * The text of `JSON.stringify(value)` (depth-safe: `stringifyJson`), in pieces: the elements of `value[arrayKey]` are
 * serialized one by one, every other property whole.
 */
export function * jsonChunks (value: object, arrayKey: string, chunkChars = CHUNK_CHARS): Generator<string> {
  let out = '{'
  let first = true
  for (const [key, item] of Object.entries(value)) {
    if (key === arrayKey && Array.isArray(item)) {
      out += `${first ? '' : ','}${JSON.stringify(key)}:[`
      first = false
      for (let i = 0; i < item.length; i++) {
        out += (i === 0 ? '' : ',') + (stringifyJson(item[i]) ?? 'null')
        if (out.length >= chunkChars) {
          yield out
          out = ''
        }
      }
      out += ']'
      continue
    }
    const json = stringifyJson(item)
    if (json === undefined) continue // functions, symbols, undefined: left out, as JSON.stringify does
    out += `${first ? '' : ','}${JSON.stringify(key)}:${json}`
    first = false
  }
  yield out + '}'
}

/** `jsonChunks` as a byte stream, for `reply.send`. */
export function jsonStream (value: object, arrayKey: string): Readable {
  return Readable.from(jsonChunks(value, arrayKey), { objectMode: false })
}
