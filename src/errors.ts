/**
 * Every error code of session-store, in one place. Codes are stable and prefixed `SS_`;
 * callers branch on `err.code` or `instanceof`, never on the message.
 * The status is the HTTP status the problem+json handler answers with (API.md "Status codes").
 * @see SPEC.md §6.8 for the model's codes (here with the `SS_` prefix).
 */
import createError from '@fastify/error'
import { STATUS_CODES } from 'node:http'
import { Type, type Static } from '@sinclair/typebox'

// ── Session model (SPEC.md §6.8) ────────────────────────────────────────────
export const EntryNotFound = createError<[string]>('SS_ENTRY_NOT_FOUND', 'Entry %s not found', 404)
export const InvalidArgument = createError<[string]>('SS_INVALID_ARGUMENT', '%s', 400)
export const PathOutsideDataDir = createError<[string]>(
  'SS_PATH_OUTSIDE_DATA_DIR', 'Path %s resolves outside DATA_DIR', 400)
export const SessionVersionTooNew = createError<[string, string]>(
  'SS_SESSION_VERSION_TOO_NEW', 'Session file %s has version %s, newer than this server supports (3)', 422)
export const SessionVersionInvalid = createError<[string, string]>(
  'SS_SESSION_VERSION_INVALID', 'Session file %s has an invalid version %s', 422)
export const ForkSourceInvalid = createError<[string, string]>(
  'SS_FORK_SOURCE_INVALID', 'Fork source %s is %s', 422)
export const MoveDestinationExists = createError<[string]>(
  'SS_MOVE_DESTINATION_EXISTS', 'Move destination %s already exists', 409)

/** Codes of the errors above, for tests and for mapping. */
export type ModelErrorCode =
  | 'SS_ENTRY_NOT_FOUND' | 'SS_INVALID_ARGUMENT' | 'SS_PATH_OUTSIDE_DATA_DIR'
  | 'SS_SESSION_VERSION_TOO_NEW' | 'SS_SESSION_VERSION_INVALID'
  | 'SS_FORK_SOURCE_INVALID' | 'SS_MOVE_DESTINATION_EXISTS'

/**
 * `err` with the seconds a client should wait, answered as `Retry-After` (src/plugins/problem.ts).
 */
export function withRetryAfter<E extends Error> (err: E, seconds: number): E & { retryAfterS: number } {
  return Object.assign(err, { retryAfterS: seconds })
}

/** True when `err` carries the given stable code. */
export function hasCode (err: unknown, code: string): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === code
}

// ── Storage (SPEC.md §10) ───────────────────────────────────────────────────
/** A storage writer was used after `close()`; its message is exactly `Writer closed` (§10.2). */
export const WriterClosed = createError('SS_WRITER_CLOSED', 'Writer closed', 500)
/** A write call reported zero bytes written before the whole line was out (§10.2). */
export const ShortWrite = createError('SS_SHORT_WRITE', 'Short write', 500)

// ── HTTP (API.md "Status codes") ────────────────────────────────────────────
/** Lets a constructor take `{ cause }` as its last argument (kept as `err.cause`). */
type WithCause = { cause: unknown }

export const Validation = createError<[string]>('SS_VALIDATION', '%s', 400)
export const InvalidJson = createError<[string]>('SS_INVALID_JSON', '%s', 400)
/** A number in a JSON body that a double cannot hold as sent (too large, too small, too many digits). Arguments: its JSON path, the number. */
export const InexactNumber = createError<[string, string]>('SS_INEXACT_NUMBER',
  'The number at %s (%s) cannot be stored as sent: a double would change it; send it as a string', 400)
/** A request, its headers or its body did not arrive in time; answered on the socket, which then closes. */
export const RequestTimeout = createError<[string]>('SS_REQUEST_TIMEOUT', '%s', 408)
export const InvalidCursor = createError<[string]>('SS_INVALID_CURSOR', 'Cursor %s is invalid', 400)
/** A search query that cannot be searched for; the message says why. */
export const InvalidSearchQuery = createError<[string]>('SS_INVALID_QUERY', 'Invalid search query: %s', 400)
export const InvalidBlobHash = createError(
  'SS_INVALID_BLOB_HASH', 'A blob hash is exactly 64 lowercase hex characters', 400)
