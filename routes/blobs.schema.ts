/**
 * Schemas of the blob routes (API.md "Blobs"). A 507 is a failure of the blob storage itself.
 */
import { Type } from '@sinclair/typebox'
import { problemResponses } from '../src/errors.js'
import { LocationHeader, requiredHeader } from '../src/schemas/responses.js'
// Named here so that declaration emit can spell the schema symbols of spread TypeBox objects.
import { Hint, Kind, OptionalKind, ReadonlyKind } from '@sinclair/typebox'

const HEX = '^[0-9a-f]{64}$'

const BlobParams = Type.Object({
  hex: Type.String({ pattern: HEX, description: 'SHA-256 of the bytes: exactly 64 lowercase hex characters' }),
})

const BlobInfo = Type.Object({
  hash: Type.String({ pattern: HEX }),
  ref: Type.String({ pattern: '^blob:sha256:[0-9a-f]{64}$', description: 'What an image block stores as `data`' }),
  size: Type.Integer({ minimum: 0, description: 'Bytes' }),
}, { additionalProperties: false })

/** Any bytes; no validation beyond the body limit. */
const RawBody = Type.Unsafe<Buffer>({ description: 'The raw bytes, of any content type' })
const BINARY = { contentMediaType: 'application/octet-stream' }

/** The content types a blob is served with (src/blobs/sniff.ts). */
const SERVED_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'application/octet-stream']

const CACHE_HEADERS = {
  ETag: requiredHeader(Type.String({ description: '`"<hex>"`' })),
  'Cache-Control': requiredHeader(Type.String({ description: '`public, max-age=31536000, immutable`' })),
}

export const PutBlob = {
  tags: ['blobs'],
  summary: 'Store bytes under their SHA-256',
  description: 'Answers 201 when the bytes are new and 200 when they were already stored.',
  consumes: ['application/octet-stream', '*/*'],
  params: BlobParams,
  body: RawBody,
  response: {
    200: { ...BlobInfo, description: 'Already stored' },
    201: { ...BlobInfo, description: 'Stored', headers: { Location: LocationHeader } },
    ...problemResponses(400, 413, 422, 507),
  },
}

export const PostBlob = {
  tags: ['blobs'],
  summary: 'Store bytes and learn their hash',
  consumes: ['application/octet-stream', '*/*'],
  body: RawBody,
  response: {
    201: { ...BlobInfo, description: 'Stored (or already stored)', headers: { Location: LocationHeader } },
    ...problemResponses(413, 507),
  },
}

export const GetBlob = {
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
