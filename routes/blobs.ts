/**
 * Content-addressed blobs (API.md "Blobs", SPEC.md §9.4). Bodies are raw bytes of any content
 * type: this scope replaces every body parser with one that hands the handler a Buffer. The
 * hash in the URL is checked before anything else, so a bad one never reaches the store.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { isBlobHash, sha256Hex } from '../src/blobs/hash.js'
import { openBlob } from '../src/blobs/reader.js'
import { sniffContentType } from '../src/blobs/sniff.js'
import type { BlobPutResult } from '../src/blobs/types.js'
import { BlobNotFound, DigestMismatch, InvalidBlobHash } from '../src/errors.js'
import { GetBlob, PostBlob, PutBlob } from './blobs.schema.js'

const CACHE_CONTROL = 'public, max-age=31536000, immutable'

const blobPath = (hash: string): string => `/v1/blobs/sha256/${hash}`
const etagOf = (hash: string): string => `"${hash}"`
const bytesOf = (body: Buffer | undefined): Buffer => body ?? Buffer.alloc(0)
const infoOf = (stored: BlobPutResult, size: number) => ({ hash: stored.hash, ref: stored.ref, size })

/** True when `If-None-Match` lists the blob's ETag (weak or strong) or is `*`. */
export function matchesIfNoneMatch (header: string | undefined, hash: string): boolean {
  if (header === undefined) return false
  const etag = etagOf(hash)
  return header.split(',').some((tag) => {
    const t = tag.trim()
    return t === '*' || t === etag || t === `W/${etag}`
  })
}

/** Rejects a malformed `:hex` before body parsing, validation or any storage access. */
async function checkHex (req: FastifyRequest): Promise<void> {
  const { hex } = req.params as { hex?: string }
  if (hex !== undefined && !isBlobHash(hex)) throw new InvalidBlobHash()
}

const blobs: FastifyPluginAsyncTypebox = async (app) => {
  app.addHook('onRequest', checkHex)
  app.removeAllContentTypeParsers()
  app.addContentTypeParser(['application/octet-stream', '*'], { parseAs: 'buffer' },
    (_req, body, done) => { done(null, body) })

  app.put('/sha256/:hex', { schema: PutBlob, config: { quota: 'data' } }, async (req, reply) => {
    const bytes = bytesOf(req.body)
    const actual = sha256Hex(bytes)
    if (actual !== req.params.hex) throw new DigestMismatch(actual, req.params.hex)
    const stored = await req.tenant.blobs.put(bytes)
    if (stored.created) reply.code(201).header('location', blobPath(stored.hash))
    return infoOf(stored, bytes.length)
  })

  app.post('', { schema: PostBlob, config: { quota: 'data' } }, async (req, reply) => {
    const bytes = bytesOf(req.body)
    const stored = await req.tenant.blobs.put(bytes)
    return reply.code(201).header('location', blobPath(stored.hash)).send(infoOf(stored, bytes.length))
  })

  app.route({
    method: ['GET', 'HEAD'],
    url: '/sha256/:hex',
    schema: GetBlob,
    handler: async (req, reply) => {
      const { hex } = req.params
      const cache = { etag: etagOf(hex), 'cache-control': CACHE_CONTROL }
      if (matchesIfNoneMatch(req.headers['if-none-match'], hex)) {
        if (!await req.tenant.blobs.has(hex)) throw new BlobNotFound(hex)
        return reply.code(304).headers(cache).send()
      }
      // Streamed from the store as the client reads (never the whole blob in memory).
      const blob = await openBlob(req.tenant.blobs, hex)
      if (blob === null) throw new BlobNotFound(hex)
      reply.headers({ ...cache, 'content-type': sniffContentType(blob.head), 'x-content-type-options': 'nosniff' })
      // HEAD: the headers of GET, with the length of the body it would carry.
      if (req.method === 'HEAD') {
        await blob.close()
        return reply.header('content-length', blob.size).send()
      }
      return await reply.sendDownload({ size: blob.size, body: blob.stream(), close: blob.close })
    },
  })
}

export default blobs