export const InvalidSessionId = createError<[string]>('SS_INVALID_SESSION_ID', '%s', 400)
export const RouteNotFound = createError<[string, string]>('SS_NOT_FOUND', 'Route %s %s not found', 404)
/** A known path asked for with a method it does not answer; the answer lists the others in `Allow`. */
export const MethodNotAllowed = createError<[string, string]>(
  'SS_METHOD_NOT_ALLOWED', 'Method %s is not allowed for %s', 405)
export const SessionNotFound = createError<[string]>('SS_SESSION_NOT_FOUND', "Session '%s' not found", 404)
export const BlobNotFound = createError<[string]>('SS_BLOB_NOT_FOUND', 'Blob sha256:%s not found', 404)
export const SessionExists = createError<[string]>('SS_SESSION_EXISTS', "Session '%s' already exists", 409)
export const PreconditionFailed = createError<[string]>(
  'SS_PRECONDITION_FAILED', "If-Match %s does not match the session's current etag", 412)
/** The argument is the configured limit in bytes. */
export const BodyTooLarge = createError<[number]>(
  'SS_BODY_TOO_LARGE', 'Request body is larger than %d bytes', 413)
export const UnsupportedMediaType = createError<[string]>(
  'SS_UNSUPPORTED_MEDIA_TYPE', "Content-Type '%s' is not supported by this route", 415)
/** Arguments: the hash of the body, then the hash the URL names. */
export const DigestMismatch = createError<[string, string]>(
  'SS_DIGEST_MISMATCH', 'Body hashes to %s, not to %s', 422)
export const IdempotencyKeyReused = createError(
  'SS_IDEMPOTENCY_KEY_REUSED', 'Idempotency-Key was already used with a different request body', 422)
export const EntryIdTaken = createError<[string]>('SS_ENTRY_ID_TAKEN', "Entry id '%s' is taken by another record", 409)
export const UnknownParent = createError<[string]>('SS_UNKNOWN_PARENT', "Parent entry '%s' does not exist", 422)
export const UnknownLabelTarget = createError<[string]>(
  'SS_UNKNOWN_LABEL_TARGET', "Label target '%s' does not exist", 422)
// ── Access and limits ───────────────────────────────────────────────────────
// The refusals a flood of requests meets (401, 403, 429) capture no stack trace: it would cost
// each refused request some 20 µs, and these errors are answered, never logged with a stack.
/** No usable credentials: no token, or one no token of the file matches. */
export const Unauthenticated = createError<[string]>('SS_UNAUTHENTICATED', '%s', 401, Error, false)
/** The token matches but its `expiresAt` has passed. */
export const TokenExpired = createError('SS_TOKEN_EXPIRED', 'The access token has expired', 401, Error, false)
/** A valid token without the scope the route needs. The argument is that scope. */
export const Forbidden = createError<[string]>('SS_FORBIDDEN', "This route needs the '%s' scope", 403, Error, false)
/** Token management needs tokens: the server runs without AUTH_TOKENS_FILE. */
export const AuthDisabled = createError(
  'SS_AUTH_DISABLED', 'Authentication is off (no AUTH_TOKENS_FILE): there are no tokens to manage', 409)
export const TokenNotFound = createError<[string]>('SS_TOKEN_NOT_FOUND', "Token '%s' not found", 404)
/** Arguments: the tenant, then the limit of tokens per tenant. */
export const TooManyTokens = createError<[string, number]>(
  'SS_TOO_MANY_TOKENS', "Tenant '%s' already has %d tokens, the most it may hold; revoke one first", 409)
/** Arguments: the entries in the batch, then the limit. */
export const BatchTooLarge = createError<[number, number]>(
  'SS_BATCH_TOO_LARGE', 'The batch has %d entries; at most %d are accepted at once', 413)
/** The argument says when to retry, e.g. `1 minute`. */
export const RateLimited = createError<[string]>('SS_RATE_LIMITED', 'Rate limit exceeded, retry in %s', 429, Error, false)
/** Title changes of the tenant rewrote MAX_REWRITE_BYTES in the window. The argument says when to retry. */
export const RewriteBudgetSpent = createError<[string]>('SS_REWRITE_BUDGET_SPENT',
  'Title changes rewrite whole session files and this tenant rewrote its limit for now; retry in %s', 429)
/**
 * Open mode on a loopback HOST: the request names a `Host` that is not a loopback name or address
 * (DNS rebinding). The argument is that Host.
 */
