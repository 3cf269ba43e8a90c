/**
 * Schemas of the blob routes (API.md "Blobs"). A 507 is a failure of the blob storage itself.
 */
import { Type, type TSchema } from '@sinclair/typebox'
import { problemResponses } from '../src/errors.js'
import { HEAD_OPERATION_ID, LocationHeader, requiredHeader } from '../src/schemas/responses.js'
import { ref } from '../src/schemas/ref.js'
// Named here so that declaration emit can spell the schema symbols of spread TypeBox objects.
import { Hint, Kind, OptionalKind, ReadonlyKind } from '@sinclair/typebox'

const HEX = '^[0-9a-f]{64}$'

const BlobParams = Type.Object({
  hex: Type.String({ pattern: HEX, description: 'SHA-256 of the bytes: exactly 64 lowercase hex characters' }),
})

export const BlobInfo = Type.Object({
  hash: Type.String({ pattern: HEX }),
  ref: Type.String({ pattern: '^blob:sha256:[0-9a-f]{64}$', description: 'What an image block stores as `data`' }),
  size: Type.Integer({ minimum: 0, description: 'Bytes' }),
}, { $id: 'BlobInfo', additionalProperties: false })

/** The named bodies of this file, for `sharedSchemas()`. */
export const blobRouteComponents = (): TSchema[] => [BlobInfo]

/**
 * Any bytes; no validation beyond the body limit. Documented as `type: string, format: binary`
 * (src/plugins/openapi-transform.ts): a schema `type` here would make the validator refuse the
 * Buffer the blob parser gives.
 */
const RawBody = Type.Unsafe<Buffer>({ description: 'The raw bytes, of any content type', contentMediaType: 'application/octet-stream' })
const BINARY = { contentMediaType: 'application/octet-stream' }

/** The content types a blob is served with (src/blobs/sniff.ts). */
const SERVED_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'application/octet-stream']

const CACHE_HEADERS = {
  ETag: requiredHeader(Type.String({ description: '`"<hex>"`' })),
  'Cache-Control': requiredHeader(Type.String({ description: '`public, max-age=31536000, immutable`' })),
}

export const PutBlob = {
  operationId: 'putBlob',
  tags: ['blobs'],
  summary: 'Store bytes under their SHA-256',
  description: 'Answers 201 when the bytes are new and 200 when they were already stored.',
  consumes: ['application/octet-stream', '*/*'],
  params: BlobParams,
  body: RawBody,
  response: {
    200: { ...ref(BlobInfo), description: 'Already stored' },
    201: { ...ref(BlobInfo), description: 'Stored', headers: { Location: LocationHeader } },
    ...problemResponses(400, 413, 422, 507),
  },
}

export const PostBlob = {
  operationId: 'postBlob',
  tags: ['blobs'],
  summary: 'Store bytes and learn their hash',
  description: 'Stores the bytes under their SHA-256 and answers where; storing the same bytes again is harmless.',
  consumes: ['application/octet-stream', '*/*'],
  body: RawBody,
  response: {
    201: { ...ref(BlobInfo), description: 'Stored (or already stored)', headers: { Location: LocationHeader } },
    ...problemResponses(413, 507),
  },
}

export const GetBlob = {
  operationId: 'getBlob',
  [HEAD_OPERATION_ID]: 'hasBlob',
  tags: ['blobs'],
  summary: 'The bytes of a blob',
  description: 'Content-Type is sniffed from the bytes. `If-None-Match: "<hex>"` answers 304.',
  params: BlobParams,
  response: {
    200: {
      description: 'The bytes',
      headers: CACHE_HEADERS,
      content: Object.fromEntries(SERVED_TYPES.map((type) => [type, { schema: BINARY }])),
    },
    304: { description: 'Not Modified', type: 'null', headers: CACHE_HEADERS },
    ...problemResponses(400, 404, 429, 507),
  },
}
