/**
 * Schemas of the Sessions routes (API.md "Sessions"): one exported object per operation, plus
 * the shared `Session`, `SessionInfo`, `RecentSession` and header shapes (listed in
 * src/schemas/shared.ts).
 */
import { Type, type TSchema } from '@sinclair/typebox'
import { problemResponses } from '../src/errors.js'
import { MAX_TITLE_LENGTH } from '../src/session/listing-item.js'
import { BODY_ERRORS, ETagHeader, LocationHeader } from '../src/schemas/responses.js'
import { ref } from '../src/schemas/ref.js'
// Named here so that declaration emit can spell the schema symbols of spread TypeBox objects.
import { Hint, Kind, OptionalKind, ReadonlyKind } from '@sinclair/typebox'

/** Any string: an id is only ever looked up, so one that cannot exist is simply not found (404). */
export const SessionId = Type.String({ description: 'Session id (a key of the session index)' })
const ClientSessionId = Type.String({
  pattern: '^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$',
  description: 'A client-chosen id; not `recent`, `continue` or `import`',
})
/**
 * What `assertValidCwd` (src/session/cwd.ts) enforces, as far as a schema can say it: no NUL, CR
 * or LF, and a directory name of at most 255 UTF-8 bytes (`--` + cwd without one leading `/` or
 * `\` + `--`): 252 characters with that leading separator, 251 without (exact for ASCII; the
 * description names the byte bound that decides for other characters).
 */
export const Cwd = Type.String({
  minLength: 1,
  maxLength: 252,
  pattern: '^(?:[/\\\\][^\\u0000\\r\\n]{0,251}|[^/\\\\\\u0000\\r\\n][^\\u0000\\r\\n]{0,250})$',
  description: 'Working directory the session belongs to, used verbatim. No NUL, CR or LF; its directory name ' +
    '(`--` + cwd without one leading `/` or `\\`, with `/`, `\\` and `:` as `-`, + `--`) is at most 255 UTF-8 bytes: ' +
    '252 characters with that leading separator, 251 without, fewer for characters of several bytes',
})
/** What `assertValidTerminalId` enforces: SPEC.md §2.4. */
const TerminalId = Type.String({
  pattern: '^(?!\\.{1,2}$)[A-Za-z0-9._-]{1,128}$',
  description: 'Identifies the terminal: `^[A-Za-z0-9._-]{1,128}$`, not `.` or `..`',
})
const Instant = Type.String({ description: 'ISO 8601 instant' })

export const IdParams = Type.Object({ id: SessionId })
export const IfMatchHeaders = Type.Object({
  'if-match': Type.Optional(Type.String({ description: 'The etag the change is based on; 412 when stale' })),
})

/** The header record as stored (unknown keys kept). */
export const StoredSessionHeader = Type.Object({
  type: Type.Literal('session'),
  version: Type.Optional(Type.Integer({ minimum: 1 })),
  id: Type.String(),
  timestamp: Type.Optional(Type.String()),
  cwd: Type.Optional(Type.String()),
  title: Type.Optional(Type.String()),
  parentSession: Type.Optional(Type.String()),
}, { $id: 'StoredSessionHeader', additionalProperties: true, description: 'The stored header object verbatim' })

export const Session = Type.Object({
  header: ref(StoredSessionHeader),
  leafId: Type.Union([Type.String(), Type.Null()]),
  entryCount: Type.Integer({ minimum: 0 }),
  messageCount: Type.Integer({ minimum: 0 }),
  persisted: Type.Boolean({ description: 'False while held in memory under the deferral rule (no assistant message yet)' }),
  modified: Instant,
  etag: Type.String({ description: 'Opaque; also the ETag header. Changes with every mutation' }),
}, { $id: 'Session', additionalProperties: false })

export const SessionInfo = Type.Object({
  id: Type.String(),
  cwd: Type.String(),
  title: Type.Optional(Type.String()),
  parentSession: Type.Optional(Type.String()),
  created: Instant,
  modified: Instant,
  messageCount: Type.Integer({ minimum: 0 }),
  firstMessage: Type.String(),
  entryCount: Type.Integer({ minimum: 0 }),
}, { $id: 'SessionInfo', additionalProperties: false })

export const RecentSession = Type.Object({
  id: Type.String(),
  name: Type.String({ description: 'Title, else first user text, else id; at most 40 characters' }),
  modified: Instant,
}, { $id: 'RecentSession', additionalProperties: false })

