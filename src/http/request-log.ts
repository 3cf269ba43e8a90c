/**
 * What the server logs: one line per request, written when the answer is complete (method,
 * redacted URL, status, duration in ms, client address, and the `reqId` of every other line the
 * request logged), instead of Fastify's two (`incoming request` + `request completed`); and a
 * process logger that writes asynchronously, flushed when the process exits, so logging never
 * waits on the terminal or pipe it writes to.
 *
 * A request's own logger (`req.log`) is made when the request first logs through it. Most
 * requests log one line, their last, and the parent writes that one with the request's bindings
 * as its first fields, which is the line the child would have written: a pino child made for
 * every request cost more than the line itself.
 */
import { LogController, type FastifyBaseLogger, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify'
import type { Bindings, ChildLoggerOptions } from 'fastify/types/logger.js'
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

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace'

/** A request's logger: its pino child, made on first use (see the top of this file). */
class RequestLogger implements FastifyBaseLogger {
  readonly #parent: FastifyBaseLogger
  readonly #bindings: Bindings
  #child: FastifyBaseLogger | undefined

  constructor (parent: FastifyBaseLogger, bindings: Bindings) {
    this.#parent = parent
    this.#bindings = bindings
  }

  #made (): FastifyBaseLogger {
    this.#child ??= this.#parent.child(this.#bindings)
    return this.#child
  }

  #log (level: Level, args: unknown[]): void {
    (this.#made()[level] as (...a: unknown[]) => void)(...args)
  }

  get level (): string { return (this.#child ?? this.#parent).level }
  set level (level: string) { this.#made().level = level }

  fatal (...args: unknown[]): void { this.#log('fatal', args) }
  error (...args: unknown[]): void { this.#log('error', args) }
  warn (...args: unknown[]): void { this.#log('warn', args) }
  info (...args: unknown[]): void { this.#log('info', args) }
  debug (...args: unknown[]): void { this.#log('debug', args) }
  trace (...args: unknown[]): void { this.#log('trace', args) }
  silent (): void {}

  child (bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.#made().child(bindings, options)
  }

  /** Logs `fields` and `msg` at info as the child would, without making it. */
  infoAsChild (fields: Record<string, unknown>, msg: string): void {
    if (this.#child !== undefined) this.#child.info(fields, msg)
    else this.#parent.info({ ...this.#bindings, ...fields }, msg)
  }
}

/**
 * Fastify's `childLoggerFactory`: a request's logger, made on first use. A route with log
 * options of its own (a level, serializers) gets its child at once.
 */
export const requestLogger: NonNullable<FastifyServerOptions['childLoggerFactory']> = (logger, bindings, options) => {
  if (Object.keys(options).length > 0) return logger.child(bindings, options)
  return new RequestLogger(logger, bindings)
}

/** The line of a request whose answer is complete. */
export function logCompleted (request: FastifyRequest, reply: FastifyReply): void {
  const log = reply.log
  if (log instanceof RequestLogger) log.infoAsChild(requestFields(request, reply), 'request completed')
  else log.info(requestFields(request, reply), 'request completed')
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
