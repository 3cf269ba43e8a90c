/**
 * Schemas of the Entries routes (API.md "Entries"): one exported object per operation, and the
 * named request and response bodies (`entryRouteComponents`, listed in src/schemas/shared.ts).
 * The entry shapes themselves are in entry-types.schema.ts.
 */
import { Type, type TSchema } from '@sinclair/typebox'
import { problemResponses } from '../src/errors.js'
import { MAX_JSON_DEPTH } from '../src/plugins/json-depth.js'
import { BODY_ERRORS, ETagHeader } from '../src/schemas/responses.js'
import { ref } from '../src/schemas/ref.js'
import { Entry, NewEntry } from './entry-types.schema.js'
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

/**
 * The append body as documented: a batch. The route also takes one NewEntry (which may carry
 * `parentId`, API.md "Entries"), made a batch of one before validation (routes/entries.ts).
 */
export const AppendEntriesBody = Type.Object({
  entries: Type.Array(ref(NewEntry), { minItems: 1, description: 'Appended in order, each attached to the one before' }),
  parentId: ParentId,
}, {
  $id: 'AppendEntriesBody',
  additionalProperties: false,
  description: '`{entries: [...], parentId?}`. The server also takes one NewEntry as the whole body (a batch of one).',
})

export const AppendResult = Type.Object({
  entries: Type.Array(ref(Entry)),
  leafId: NullableEntryId,
  firstSeq: Type.Integer({ minimum: 1 }),
  lastSeq: Type.Integer({ minimum: 1 }),
  persisted: Type.Boolean({ description: 'True: on disk and fsynced. False: held in memory until the first assistant message' }),
}, { $id: 'AppendResult', additionalProperties: false })

export const EntriesPage = Type.Object({
  entries: Type.Array(ref(Entry)),
  after: Type.Integer({ minimum: 0 }),
  next: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], { description: 'The `after` of the next page; `null` at the end' }),
  total: Type.Integer({ minimum: 0, description: "The session's entry count" }),
}, { $id: 'EntriesPage', additionalProperties: false })

export const SetLeafBody = Type.Object({
  leafId: NullableEntryId,
  durable: Type.Optional(Type.Boolean({ description: 'Record the move on disk (an empty branch summary under `leafId`); default false' })),
}, { $id: 'SetLeafBody', additionalProperties: false })

export const LeafMove = Type.Object({
  leafId: NullableEntryId,
  etag: Type.String(),
  durable: Type.Boolean({ description: 'True: the move survives a restart. False: held in memory only, lost on restart or eviction' }),
}, { $id: 'LeafMove', additionalProperties: false })

export const BranchSummaryBody = Type.Object({
  fromId: NullableEntryId,
  summary: Type.String(),
  details: Type.Optional(Type.Unknown()),
  fromExtension: Type.Optional(Type.Boolean()),
}, { $id: 'BranchSummaryBody', additionalProperties: false })

export const BranchSummaryResult = Type.Object({ entry: ref(Entry), leafId: NullableEntryId }, {
  $id: 'BranchSummaryResult', additionalProperties: false,
})

export const TreeView = Type.Object({ leafId: NullableEntryId, nodes: Type.Array(ref(TreeNode)) }, {
  $id: 'TreeView', additionalProperties: false,
})

export const BranchPath = Type.Object({ entries: Type.Array(ref(Entry), { description: 'Root first' }) }, {
  $id: 'BranchPath', additionalProperties: false,
})

/** The named bodies of this file, for `sharedSchemas()`. */
export const entryRouteComponents = (): TSchema[] => [
  TreeNode, SessionContext, AppendEntriesBody, AppendResult, EntriesPage, SetLeafBody, LeafMove,
  BranchSummaryBody, BranchSummaryResult, TreeView, BranchPath,
]

const EntryParams = Type.Object({ id: SessionId, entryId: PathEntryId })

/** A 2xx body about one session, sent with the session's `ETag`. */
const withEtag = <T extends TSchema>(schema: T, description: string) => ({ ...ref(schema), description, headers: { ETag: ETagHeader } })

export const GetEntries = {
  operationId: 'getEntries',
  tags: ['entries'],
  summary: 'A page of entries in seq order',
  description: 'Entry `i` of the page has `seq = after + i + 1`; `next` is the `after` of the next page, or `null` after the last.',
  params: IdParams,
  querystring: Type.Object({
    after: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'Default 0; beyond 2^53 − 1 the answer is 400, never a rounded value' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, description: 'Default 100' })),
    blobs: BlobsQuery,
  }),
  response: { 200: withEtag(EntriesPage, 'The page'), ...problemResponses(400, 404, 422, 507) },
}

export const GetEntry = {
  operationId: 'getEntry',
  tags: ['entries'],
  summary: 'One entry',
  description: 'The entry with this id, blob refs resolved unless `blobs=ref`. An id that is not in the session is 404.',
  params: EntryParams,
  querystring: Type.Object({ blobs: BlobsQuery }),
  response: { 200: withEtag(Entry, 'The entry'), ...problemResponses(400, 404, 422, 507) },
}