const Title = Type.String({ maxLength: MAX_TITLE_LENGTH, description: `At most ${MAX_TITLE_LENGTH} characters` })

export const CreateSessionBody = Type.Object({
  cwd: Cwd,
  title: Type.Optional(Title),
  parentSession: Type.Optional(Type.String()),
  id: Type.Optional(ClientSessionId),
}, { $id: 'CreateSessionBody', additionalProperties: false })

export const SessionList = Type.Object({
  sessions: Type.Array(ref(SessionInfo)),
  nextCursor: Type.Union([Type.String(), Type.Null()], { description: 'The `cursor` of the next page; `null` at the end' }),
}, { $id: 'SessionList', additionalProperties: false })

export const RecentSessionList = Type.Object({ sessions: Type.Array(ref(RecentSession)) }, {
  $id: 'RecentSessionList', additionalProperties: false,
})

export const ContinueSessionBody = Type.Object({ cwd: Cwd, terminalId: Type.Optional(TerminalId) }, {
  $id: 'ContinueSessionBody', additionalProperties: false,
})

export const RenameSessionBody = Type.Object({ title: Title }, { $id: 'RenameSessionBody', additionalProperties: false })

export const MoveSessionBody = Type.Object({ cwd: Cwd }, { $id: 'MoveSessionBody', additionalProperties: false })

export const ForkSessionBody = Type.Object({
  leafId: Type.Optional(Type.String({ minLength: 1, description: 'Copy only the path root → leafId' })),
}, { $id: 'ForkSessionBody', additionalProperties: false })

/** The named bodies of this file, for `sharedSchemas()`. */
export const sessionRouteComponents = (): TSchema[] => [
  StoredSessionHeader, Session, SessionInfo, RecentSession, CreateSessionBody, SessionList, RecentSessionList,
  ContinueSessionBody, RenameSessionBody, MoveSessionBody, ForkSessionBody,
]

const SessionWithEtag = (description: string) => ({
  ...ref(Session), description, headers: { ETag: ETagHeader },
})

/** A 201 with the new session, its etag and its `Location`. */
const CreatedSession = (description: string) => ({
  ...ref(Session), description, headers: { Location: LocationHeader, ETag: ETagHeader },
})

export const CreateSession = {
  operationId: 'createSession',
  tags: ['sessions'],
  summary: 'Create a session',
  description: 'A new session is held in memory until its first assistant message (`persisted: false`), ' +
    'whether the server or the client (`id`) chooses its id.',
  body: ref(CreateSessionBody),
  response: {
    201: CreatedSession('Created'),
    ...problemResponses(...BODY_ERRORS, 409, 429, 507),
  },
}

export const ListSessions = {
  operationId: 'listSessions',
  tags: ['sessions'],
  summary: 'List sessions, newest first',
  description: 'Without `cwd` every project is listed. Sessions without any message are hidden unless `includeEmpty=true`.',
  querystring: Type.Object({
    cwd: Type.Optional(Cwd),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, description: 'Default 50' })),
    cursor: Type.Optional(Type.String({ minLength: 1, description: 'Opaque: `nextCursor` of the previous page; a bad one is 400' })),
    includeEmpty: Type.Optional(Type.Boolean()),
  }),
  response: {
    200: { ...ref(SessionList), description: 'A page of sessions' },
    ...problemResponses(400),
  },
}

export const RecentSessions = {
  operationId: 'recentSessions',
  tags: ['sessions'],
  summary: 'The most recent sessions of a cwd, from prefix reads',
  description: 'Header-only sessions are included, also those held in memory under the deferral rule ' +
    '(no file yet). Names: title, else the first user text, else the id; at most 40 characters.',
  querystring: Type.Object({
    cwd: Cwd,
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, description: 'Default 3' })),
  }),
  response: {
    200: { ...ref(RecentSessionList), description: 'The most recent sessions, newest first' },
    ...problemResponses(400),
  },
}

export const ContinueSession = {
  operationId: 'continueSession',
  tags: ['sessions'],
  summary: "Resume the terminal's or the newest session of a cwd, else start one",
  description: 'With `terminalId`, the session that terminal last used in this cwd; else the newest session of ' +
    'the cwd; else a new session (201).',
  body: ref(ContinueSessionBody),
  response: {
    200: SessionWithEtag('Resumed'),
    201: CreatedSession('Started'),
    ...problemResponses(...BODY_ERRORS, 422, 429, 507),
  },
}

