/**
 * The one error handler and the one not-found handler of the app: every error leaves as
 * `application/problem+json` `{ type, title, status, code, detail? }` (API.md "Conventions").
 * A 5xx is logged with `{ err }` and never carries the error's message. A known path asked for
 * with a method it does not answer is `405` with `Allow`; an unknown path is `404`.
 */
import { STATUS_CODES } from 'node:http'
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify'
import fp from 'fastify-plugin'
import {
  FASTIFY_ERROR_CODES, MethodNotAllowed, PROBLEM_CONTENT_TYPE, type Problem, RouteNotFound, STATUS_FALLBACK_CODES,
  STORAGE_ERRNO_CODES,
} from '../errors.js'
import { RouteMethods } from './route-methods.js'

/** What an error answers with, before it becomes a body. */
export interface ProblemFacts {
  status: number
  code: string
  detail?: string
}

/** The only details a 5xx ever carries: fixed sentences, never an error's message. */
const SERVER_DETAILS: Readonly<Record<string, string>> = {
  SS_STORAGE_FAILED: "The session's storage failed; other sessions keep working",
  SS_NOT_READY: 'The service is not ready',
  SS_OVERLOADED: 'The server is overloaded; retry after the time in Retry-After',
}

/** Server errors that are expected under load, not failures: logged at debug, not error. */
const EXPECTED_SERVER_CODES: ReadonlySet<string> = new Set(['SS_OVERLOADED'])

const INTERNAL: ProblemFacts = { status: 500, code: 'SS_INTERNAL' }

function fieldOf (err: unknown, key: 'code' | 'message' | 'name' | 'statusCode'): unknown {
  return typeof err === 'object' && err !== null ? (err as Record<string, unknown>)[key] : undefined
}

function statusOf (err: unknown): number | undefined {
  const status = fieldOf(err, 'statusCode')
  return typeof status === 'number' && status >= 400 && status <= 599 ? status : undefined
}

function clientFacts (err: unknown, status: number, code: string | undefined): ProblemFacts {
  const message = fieldOf(err, 'message')
  const detail = typeof message === 'string' && message !== '' ? message : undefined
  if (code !== undefined && FASTIFY_ERROR_CODES[code] !== undefined) return { status, code: FASTIFY_ERROR_CODES[code], detail }
  if (fieldOf(err, 'name') === 'SyntaxError' && status === 400) return { status, code: 'SS_INVALID_JSON', detail }
  return { status, code: STATUS_FALLBACK_CODES[status] ?? 'SS_CLIENT_ERROR', detail }
}

/** Maps any thrown value to the status, code and detail it answers with. */
export function toProblemFacts (err: unknown): ProblemFacts {
  const raw = fieldOf(err, 'code')
  const code = typeof raw === 'string' ? raw : undefined
  const status = statusOf(err)
  if (code !== undefined && STORAGE_ERRNO_CODES.has(code)) return { status: 507, code: 'SS_STORAGE_FAILED' }
  if (status === undefined) return INTERNAL
  if (code?.startsWith('SS_') === true) {
    if (status >= 500) return { status, code, detail: SERVER_DETAILS[code] }
    const message = fieldOf(err, 'message')
    return { status, code, detail: typeof message === 'string' ? message : undefined }
  }
  return status >= 500 ? { ...INTERNAL, status } : clientFacts(err, status, code)
}

/** The problem+json body for `facts`. */
export function problemBody (facts: ProblemFacts): Problem {
  const body: Problem = {
    type: 'about:blank',
    title: STATUS_CODES[facts.status] ?? 'Error',
    status: facts.status,
    code: facts.code,
  }
  if (facts.detail !== undefined) body.detail = facts.detail
  return body
}

function sendProblem (reply: FastifyReply, facts: ProblemFacts): FastifyReply {
  // Headers set before the failure (ETag, immutable caching) must not describe the problem.
  reply.removeHeader('etag')
  reply.removeHeader('content-length')
  return reply.code(facts.status)
    .header('cache-control', 'no-store')
    .type(PROBLEM_CONTENT_TYPE)
    .send(problemBody(facts))
}

/** Answers `err` as a problem; logs a 5xx with `{ err }`. */
function handleError (err: unknown, req: FastifyRequest, reply: FastifyReply): FastifyReply {
  const facts = toProblemFacts(err)
  if (facts.status >= 500 && !EXPECTED_SERVER_CODES.has(facts.code)) req.log.error({ err }, 'request failed')
  else req.log.debug({ code: facts.code, status: facts.status }, 'request rejected')
  const retryAfter = typeof err === 'object' && err !== null ? (err as { retryAfterS?: unknown }).retryAfterS : undefined
  if (typeof retryAfter === 'number') reply.header('retry-after', String(retryAfter))
  return sendProblem(reply, facts)
}

/**
 * Fastify's `frameworkErrors` option: errors met before routing (a malformed URL, an overlong
 * path parameter) never reach the error handler, so they are answered here the same way.
 */
export function frameworkErrors (err: unknown, req: FastifyRequest, reply: FastifyReply): void {
  handleError(err, req, reply)
}

async function problem (app: FastifyInstance): Promise<void> {
  const routes = new RouteMethods()
  // A catch-all (`*`, the CORS preflight route) matches every path: it would turn every 404 into a 405.
  app.addHook('onRoute', (route: RouteOptions) => { if (route.url !== '*' && route.url !== '/*') routes.add(route.url, route.method) })
  app.setErrorHandler(handleError)
  app.setNotFoundHandler((req, reply) => {
    const url = req.url.slice(0, 200)
    const allowed = routes.allowed(req.url)
    if (allowed.length > 0) {
      const err = new MethodNotAllowed(req.method, url)
      reply.header('allow', allowed.join(', '))
      return sendProblem(reply, { status: 405, code: err.code, detail: err.message })
    }
    const err = new RouteNotFound(req.method, url)
    return sendProblem(reply, { status: 404, code: err.code, detail: err.message })
  })
}

export default fp(problem, { name: 'problem', fastify: '5.x' })

/**
 * Fastify's `clientErrorHandler`: a request too malformed to reach routing (a broken request
 * line or header, a bad Content-Length, headers over the size limit) still gets a problem+json
 * answer, then the connection closes. Node's parser error codes decide the status.
 */
export function clientErrorHandler (err: NodeJS.ErrnoException, socket: import('node:net').Socket): void {
  if (!socket.writable) return
  const status = err.code === 'HPE_HEADER_OVERFLOW' ? 431 : 400
  const body = JSON.stringify(problemBody({ status, code: status === 431 ? 'SS_HEADERS_TOO_LARGE' : 'SS_BAD_REQUEST', detail: 'Malformed HTTP request' }))
  socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Bad Request'}\r\nContent-Type: ${PROBLEM_CONTENT_TYPE}\r\n` +
    'X-Content-Type-Options: nosniff\r\n' +
    `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`)
}
