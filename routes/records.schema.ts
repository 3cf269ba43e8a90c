/**
 * Schemas of the routes that take a session as an agent wrote it: `POST records` (entries that
 * carry their own `id`, `parentId` and `timestamp`) and `PUT file` (the whole file, replaced).
 * The named bodies are listed in src/schemas/shared.ts through `recordRouteComponents`.
 */
import { Type, type TSchema } from '@sinclair/typebox'
import { problemResponses } from '../src/errors.js'
import { BODY_ERRORS, ETagHeader, LocationHeader } from '../src/schemas/responses.js'
import { ref } from '../src/schemas/ref.js'
import { IdParams, IfMatchHeaders, Session } from './sessions.schema.js'
// Named here so that declaration emit can spell the schema symbols of spread TypeBox objects.
import { Hint, Kind, OptionalKind, ReadonlyKind } from '@sinclair/typebox'

/** One entry as an agent wrote it: its own id, parent and timestamp; every other key kept as sent. */
export const AgentRecord = Type.Object({
  type: Type.String({ minLength: 1, description: 'Any entry type but `session`' }),
  id: Type.String({ minLength: 1, description: 'The entry id the agent gave it; unique in the session' }),
  parentId: Type.Union([Type.String({ minLength: 1 }), Type.Null()], {
    description: 'An entry of the session or of this batch before it, or `null` for a root',
  }),
  timestamp: Type.String({ description: 'ISO 8601 instant, as the agent wrote it' }),
}, { $id: 'AgentRecord', additionalProperties: true, description: 'An entry exactly as it stands in the agent\'s file' })

export const AppendRecordsBody = Type.Object({
  records: Type.Array(ref(AgentRecord), { minItems: 1, description: 'In file order' }),
}, { $id: 'AppendRecordsBody', additionalProperties: false })

export const RecordsResult = Type.Object({
  appended: Type.Integer({ minimum: 0, description: 'Records that were new and are now stored' }),
  existing: Type.Integer({ minimum: 0, description: 'Records the session held already (the same record again changes nothing)' }),
  leafId: Type.String({ description: 'The last record of the batch' }),
  total: Type.Integer({ minimum: 0, description: "The session's entry count after the batch: the `seq` of its last entry" }),
  persisted: Type.Boolean({ description: 'True: on disk and fsynced. False: held in memory until the first assistant message' }),
}, { $id: 'RecordsResult', additionalProperties: false })

/** The named bodies of this file, for `sharedSchemas()`. */
export const recordRouteComponents = (): TSchema[] => [AgentRecord, AppendRecordsBody, RecordsResult]

export const AppendRecords = {
  operationId: 'appendRecords',
  tags: ['entries'],
  summary: 'Append entries that carry their own ids (as an agent wrote them)',
  description: 'Each record keeps its `id`, `parentId` and `timestamp` and is stored as sent (its JSON text, with ' +
    'the size and blob rules of SPEC.md §9 applied as to any line), so that the stored file is the agent\'s. ' +
    'An id is unique in the session: a record whose id is taken by the same record is a no-op (`existing`), by ' +
    'another one a 409 (`SS_ENTRY_ID_TAKEN`), and nothing of the batch is appended. A `parentId` must name an ' +
    'entry of the session or an earlier record of the batch (else 422), or be `null`. The leaf moves to the last ' +
    'record. `If-Match`, `Idempotency-Key`, the deferral rule and its bounds apply as for `POST entries`.',
  params: IdParams,
  headers: Type.Object({
    ...IfMatchHeaders.properties,
    'idempotency-key': Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: 'A retry with the same key and body replays the first answer' })),
  }),
  body: ref(AppendRecordsBody),
  response: {
    200: { ...ref(RecordsResult), description: 'Every record was there already; nothing was written', headers: { ETag: ETagHeader } },
    201: { ...ref(RecordsResult), description: 'Appended', headers: { ETag: ETagHeader, 'Idempotent-Replayed': Type.Literal('true') } },
    ...problemResponses(...BODY_ERRORS, 404, 409, 412, 413, 422, 507),
  },
}

export const ReplaceSessionFile = {
  operationId: 'replaceSessionFile',
  tags: ['sessions'],
  summary: 'Store a session file as the session (created, or replaced whole)',
  description: 'The body is the session file as an agent now holds it (JSONL, any version); its header `id` must ' +
    'be `{id}` (else 400). A session that does not exist is created as `import` creates it (201). An existing ' +
    'one is replaced whole, atomically (200): its entries, tree and context become what the file says, and its ' +
    'live streams reload it and get a `session` event. A current file (LF-terminated compact JSON lines) is ' +
    'stored byte for byte; its inline images are put in the blob store too. `If-Match: <etag>` replaces only ' +
    'that version (412 otherwise, and for a session that does not exist); `If-None-Match: *` only creates ' +
    '(412 when the session exists). A replacement counts against MAX_REWRITE_BYTES as a title change does (429).',
  consumes: ['application/x-ndjson', 'application/jsonl', 'text/plain'],
  params: IdParams,
  headers: Type.Object({
    ...IfMatchHeaders.properties,
    'if-none-match': Type.Optional(Type.Literal('*', { description: '`*`: create only; 412 when the session exists' })),
  }),
  body: Type.String({ description: 'The session file: one JSON object per line, the header (or an agent\'s title line) first' }),
  response: {
    200: { ...ref(Session), description: 'Replaced', headers: { ETag: ETagHeader } },
    201: { ...ref(Session), description: 'Created', headers: { ETag: ETagHeader, Location: LocationHeader } },
    ...problemResponses(...BODY_ERRORS, 412, 422, 507),
  },
}