export const AppendEntries = {
  operationId: 'appendEntries',
  tags: ['entries'],
  summary: 'Append entries (atomic batch)',
  description: 'Validated whole, then all appended contiguous in seq, or none. Answers once the batch is durable ' +
    '(`persisted: true`) or held under the deferral rule (`persisted: false`). The first entry attaches to ' +
    '`parentId` when given, else to the current leaf. One NewEntry as the whole body is a batch of one. ' +
    'Entries are stored so that the agents can open and list the file (docs/compatibility.md): an assistant ' +
    'message, a `model_usage` entry and a `task` tool result get a complete `usage`, zeroed where missing, and ' +
    'the answer shows that stored form; an entry the agents could not read (an assistant `content` that is not ' +
    'an array of blocks, a text block without a string `text`, a user message without a string or array ' +
    '`content`, a usage record that is not an object, …) is refused with 400 naming the field. ' +
    'Numbers are stored by value: `1.0`, `1e2` and `-0` are stored as `1`, `100` and `0`, and a number that a double ' +
    'cannot hold as sent (beyond ±1.8e308, so small that it would become 0, or with more digits than a double keeps, ' +
    'such as most integers beyond 2^53 − 1) is refused with 400 `SS_INEXACT_NUMBER` naming its JSON path, never ' +
    'stored rounded or as `null`: send such a number as a string. A `__proto__` key at the top level of an entry is ' +
    'refused with 400 `SS_VALIDATION` naming it; inside a value it is kept as data.',
  params: IdParams,
  headers: Type.Object({
    ...IfMatchHeaders.properties,
    'idempotency-key': Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: 'A retry with the same key and body replays the first answer' })),
  }),
  querystring: Type.Object({ blobs: BlobsQuery }),
  body: ref(AppendEntriesBody),
  response: {
    201: {
      ...ref(AppendResult),
      description: 'Appended (or, with `Idempotent-Replayed: true`, the first answer to this Idempotency-Key again)',
      headers: { ETag: ETagHeader, 'Idempotent-Replayed': Type.Literal('true') },
    },
    ...problemResponses(...BODY_ERRORS, 404, 412, 422, 507),
    400: {
      ...problemResponses(400)[400],
      description: `The body is not JSON or nests deeper than ${MAX_JSON_DEPTH} levels (\`SS_INVALID_JSON\`), holds a number a double ` +
        'cannot hold as sent (`SS_INEXACT_NUMBER`), or an entry is invalid (`SS_VALIDATION`); the detail names the JSON path',
    },
    413: {
      ...problemResponses(413)[413],
      description: 'The body is larger than BODY_LIMIT (`SS_BODY_TOO_LARGE`), or the batch has more than ' +
        'MAX_BATCH_ENTRIES entries (`SS_BATCH_TOO_LARGE`; by default 1000 with tokens, no cap without)',
    },
  },
}

export const PutLeaf = {
  operationId: 'setLeaf',
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
  body: ref(SetLeafBody),
  response: { 200: withEtag(LeafMove, 'Moved'), ...problemResponses(...BODY_ERRORS, 404, 412, 422, 507) },
}

export const BranchSummary = {
  operationId: 'branchSummary',
  tags: ['entries'],
  summary: 'Move the leaf to `fromId` and append a branch summary there',
  description: 'Summarizes the abandoned branch: the leaf moves to `fromId` and a `branch_summary` entry is appended as its child.',
  params: IdParams,
  headers: IfMatchHeaders,
  querystring: Type.Object({ blobs: BlobsQuery }),
  body: ref(BranchSummaryBody),
  response: {
    201: withEtag(BranchSummaryResult, 'Appended'),
    ...problemResponses(...BODY_ERRORS, 404, 412, 422, 507),
  },
}

export const GetTree = {
  operationId: 'getTree',
  tags: ['entries'],
  summary: 'The tree as flat nodes in file order',
  description: 'Every entry as a node with its children ids; deep chains are returned without recursion.',
  params: IdParams,
  response: { 200: withEtag(TreeView, 'The tree'), ...problemResponses(404, 422, 507) },
}

export const GetBranch = {
  operationId: 'getBranch',
  tags: ['entries'],
  summary: 'The path root → leafId (default: the current leaf)',
  description: 'Empty for an unknown `leafId` or a `null` leaf (SPEC.md `getBranch`).',
  params: IdParams,
  querystring: Type.Object({ leafId: Type.Optional(EntryId), blobs: BlobsQuery }),
  response: { 200: withEtag(BranchPath, 'The path'), ...problemResponses(400, 404, 422, 507) },
}

export const GetContext = {
  operationId: 'getContext',
  tags: ['entries'],
  summary: 'What the model receives at leafId (default: the current leaf)',
  description: 'An unknown `leafId` falls back to the last entry (SPEC.md §7.2).',
  params: IdParams,
  querystring: Type.Object({ leafId: Type.Optional(EntryId), blobs: BlobsQuery }),
  response: { 200: withEtag(SessionContext, 'The context'), ...problemResponses(400, 404, 422, 507) },
}
