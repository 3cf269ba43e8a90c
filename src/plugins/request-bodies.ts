/**
 * Request bodies that the server will not read, or that stop coming:
 * - A request answered before its body arrived whole (refused with 401, 403, 413, 415, 429, or
 *   any other answer given without reading the body) is answered with `Connection: close`, and
 *   Node closes the socket as soon as the answer is out: the rest of the body is never waited for.
 * - A body that stalls, bringing fewer than `MIN_BODY_BYTES` in BODY_STALL_TIMEOUT_MS while the
 *   server reads it, is answered 408 `SS_REQUEST_TIMEOUT` on the socket, which then closes
 *   (src/http/stalled-bodies.ts), on a timer of the app's own rather than Node's connection checks.
 * Both apply to real sockets only; `inject`ed requests have no socket to hold.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { IncomingMessage } from 'node:http'
import { RequestTimeout } from '../errors.js'
import { MIN_BODY_BYTES, StalledBodies } from '../http/stalled-bodies.js'
import { closeWithProblem, toProblemFacts } from './problem.js'

/** True when the request announces a body (a non-zero Content-Length, or chunks). */
function announcesBody (req: IncomingMessage): boolean {
  const length = req.headers['content-length']
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0')
}

async function requestBodies (app: FastifyInstance): Promise<void> {
  const stallMs = app.config.bodyStallTimeoutMs
  const stalled = toProblemFacts(new RequestTimeout(`The request body stalled: fewer than ${MIN_BODY_BYTES} bytes arrived in ${stallMs} ms (BODY_STALL_TIMEOUT_MS)`))
  let stalls = 0
  const bodies = new StalledBodies({
    stallMs,
    onStall: (req, _res, socket) => {
      // One log line per 100 stalls: a flood of dribbled bodies must not flood the log too.
      if (stalls++ % 100 === 0) app.log.warn({ address: socket.remoteAddress, method: req.method, stalls }, 'request body stalled: connection closed')
      closeWithProblem(socket, stalled)
    },
  })
  app.addHook('onClose', async () => { bodies.close() })
  app.addHook('onRequest', (req: FastifyRequest, reply: FastifyReply, done: () => void) => {
    if (req.raw.complete === false && announcesBody(req.raw)) bodies.watch(req.raw, reply.raw)
    done()
  })
  app.addHook('onSend', (req: FastifyRequest, reply: FastifyReply, payload: unknown, done: (err: null, payload: unknown) => void) => {
    if (req.raw.complete !== false) {
      done(null, payload)
      return
    }
    // A refusal from an `onRequest` hook is decided before Node parsed the rest of the packet
    // that carried the headers: one turn of the event loop lets a body that has arrived complete,
    // so that its connection stays open for the next request.
    setImmediate(() => {
      if (!req.raw.complete) reply.header('connection', 'close')
      done(null, payload)
    })
  })
}

export default fp(requestBodies, { name: 'request-bodies', fastify: '5.x' })