export const GetSession = {
  operationId: 'getSession',
  tags: ['sessions'],
  summary: 'A session: header and state',
  description: 'The stored header verbatim, the leaf, counts, `persisted` and the etag (also the `ETag` header).',
  params: IdParams,
  response: { 200: SessionWithEtag('The session'), ...problemResponses(404, 422, 507) },
}

export const PatchSession = {
  operationId: 'renameSession',
  tags: ['sessions'],
  summary: 'Set the title',
  description: 'Sets the session title (SessionManager `setSessionName`); subscribers get a `session` event.',
  params: IdParams,
  headers: IfMatchHeaders,
  body: ref(RenameSessionBody),
  response: { 200: SessionWithEtag('Updated'), ...problemResponses(...BODY_ERRORS, 404, 412, 422, 507) },
}

export const MoveSession = {
  operationId: 'moveSession',
  tags: ['sessions'],
  summary: "Move the session to another cwd's directory",
  description: "Moves the file to the new cwd's directory and rewrites the header's `cwd`; 409 when a file of that name is there.",
  params: IdParams,
  headers: IfMatchHeaders,
  body: ref(MoveSessionBody),
  response: { 200: SessionWithEtag('Moved'), ...problemResponses(...BODY_ERRORS, 404, 409, 412, 422, 507) },
}

export const ForkSession = {
  operationId: 'forkSession',
  tags: ['sessions'],
  summary: 'Copy the session (every entry) or, with `leafId`, the path root→leafId into a new session',
  description: "The body is optional: no body copies every entry. The new header's `parentSession` is this session's id.",
  'x-optional-body': true,
  params: IdParams,
  headers: IfMatchHeaders,
  body: ref(ForkSessionBody),
  response: {
    201: CreatedSession('The new session'),
    ...problemResponses(...BODY_ERRORS, 404, 412, 422, 429, 507),
  },
}

export const ImportSession = {
  operationId: 'importSession',
  tags: ['sessions'],
  summary: 'Import a session file (JSONL, any version)',
  description: "Keeps the file's session id (409 when it exists) unless `newId=true`. Old versions are migrated. " +
    'A current file (LF-terminated compact JSON lines) is stored byte for byte, so the export returns it unchanged; ' +
    "an agent's title line before the header is read as the agents read it (docs/compatibility.md). " +
    'The same text sent as `application/json` is taken too. A number that a double cannot hold as sent is refused ' +
    'with 400 `SS_INEXACT_NUMBER` naming its line and JSON path, as in an append.',
  consumes: ['application/x-ndjson', 'application/jsonl', 'text/plain'],
  querystring: Type.Object({ newId: Type.Optional(Type.Boolean()) }),
  body: Type.String({ description: 'The session file: one JSON object per line, the header first' }),
  response: {
    201: CreatedSession('Imported'),
    ...problemResponses(...BODY_ERRORS, 409, 422, 507),
  },
}

export const ExportSession = {
  operationId: 'exportSession',
  tags: ['sessions'],
  summary: 'The stored session file',
  description: 'The JSONL file exactly as stored, header first; it opens in the agents and imports back. ' +
    'With `images=inline`, every blob ref the agents resolve is replaced by its data (lines without one are sent as ' +
    'stored): a file for a reader without a blob store, such as pi 0.73.',
  params: IdParams,
  querystring: Type.Object({
    images: Type.Optional(Type.Union([Type.Literal('ref'), Type.Literal('inline')], {
      description: '`ref` (default): as stored, images as `blob:sha256:<hex>` refs. `inline`: refs replaced by their data',
    })),
  }),
  response: {
    200: {
      description: 'The JSONL file as stored',
      headers: { ETag: ETagHeader },
      content: { 'application/x-ndjson': { schema: Type.String() } },
    },
    ...problemResponses(404, 422, 429, 507),
  },
}

export const DeleteSession = {
  operationId: 'deleteSession',
  tags: ['sessions'],
  summary: 'Delete the session and its file',
  description: 'Removes the file; subscribers get `deleted` and their stream ends.',
  params: IdParams,
  headers: IfMatchHeaders,
  response: {
    204: { description: 'Deleted', type: 'null' },
    ...problemResponses(404, 412, 422, 507),
  },
}
