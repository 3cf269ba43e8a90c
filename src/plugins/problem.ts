/**
 * The one error handler and the one not-found handler of the app: every error leaves as
 * `application/problem+json` `{ type, title, status, code, detail? }` (API.md "Conventions").
 * A 5xx is logged with `{ err }` and never carries the error's message. A known path asked for
 * with a method it does not answer is `405` with `Allow`; an unknown path is `404`, and so is a
 * known one whose route found nothing. Both hold before the body is read: a request no route
 * takes is never judged by its body. Their details quote the URL with secrets redacted.
 */
import { STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import { dirname, join } from 'node:path'
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify'
import fp from 'fastify-plugin'
import { redactUrl } from '../auth/redaction.js'
import {
  FASTIFY_ERROR_CODES, MethodNotAllowed, PROBLEM_CONTENT_TYPE, type Problem, type QuotaFacts, RequestTimeout, RouteNotFound,
  STATUS_FALLBACK_CODES, STORAGE_ERRNO_CODES,
} from '../errors.js'
import { pathOf, RouteMethods } from './route-methods.js'

/** What an error answers with, before it becomes a body. */
export interface ProblemFacts {
  status: number
  code: string
  detail?: string
  /** The quota a refused write would pass (`SS_QUOTA_EXCEEDED`). */
  quota?: QuotaFacts
}

/** The only details a 5xx ever carries: fixed sentences, never an error's message. */
const SERVER_DETAILS: Readonly<Record<string, string>> = {
  SS_STORAGE_FAILED: "The session's storage failed; other sessions keep working",
  SS_NOT_READY: 'The service is not ready',
  SS_OVERLOADED: 'The server is overloaded; retry after the time in Retry-After',
  SS_DATABASE_UNAVAILABLE: 'The database is unavailable; retry after the time in Retry-After',
  SS_FILE_LOCK_TIMEOUT: 'Another process is changing the same file; try again',
  SS_QUOTA_EXCEEDED: "The tenant's storage quota is spent; reads, exports and deletes still work: delete sessions to make room",
}

/**
 * Client errors whose messages name a file of the server (a session file's path under DATA_DIR):
 * their details are these sentences instead, since a detail never names a server path.
 */
const PATH_FREE_DETAILS: Readonly<Record<string, string>> = {
  SS_PATH_OUTSIDE_DATA_DIR: 'The path resolves outside the data directory',
  SS_SESSION_VERSION_TOO_NEW: 'The session file has a version newer than this server supports',
  SS_SESSION_VERSION_INVALID: 'The session file has an invalid version',
  SS_FORK_SOURCE_INVALID: 'The fork source is not a valid session file',
  SS_MOVE_DESTINATION_EXISTS: "Another session file already has this session's place under the new cwd",
}

/** The directory the server's code runs from (src/ or dist/src/ are below it). */
const CODE_ROOT = join(import.meta.dirname, '..', '..')

/** Seconds a client waits before retrying when the database is unavailable. */
export const DATABASE_RETRY_AFTER_S = 2

/** Server errors that are expected under load, not failures: logged at debug, not error. */
const EXPECTED_SERVER_CODES: ReadonlySet<string> = new Set(['SS_OVERLOADED', 'SS_QUOTA_EXCEEDED'])

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

/**
 * A refused write's quota: the usage and the limit. A 507 of a quota is no failure of the server:
 * its detail is the error's own sentence, which holds nothing but those numbers.
 */
function quotaFacts (err: unknown, status: number): ProblemFacts {
  const quota = (err as { quota?: QuotaFacts }).quota
  const message = fieldOf(err, 'message')
  const detail = typeof message === 'string' ? message : SERVER_DETAILS.SS_QUOTA_EXCEEDED
  return { status, code: 'SS_QUOTA_EXCEEDED', detail, ...(quota === undefined ? {} : { quota }) }
}

/** Maps any thrown value to the status, code and detail it answers with. */
export function toProblemFacts (err: unknown): ProblemFacts {
  const raw = fieldOf(err, 'code')
  const code = typeof raw === 'string' ? raw : undefined
  const status = statusOf(err)
  if (code !== undefined && STORAGE_ERRNO_CODES.has(code)) return { status: 507, code: 'SS_STORAGE_FAILED' }
  if (status === undefined) return INTERNAL
  if (code === 'SS_QUOTA_EXCEEDED') return quotaFacts(err, status)
  if (code?.startsWith('SS_') === true) {
    if (status >= 500) return { status, code, detail: SERVER_DETAILS[code] }
    if (PATH_FREE_DETAILS[code] !== undefined) return { status, code, detail: PATH_FREE_DETAILS[code] }
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
  if (facts.quota !== undefined) body.quota = facts.quota
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

/**
 * `detail` with every one of `paths` (absolute directories and files of the server) replaced by
 * `…`: a safety net under `PATH_FREE_DETAILS` for messages that quote one anyway.
 */
export function withoutServerPaths (detail: string | undefined, paths: readonly string[]): string | undefined {
  if (detail === undefined) return undefined
  let out = detail
  for (const path of paths) if (path.length > 1) out = out.replaceAll(path, '…')
  return out
}

/** Answers `err` as a problem; logs a 5xx with `{ err }`. */
function handleError (err: unknown, req: FastifyRequest, reply: FastifyReply, serverPaths: readonly string[] = []): FastifyReply {
  const raw = toProblemFacts(err)
  const facts = { ...raw, detail: withoutServerPaths(raw.detail, serverPaths) }
  if (facts.code === 'SS_DATABASE_UNAVAILABLE') reply.header('retry-after', String(DATABASE_RETRY_AFTER_S))
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

/** An error of reading the body: Fastify's content-type parsing or our own parsers. */
function isBodyError (err: unknown): boolean {
  const code = fieldOf(err, 'code')
  return typeof code === 'string' && (code.startsWith('FST_ERR_CTP_') || BODY_ERROR_CODES.has(code))
}

const BODY_ERROR_CODES: ReadonlySet<string> = new Set([
  'FST_ERR_ROUTE_MISSING_CONTENT_TYPE', 'SS_INVALID_JSON', 'SS_INEXACT_NUMBER', 'SS_UNSUPPORTED_MEDIA_TYPE',
])

/** The 405 (with `Allow`) or 404 of a request that no route takes. */
function noRoute (routes: RouteMethods, req: FastifyRequest, reply: FastifyReply): FastifyReply {
  // The URL is quoted back without secrets: `?access_token=` may carry one.
  const url = redactUrl(req.url).slice(0, 200)
  const allowed = routes.allowed(req.url)
  // A route that answers this method but found nothing (a missing file under /docs/static/) is 404.
  if (allowed.length > 0 && !allowed.includes(req.method)) {
    const err = new MethodNotAllowed(req.method, url)
    reply.header('allow', allowed.join(', '))
    return sendProblem(reply, { status: 405, code: err.code, detail: err.message })
  }
  const err = new RouteNotFound(req.method, url)
  return sendProblem(reply, { status: 404, code: err.code, detail: err.message })
}

async function problem (app: FastifyInstance): Promise<void> {
  const routes = new RouteMethods()
  // A catch-all (`*`, the CORS preflight route) matches every path: it would turn every 404 into a 405.
  app.addHook('onRoute', (route: RouteOptions) => { if (route.url !== '*' && route.url !== '/*') routes.add(route.url, route.method) })
  // `DELETE /v1/sessions/continue` reaches `DELETE /v1/sessions/:id`: the route words are not ids.
  app.addHook('onRequest', (req, reply, done) => {
    if (routes.fellThrough(pathOf(req.url), req.routeOptions.url)) noRoute(routes, req, reply)
    else done()
  })
  // The body of a request no route takes (unparsable, without a content type) is never read for
  // its own sake: the answer is the not-found handler's.
  const { dataDir, authTokensFile } = app.config
  const serverPaths = [dataDir, ...(authTokensFile === undefined ? [] : [authTokensFile, dirname(authTokensFile)]), CODE_ROOT]
  app.setErrorHandler((err, req, reply) => req.is404 && isBodyError(err) ? noRoute(routes, req, reply) : handleError(err, req, reply, serverPaths))
  app.setNotFoundHandler((req, reply) => noRoute(routes, req, reply))
}

export default fp(problem, { name: 'problem', fastify: '5.x' })

/** Node's socket-level errors and what they answer with; anything else is a malformed request (400). */
const SOCKET_ERRORS: Readonly<Record<string, ProblemFacts>> = {
  HPE_HEADER_OVERFLOW: { status: 431, code: 'SS_HEADERS_TOO_LARGE', detail: 'Request headers too large' },
  ERR_HTTP_REQUEST_TIMEOUT: toProblemFacts(new RequestTimeout('The request did not arrive in time (REQUEST_TIMEOUT_MS, HEADERS_TIMEOUT_MS)')),
}

/** The in-flight response of a socket, when Node has attached one. */
const responseOf = (socket: Socket): { headersSent: boolean } | undefined =>
  (socket as Socket & { _httpMessage?: { headersSent: boolean } | null })._httpMessage ?? undefined

/** How long a closing socket may take to hand its last answer to the kernel before it is destroyed. */
const CLOSE_GRACE_MS = 1000

/**
 * Answers `facts` on the raw socket, unless an answer to its request has started, and closes the
 * socket: whatever the client still sends is never read.
 */
export function closeWithProblem (socket: Socket, facts: ProblemFacts | undefined): void {
  if (facts !== undefined && socket.writable && responseOf(socket)?.headersSent !== true) {
    const body = JSON.stringify(problemBody(facts))
    socket.end(`HTTP/1.1 ${facts.status} ${STATUS_CODES[facts.status] ?? 'Error'}\r\nContent-Type: ${PROBLEM_CONTENT_TYPE}\r\n` +
      'X-Content-Type-Options: nosniff\r\nCache-Control: no-store\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`, () => socket.destroy())
    setTimeout(() => socket.destroy(), CLOSE_GRACE_MS).unref()
  } else {
    socket.destroy()
  }
}

/**
 * Fastify's `clientErrorHandler`: a request too malformed to reach routing (a broken request
 * line or header, a bad Content-Length, headers over the size limit) still gets a problem+json
 * answer, and so does one that ran out of time (408: REQUEST_TIMEOUT_MS, HEADERS_TIMEOUT_MS);
 * then the connection closes. A reset by the client answers nothing.
 */
export function clientErrorHandler (err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === 'ECONNRESET') {
    socket.destroy()
    return
  }
  closeWithProblem(socket, SOCKET_ERRORS[err.code ?? ''] ?? { status: 400, code: 'SS_BAD_REQUEST', detail: 'Malformed HTTP request' })
}