export const MisdirectedHost = createError<[string]>('SS_MISDIRECTED_HOST',
  "Host '%s' is not a loopback name or address; without tokens this server answers only loopback names", 421)
/** Open mode on a loopback HOST: a write from a page of another origin. The argument is that Origin. */
export const ForeignOrigin = createError<[string]>('SS_FOREIGN_ORIGIN',
  "Origin '%s' may not change anything here: without tokens only the server's own origin and CORS_ORIGINS may write", 403)
/** Arguments: the limit of concurrent streams, then what it counts per (`token`, `tenant`). */
export const TooManyStreams = createError<[number] | [number, string]>(
  'SS_TOO_MANY_STREAMS', 'Too many live streams: at most %d at once per %s', 429)
/** Arguments: the session id, then the bound it would pass (e.g. `16777216 bytes`). */
export const UnsavedSessionTooLarge = createError<[string, string]>('SS_UNSAVED_SESSION_TOO_LARGE',
  "Session '%s' is not saved yet (no assistant message) and would exceed %s held in memory; " +
  "append the assistant's reply to save it, or start a new session", 413)
/** The argument is the limit of unsaved sessions per tenant. */
export const TooManyUnsavedSessions = createError<[number]>('SS_TOO_MANY_UNSAVED_SESSIONS',
  'At most %d sessions without an assistant message are held at once; save or delete one first', 429)
/** A collection of the tenant's blobs runs already (on this server or another). */
export const CollectionRunning = createError('SS_COLLECTION_RUNNING',
  "A collection of this tenant's blobs is running already; try again when it is done", 409)
/** What a refused write would exceed: `usage` of `limit` (bytes or sessions). */
export interface QuotaFacts { resource: 'bytes' | 'sessions', usage: number, limit: number }
/**
 * The tenant stores as much as its quota allows (507), or one request body is larger than the
 * whole quota (413). Carries `quota` (QuotaFacts), which the problem body shows.
 */
export const QuotaExceeded = createError<[string, number, number]>('SS_QUOTA_EXCEEDED',
  "The tenant's %s quota is spent (%d used of %d); delete sessions to make room", 507)
export const QuotaBodyTooLarge = createError<[number, number]>('SS_QUOTA_EXCEEDED',
  'The body (%d bytes) is larger than the tenant\'s whole quota of %d bytes', 413)
/** The argument is the budget of bytes in flight per token. */
export const TooManyDownloads = createError<[number]>('SS_TOO_MANY_DOWNLOADS',
  'Too many bytes in flight: at most %d bytes of answers at once per token; read or close the earlier ones first', 429)
/** The event loop lags behind: requests are shed until it catches up. */
/** `SEARCH_INDEX=0` on a disk or memory store: this server keeps no search index. */
export const SearchIndexOff = createError('SS_SEARCH_INDEX_OFF', 'Search is off on this server (SEARCH_INDEX=0)', 503)
export const Overloaded = createError('SS_OVERLOADED', 'The server is overloaded', 503)

/**
 * The database of `STORAGE=postgres` cannot be reached, or did not answer in time. Answered 503
 * with `Retry-After` (`retryAfterS`, seconds); the pool reconnects by itself when it returns.
 */
export const DatabaseUnavailable = createError<[] | [WithCause]>(
  'SS_DATABASE_UNAVAILABLE', 'The database is unavailable', 503)

/**
 * The `DatabaseUnavailable` that `err` is, or that caused it along its `cause` chain: a write that
 * failed because the database was away is answered as that outage (503, retry later), not as a
 * failed storage (507).
 */
export function databaseOutage (err: unknown): Error | undefined {
  for (let e = err, depth = 0; typeof e === 'object' && e !== null && depth < 8; e = (e as { cause?: unknown }).cause, depth++) {
    if (hasCode(e, 'SS_DATABASE_UNAVAILABLE')) return e as Error
  }
  return undefined
}

export const Internal = createError<[] | [WithCause]>('SS_INTERNAL', 'Internal server error', 500)
export const NotReady = createError<[string] | [string, WithCause]>('SS_NOT_READY', 'Not ready: %s', 503)
/**
 * A session's persistence failed and the error is latched (SPEC.md §8.7); other sessions keep
 * working. Pass the original error as `{ cause }`. Answered as 507 without the cause's message.
 */
export const StorageFailed = createError<[string] | [string, WithCause]>(
  'SS_STORAGE_FAILED', "Storage of session '%s' failed", 507)
