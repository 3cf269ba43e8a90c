/**
 * Schemas of the Entries routes (API.md "Entries"): one exported object per operation, plus the
 * shared `Entry`, `NewEntry`, `TreeNode` and `SessionContext` shapes (listed in
 * src/schemas/shared.ts). NewEntry is built from the model's own `entryFields`.
 */
import { Type, type TProperties, type TSchema } from '@sinclair/typebox'
import { problemResponses } from '../src/errors.js'
import { BODY_ERRORS, ETagHeader } from '../src/schemas/responses.js'
import { ref } from '../src/schemas/shared.js'
import { AgentMessageSchema, ENTRY_TYPES, entryFields, OtherEntrySchema } from '../src/session/types.js'
import { IdParams, IfMatchHeaders, SessionId } from './sessions.schema.js'
// Named here so that declaration emit can spell the schema symbols of spread TypeBox objects.
import { Hint, Kind, OptionalKind, ReadonlyKind } from '@sinclair/typebox'

const EntryId = Type.String({ minLength: 1, description: 'Entry id' })
/** In a path, any string: an entry id is only looked up, so one that cannot exist is not found (404). */
const PathEntryId = Type.String({ description: 'Entry id' })
const NullableEntryId = Type.Union([EntryId, Type.Null()])
export const BlobsQuery = Type.Optional(Type.Union([Type.Literal('inline'), Type.Literal('ref')], {
  description: '`ref` keeps image data as `blob:sha256:<hex>` refs; default `inline` (base64)',
}))

/** Any stored entry: the base fields plus its type's fields (unknown keys kept). */
export const Entry = Type.Object({
  type: Type.String(),
  id: Type.String(),
  parentId: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  timestamp: Type.Optional(Type.String()),
}, { $id: 'Entry', additionalProperties: true })

/** `AgentMessage` without its `$id`, so that it can be embedded in several schemas. */
const { $id: _messageId, ...AgentMessage } = AgentMessageSchema
const fieldsOf = (type: (typeof ENTRY_TYPES)[number]): TProperties =>
  type === 'message' ? { message: AgentMessage as TSchema } : entryFields[type] as TProperties

/** An entry as a client appends it: any entry type without `id`, `parentId`, `timestamp`. */
export const NewEntry = Type.Union([...ENTRY_TYPES.map((type) => Type.Object(
  { type: Type.Literal(type), ...fieldsOf(type) },
  { additionalProperties: true, title: type },
)), OtherEntrySchema], {
  $id: 'NewEntry',
  description: 'Any entry type of SPEC.md §3.5, `service_tier_change`, or any other type (stored untouched, ' +
    'ignored by the context), without id, parentId and timestamp',
})

export const TreeNode = Type.Object({
  id: Type.String(),
  parentId: Type.Union([Type.String(), Type.Null()]),
  type: Type.String(),
  timestamp: Type.String(),
  label: Type.Optional(Type.String()),
  children: Type.Array(Type.String(), { description: 'Child ids, oldest first' }),
}, { $id: 'TreeNode', additionalProperties: false })

export const SessionContext = Type.Object({
  messages: Type.Array(Type.Unknown(), { description: 'What the model receives, in order' }),
  thinkingLevel: Type.String(),
  models: Type.Record(Type.String(), Type.String()),
  injectedTtsrRules: Type.Array(Type.String()),
  mode: Type.String(),
  modeData: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  serviceTier: Type.Optional(Type.Record(Type.String(), Type.String(), {
    description: 'Provider service tier per family (`openai`, `anthropic`, `google`), from the last `service_tier_change` on the path',
  })),
}, { $id: 'SessionContext', additionalProperties: false })

const ParentId = Type.Optional(Type.Union([EntryId, Type.Null()], {
  description: 'Parent of the first entry: an entry id, `null` for a new root; default the current leaf',
}))

const AppendBody = Type.Union([
  Type.Object({ entries: Type.Array(ref(NewEntry), { minItems: 1 }), parentId: ParentId }, { additionalProperties: false }),
  Type.Intersect([ref(NewEntry), Type.Object({ parentId: ParentId })]),
], { description: '`{entries: [...], parentId?}`, or one entry (which may carry `parentId`)' })

const AppendResult = Type.Object({
  entries: Type.Array(ref(Entry)),
  leafId: NullableEntryId,
  firstSeq: Type.Integer({ minimum: 1 }),
  lastSeq: Type.Integer({ minimum: 1 }),
  persisted: Type.Boolean({ description: 'True: on disk and fsynced. False: held in memory until the first assistant message' }),
}, { additionalProperties: false })

const EntryParams = Type.Object({ id: SessionId, entryId: PathEntryId })

/** A 2xx body about one session, sent with the session's `ETag`. */
const withEtag = <T extends object>(schema: T, description: string) => ({ ...schema, description, headers: { ETag: ETagHeader } })

export const GetEntries = {
  tags: ['entries'],
  summary: 'A page of entries in seq order',
  description: 'Entry `i` of the page has `seq = after + i + 1`; `next` is the `after` of the next page.',
  params: IdParams,
  querystring: Type.Object({
    after: Type.Optional(Type.Integer({ minimum: 0, description: 'Default 0' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, description: 'Default 100' })),
    blobs: BlobsQuery,
  }),
  response: {
    200: withEtag(Type.Object({
      entries: Type.Array(ref(Entry)),
      after: Type.Integer({ minimum: 0 }),
      next: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]),
      total: Type.Integer({ minimum: 0 }),
    }, { additionalProperties: false }), 'The page'),
    ...problemResponses(400, 404, 422, 507),
  },
}

