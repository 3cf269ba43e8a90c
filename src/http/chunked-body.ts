/**
 * A live stream's body written straight to the response's socket. `res.write` makes every call
 * four socket writes (chunk size, CRLF, data, CRLF) behind a cork that is lifted on the next
 * tick; an event for a thousand subscribers pays that machinery a thousand times, and again
 * in full while the code is still cold. Here a payload shared by subscribers is framed once
 * into one HTTP/1.1 chunk, and every socket writes that same Buffer in one call.
 */
import type { ServerResponse } from 'node:http'
import { Socket } from 'node:net'
import type { Writable } from 'node:stream'

const CRLF = Buffer.from('\r\n', 'latin1')

/** Chunks of shared payloads, made once per payload Buffer and dropped with it. */
const chunks = new WeakMap<Buffer, Buffer>()

function frame (bytes: Buffer): Buffer {
  return Buffer.concat([Buffer.from(`${bytes.length.toString(16)}\r\n`, 'latin1'), bytes, CRLF])
}

/** `payload` (not empty) as one HTTP/1.1 chunk; the chunk of a Buffer is made once and shared. */
export function httpChunk (payload: string | Buffer): Buffer {
  if (typeof payload === 'string') return frame(Buffer.from(payload, 'utf8'))
  let chunk = chunks.get(payload)
  if (chunk === undefined) {
    chunk = frame(payload)
    chunks.set(payload, chunk)
  }
  return chunk
}

/** Where a streamed body's bytes go, and how each payload is framed for it. */
export interface BodyOutput {
  stream: Writable
  encode: (payload: string | Buffer) => string | Buffer
}

/**
 * The output of `raw`, whose headers were just flushed: its network socket, with chunk framing
 * when the response is chunked (an HTTP/1.0 client's body is unframed and ends with the
 * connection). The response itself when it has no body (HEAD), no network socket (`inject`), does not hold its
 * socket yet or still buffers bytes of its own (a pipelined request waiting for the answers
 * before it): its writes then keep their order.
 */
export function bodyOutput (raw: ServerResponse): BodyOutput {
  const socket = raw.socket
  if (!(socket instanceof Socket) || raw.req.method === 'HEAD' || raw.writableLength !== socket.writableLength) return { stream: raw, encode: (payload) => payload }
  return { stream: socket, encode: raw.chunkedEncoding ? httpChunk : (payload) => payload }
}