/** Another live process holds DATA_DIR's lock file. Arguments: the data dir, the pid, the lock file. */
export const DataDirLocked = createError<[string, number, string]>('SS_DATA_DIR_LOCKED',
  'DATA_DIR %s is in use by process %d (lock file %s); one server owns a DATA_DIR', 500)
/** Another process held a shared file's lock for too long (src/lock-file.ts `withLockFile`). */
export const FileLockTimeout = createError<[string] | [string, WithCause]>(
  'SS_FILE_LOCK_TIMEOUT', 'Lock %s is held by another process; try again', 503)
/** A configuration variable is invalid at start-up. Arguments: the variable, then why. */
export const InvalidConfig = createError<[string, string]>('SS_INVALID_CONFIG', '%s: %s', 500)

/**
 * Node error codes of a failing disk. Thrown unwrapped by storage, they still answer 507
 * so that a disk failure never reads as a generic 500.
 */
export const STORAGE_ERRNO_CODES: ReadonlySet<string> = new Set([
  'ENOSPC', 'EDQUOT', 'EIO', 'EROFS', 'EFBIG', 'EACCES', 'EPERM',
])

/** The codes of Fastify's own client errors, by their `FST_` code (src/plugins/problem.ts). */
export const FASTIFY_ERROR_CODES: Readonly<Record<string, string>> = {
  FST_ERR_VALIDATION: 'SS_VALIDATION',
  FST_ERR_CTP_INVALID_JSON_BODY: 'SS_INVALID_JSON',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'SS_INVALID_JSON',
  FST_ERR_CTP_BODY_TOO_LARGE: 'SS_BODY_TOO_LARGE',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'SS_UNSUPPORTED_MEDIA_TYPE',
}

/** Any other client error without an `SS_` code, by status (else `SS_CLIENT_ERROR`). */
export const STATUS_FALLBACK_CODES: Readonly<Record<number, string>> = {
  400: 'SS_BAD_REQUEST',
  404: 'SS_NOT_FOUND',
  405: 'SS_METHOD_NOT_ALLOWED',
  413: 'SS_BODY_TOO_LARGE',
  414: 'SS_URI_TOO_LONG',
  415: 'SS_UNSUPPORTED_MEDIA_TYPE',
}

/** The body of every error response, `application/problem+json` (RFC 9457). */
export const Problem = Type.Object({
  type: Type.String({ description: 'Always `about:blank`: `code` identifies the problem' }),
  title: Type.String({ description: 'The HTTP status text' }),
  status: Type.Integer({ minimum: 400, maximum: 599 }),
  code: Type.String({ pattern: '^SS_[A-Z0-9_]+$', description: 'Stable machine-readable code' }),
  detail: Type.Optional(Type.String({ description: 'Human-readable explanation; never sent for 5xx' })),
  quota: Type.Optional(Type.Object({
    resource: Type.Union([Type.Literal('bytes'), Type.Literal('sessions')], { description: 'What the quota bounds' }),
    usage: Type.Integer({ minimum: 0, description: 'What the tenant stores now' }),
    limit: Type.Integer({ minimum: 0, description: 'Its quota' }),
  }, { additionalProperties: false, description: 'With `SS_QUOTA_EXCEEDED`: the quota the write would pass' })),
}, { $id: 'Problem', additionalProperties: false })
// eslint-disable-next-line @typescript-eslint/no-redeclare -- the schema and its static type share one name
export type Problem = Static<typeof Problem>

export const PROBLEM_CONTENT_TYPE = 'application/problem+json'

/** One documented error response: a `Problem` served as `application/problem+json`. */
const problemResponse = (status: number) => ({
  description: STATUS_CODES[status] ?? 'Error',
  content: { [PROBLEM_CONTENT_TYPE]: { schema: Type.Unsafe<Problem>(Type.Ref('Problem')) } },
})
type ProblemResponse = ReturnType<typeof problemResponse>

/**
 * The error responses of a route schema, e.g. `response: { 200: Ok, ...problemResponses(400, 404) }`.
 * Fastify serializes them with the Problem schema and OpenAPI documents them as problem+json.
 */
export function problemResponses<S extends number> (...statuses: S[]): Record<S, ProblemResponse> {
  const out: Partial<Record<S, ProblemResponse>> = {}
  for (const status of statuses) out[status] = problemResponse(status)
  return out as Record<S, ProblemResponse>
}
