/**
 * Schemas of storage hygiene: a collection of the caller's tenant's unreferenced blobs
 * (`POST /v1/blobs/gc`, admin scope) and what the tenant stores against its quotas (`GET /v1/usage`).
 */
import { Type, type TSchema } from '@sinclair/typebox'
import { problemResponses } from '../src/errors.js'
import { ref } from '../src/schemas/ref.js'
// Named here so that declaration emit can spell the schema symbols of spread TypeBox objects.
import { Hint, Kind, OptionalKind, ReadonlyKind } from '@sinclair/typebox'

const Count = (description: string) => Type.Integer({ minimum: 0, description })

export const GcReport = Type.Object({
  scanned: Count('Blobs the tenant had when the sweep read them'),
  referenced: Count('Of them, referenced by a line of a stored session (saved or not)'),
  keptYoung: Count('Not referenced, but put within the grace period (BLOB_GC_GRACE_MS): kept'),
  deleted: Count('Removed; with `dryRun`, those a collection would remove'),
  bytesFreed: Count('Bytes of the removed blobs'),
}, { $id: 'GcReport', additionalProperties: false })

const Limit = Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], { description: 'The quota; `null` = none' })

export const Usage = Type.Object({
  tenant: Type.String(),
  bytes: Count('Bytes stored: sessions and blobs together, what the byte quota bounds'),
  sessions: Count('Sessions, saved and not saved yet'),
  sessionBytes: Count('Bytes of the sessions\' stored text'),
  blobs: Count('Blobs stored'),
  blobBytes: Count('Bytes of the blobs'),
  quota: Type.Object({ bytes: Limit, sessions: Limit }, { additionalProperties: false }),
  retention: Type.Object({
    days: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], { description: 'Sessions unchanged this long are deleted; `null` = kept forever' }),
    keepLabelled: Type.Boolean({ description: 'Sessions holding a label are kept however old' }),
  }, { additionalProperties: false }),
}, { $id: 'Usage', additionalProperties: false })

/** The named bodies of this file, for `sharedSchemas()`. */
export const hygieneRouteComponents = (): TSchema[] => [GcReport, Usage]

export const CollectBlobs = {
  operationId: 'collectBlobs',
  tags: ['blobs'],
  summary: "Collect the tenant's unreferenced blobs",
  description: 'Mark and sweep: removes every blob of the caller\'s tenant that no stored session references and that was ' +
    'not put within the grace period (BLOB_GC_GRACE_MS), then reports. `dryRun=true` removes nothing and reports what ' +
    'would go. One collection of a tenant runs at a time, across every server on the database: 409 while another runs.',
  querystring: Type.Object({
    dryRun: Type.Optional(Type.Boolean({ description: 'Report only; default false' })),
  }, { additionalProperties: false }),
  response: {
    200: { ...ref(GcReport), description: 'What the collection found and did' },
    ...problemResponses(400, 409, 507),
  },
}

export const GetUsage = {
  operationId: 'getUsage',
  tags: ['usage'],
  summary: 'What the tenant stores, and its quotas',
  description: 'Counted now. Beyond a quota, appends, creates, imports and uploads answer 507 `SS_QUOTA_EXCEEDED` ' +
    '(413 for one body larger than the whole byte quota); reads, exports and deletes always work.',
  response: {
    200: { ...ref(Usage), description: 'The usage' },
  },
}
