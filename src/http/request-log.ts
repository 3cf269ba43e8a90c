/**
 * What the server logs: one line per request, written when the answer is complete (method,
 * redacted URL, status, duration in ms, client address, and the `reqId` of every other line the
 * request logged), instead of Fastify's two (`incoming request` + `request completed`); and a
 * process logger that writes asynchronously, flushed when the process exits, so logging never
 * waits on the terminal or pipe it writes to.
 */
import { LogController, type FastifyReply, type FastifyRequest } from 'fastify'
import { pino, type Logger } from 'pino'
import { redactUrl } from '../auth/redaction.js'
import type { LogLevel } from '../config.js'
import { processDestination } from './log-destination.js'

/** The fields of a request's line; flat, so no serializer runs per request. */
function requestFields (request: FastifyRequest, reply: FastifyReply): Record<string, unknown> {
  return {
    method: request.method,
    url: redactUrl(request.url),
    statusCode: reply.raw.statusCode,
    responseTime: Math.round(reply.elapsedTime * 100) / 100,
    remoteAddress: request.ip,
  }
}

/** The line of a request whose answer is complete. */
export function logCompleted (request: FastifyRequest, reply: FastifyReply): void {
  reply.log.info(requestFields(request, reply), 'request completed')
}

/**
 * Fastify's request logging, one line per request (`request completed` or `request errored`).
 * A live stream that ends without finishing its response (the client left, or was cut off) logs
 * its own line (src/http/sse.ts), since Fastify logs only finished responses.
 */
export class OneLineRequestLog extends LogController {
  override incomingRequest (): void {}

  override requestCompleted (error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (error != null) reply.log.error({ ...requestFields(request, reply), err: error }, 'request errored')
    else logCompleted(request, reply)
  }
}

/**
 * The process's logger: JSON lines on standard output (or file descriptor `fd`), one write per
 * turn of the event loop (log-destination.ts). Lines still held when the process exits
 * (`process.exit` included) are written out before it ends, in order.
 */
export function processLogger (level: LogLevel, fd = 1): Logger {
  return pino({ level }, processDestination(fd))
}