export const GetEntry = {
  tags: ['entries'],
  summary: 'One entry',
  params: EntryParams,
  querystring: Type.Object({ blobs: BlobsQuery }),
  response: { 200: withEtag(ref(Entry), 'The entry'), ...problemResponses(400, 404, 422, 507) },
}

export const AppendEntries = {
  tags: ['entries'],
  summary: 'Append entries (atomic batch)',
  description: 'Validated whole, then all appended contiguous in seq, or none. Answers once the batch is durable ' +
    '(`persisted: true`) or held under the deferral rule (`persisted: false`).',
  params: IdParams,
  headers: Type.Object({
    ...IfMatchHeaders.properties,
    'idempotency-key': Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: 'A retry with the same key and body replays the first answer' })),
  }),
  querystring: Type.Object({ blobs: BlobsQuery }),
  body: AppendBody,
  response: {
    201: {
      ...AppendResult,
      description: 'Appended (or, with `Idempotent-Replayed: true`, the first answer to this Idempotency-Key again)',
      headers: { ETag: ETagHeader, 'Idempotent-Replayed': Type.Literal('true') },
    },
    ...problemResponses(...BODY_ERRORS, 404, 412, 422, 507),
    413: {
      ...problemResponses(413)[413],
      description: 'The body is larger than BODY_LIMIT (`SS_BODY_TOO_LARGE`), or the batch has more than ' +
        'MAX_BATCH_ENTRIES entries (`SS_BATCH_TOO_LARGE`; by default 1000 with tokens, no cap without)',
    },
  },
}

export const PutLeaf = {
  tags: ['entries'],
  summary: 'Move the leaf without appending',
  description: 'The leaf is not stored in the session file (SPEC.md §6.1): a move alone is held in memory and ' +
    'answered with `durable: false`; it is lost when the server restarts or evicts the session, which then reopens ' +
    'at its last entry in file order, as the agents do. With `durable: true` the move is recorded the way the ' +
    'agents record one: an empty `branch_summary` (nothing in the context) is appended under `leafId` and becomes ' +
    'the leaf; the answer names it and says `durable: true` once it is fsynced (`false` while the session is ' +
    'still held in memory before its first assistant message).',
  params: IdParams,
  headers: IfMatchHeaders,
  body: Type.Object({
    leafId: NullableEntryId,
    durable: Type.Optional(Type.Boolean({ description: 'Record the move on disk (an empty branch summary under `leafId`); default false' })),
  }, { additionalProperties: false }),
  response: {
    200: withEtag(Type.Object({
      leafId: NullableEntryId,
      etag: Type.String(),
      durable: Type.Boolean({ description: 'True: the move survives a restart. False: held in memory only, lost on restart or eviction' }),
    }, { additionalProperties: false }), 'Moved'),
    ...problemResponses(...BODY_ERRORS, 404, 412, 422, 507),
  },
}

export const BranchSummary = {
  tags: ['entries'],
  summary: 'Move the leaf to `fromId` and append a branch summary there',
  params: IdParams,
  headers: IfMatchHeaders,
  querystring: Type.Object({ blobs: BlobsQuery }),
  body: Type.Object({
    fromId: NullableEntryId,
    summary: Type.String(),
    details: Type.Optional(Type.Unknown()),
    fromExtension: Type.Optional(Type.Boolean()),
  }, { additionalProperties: false }),
  response: {
    201: withEtag(Type.Object({ entry: ref(Entry), leafId: NullableEntryId }, { additionalProperties: false }), 'Appended'),
    ...problemResponses(...BODY_ERRORS, 404, 412, 422, 507),
  },
}

export const GetTree = {
  tags: ['entries'],
  summary: 'The tree as flat nodes in file order',
  params: IdParams,
  response: {
    200: withEtag(Type.Object({ leafId: NullableEntryId, nodes: Type.Array(ref(TreeNode)) }, { additionalProperties: false }), 'The tree'),
    ...problemResponses(404, 422, 507),
  },
}

export const GetBranch = {
  tags: ['entries'],
  summary: 'The path root → leafId (default: the current leaf)',
  description: 'Empty for an unknown `leafId` or a `null` leaf (SPEC.md `getBranch`).',
  params: IdParams,
  querystring: Type.Object({ leafId: Type.Optional(EntryId), blobs: BlobsQuery }),
  response: {
    200: withEtag(Type.Object({ entries: Type.Array(ref(Entry)) }, { additionalProperties: false }), 'The path'),
    ...problemResponses(400, 404, 422, 507),
  },
}

export const GetContext = {
  tags: ['entries'],
  summary: 'What the model receives at leafId (default: the current leaf)',
  description: 'An unknown `leafId` falls back to the last entry (SPEC.md §7.2).',
  params: IdParams,
  querystring: Type.Object({ leafId: Type.Optional(EntryId), blobs: BlobsQuery }),
  response: { 200: withEtag(ref(SessionContext), 'The context'), ...problemResponses(400, 404, 422, 507) },
}
