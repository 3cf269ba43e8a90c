/**
 * Schemas of the Sessions routes (API.md "Sessions"): one exported object per operation, plus
 * the shared `Session`, `SessionInfo`, `RecentSession` and header shapes (listed in
 * src/schemas/shared.ts).
 */
import { Type } from '@sinclair/typebox'
import { problemResponses } from '../src/errors.js'
import { MAX_TITLE_LENGTH } from '../src/registry/session-info.js'
import { BODY_ERRORS, ETagHeader, LocationHeader } from '../src/schemas/responses.js'
import { ref } from '../src/schemas/shared.js'
// Named here so that declaration emit can spell the schema symbols of spread TypeBox objects.
import { Hint, Kind, OptionalKind, ReadonlyKind } from '@sinclair/typebox'

/** Any string: an id is only ever looked up, so one that cannot exist is simply not found (404). */
export const SessionId = Type.String({ description: 'Session id (a key of the session index)' })
const ClientSessionId = Type.String({
  pattern: '^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$',
  description: 'A client-chosen id; not `recent`, `continue` or `import`',
})
const Cwd = Type.String({ minLength: 1, description: 'Working directory the session belongs to, used verbatim' })
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

const SessionWithEtag = (description: string) => ({
  ...ref(Session), description, headers: { ETag: ETagHeader },
})

/** A 201 with the new session, its etag and its `Location`. */
const CreatedSession = (description: string) => ({
  ...ref(Session), description, headers: { Location: LocationHeader, ETag: ETagHeader },
})

const Title = Type.String({ maxLength: MAX_TITLE_LENGTH, description: `At most ${MAX_TITLE_LENGTH} characters` })

export const CreateSession = {
  tags: ['sessions'],
  summary: 'Create a session',
  description: 'A new session is held in memory until its first assistant message (`persisted: false`), ' +
    'whether the server or the client (`id`) chooses its id.',
  body: Type.Object({
    cwd: Cwd,
    title: Type.Optional(Title),
    parentSession: Type.Optional(Type.String()),
    id: Type.Optional(ClientSessionId),
  }, { additionalProperties: false }),
  response: {
    201: CreatedSession('Created'),
    ...problemResponses(...BODY_ERRORS, 409, 429, 507),
  },
}

export const ListSessions = {
  tags: ['sessions'],
  summary: 'List sessions, newest first',
  description: 'Without `cwd` every project is listed. Sessions without any message are hidden unless `includeEmpty=true`.',
  querystring: Type.Object({
    cwd: Type.Optional(Cwd),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, description: 'Default 50' })),
    cursor: Type.Optional(Type.String({ description: 'Opaque: `nextCursor` of the previous page' })),
    includeEmpty: Type.Optional(Type.Boolean()),
  }),
  response: {
    200: Type.Object({
      sessions: Type.Array(ref(SessionInfo)),
      nextCursor: Type.Union([Type.String(), Type.Null()]),
    }, { additionalProperties: false }),
    ...problemResponses(400),
  },
}

export const RecentSessions = {
  tags: ['sessions'],
  summary: 'The most recent sessions of a cwd, from prefix reads',
  description: 'Header-only sessions are included, also those held in memory under the deferral rule ' +
    '(no file yet). Names: title, else the first user text, else the id; at most 40 characters.',
  querystring: Type.Object({
    cwd: Cwd,
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, description: 'Default 3' })),
  }),
  response: {
    200: Type.Object({ sessions: Type.Array(ref(RecentSession)) }, { additionalProperties: false }),
    ...problemResponses(400),
  },
}

export const ContinueSession = {
  tags: ['sessions'],
  summary: "Resume the terminal's or the newest session of a cwd, else start one",
  body: Type.Object({
    cwd: Cwd,
    terminalId: Type.Optional(Type.String({ description: 'Matches `^[A-Za-z0-9._-]{1,128}$`' })),
  }, { additionalProperties: false }),
  response: {
    200: SessionWithEtag('Resumed'),
    201: CreatedSession('Started'),
    ...problemResponses(...BODY_ERRORS, 422, 429, 507),
  },
}

export const GetSession = {
  tags: ['sessions'],
  summary: 'A session: header and state',
  params: IdParams,
  response: { 200: SessionWithEtag('The session'), ...problemResponses(404, 422, 507) },
}

export const PatchSession = {
  tags: ['sessions'],
  summary: 'Set the title',
  params: IdParams,
  headers: IfMatchHeaders,
  body: Type.Object({ title: Title }, { additionalProperties: false }),
  response: { 200: SessionWithEtag('Updated'), ...problemResponses(...BODY_ERRORS, 404, 412, 422, 507) },
}

export const MoveSession = {
  tags: ['sessions'],
  summary: "Move the session to another cwd's directory",
  params: IdParams,
  headers: IfMatchHeaders,
  body: Type.Object({ cwd: Cwd }, { additionalProperties: false }),
  response: { 200: SessionWithEtag('Moved'), ...problemResponses(...BODY_ERRORS, 404, 409, 412, 422, 507) },
}

export const ForkSession = {
  tags: ['sessions'],
  summary: 'Copy the session (every entry) or, with `leafId`, the path root→leafId into a new session',
  description: 'The body is optional: no body copies every entry.',
  'x-optional-body': true,
  params: IdParams,
  headers: IfMatchHeaders,
  body: Type.Object({ leafId: Type.Optional(Type.String({ minLength: 1 })) }, { additionalProperties: false }),
  response: {
    201: CreatedSession('The new session'),
    ...problemResponses(...BODY_ERRORS, 404, 412, 422, 429, 507),
  },
}

export const ImportSession = {
  tags: ['sessions'],
  summary: 'Import a session file (JSONL, any version)',
  description: "Keeps the file's session id (409 when it exists) unless `newId=true`. Old versions are migrated.",
  consumes: ['application/x-ndjson', 'application/jsonl', 'text/plain'],
  querystring: Type.Object({ newId: Type.Optional(Type.Boolean()) }),
  body: Type.String({ description: 'The session file: one JSON object per line, the header first' }),
  response: {
    201: CreatedSession('Imported'),
    ...problemResponses(...BODY_ERRORS, 409, 422, 507),
  },
}

export const ExportSession = {
  tags: ['sessions'],
  summary: 'The stored session file',
  params: IdParams,
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
  tags: ['sessions'],
  summary: 'Delete the session and its file',
  params: IdParams,
  headers: IfMatchHeaders,
  response: {
    204: { description: 'Deleted', type: 'null' },
    ...problemResponses(404, 412, 422, 507),
  },
}
