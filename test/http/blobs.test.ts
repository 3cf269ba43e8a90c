import { createHash } from 'node:crypto'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { App } from '../../src/app.js'
import { MemoryBlobStore } from '../../src/blobs/index.js'
import { buildTestApp } from '../helpers/app.js'
import { problemOf } from '../helpers/problem.js'

const sha = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex')

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13])
const JPEG = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 16, 0x4a, 0x46])
const GIF = Buffer.from('GIF89a\x01\x00\x01\x00', 'latin1')
const WEBP = Buffer.concat([Buffer.from('RIFF'), Buffer.from([26, 0, 0, 0]), Buffer.from('WEBPVP8 ')])
const TEXT = Buffer.from('hello, blob')

describe('blob routes', () => {
  let app: App
  let blobs: MemoryBlobStore

  beforeEach(async () => {
    blobs = new MemoryBlobStore()
    app = await buildTestApp({ blobs })
  })
  afterEach(async () => { await app.close() })

  const put = (hex: string, payload: Buffer, contentType = 'application/octet-stream') =>
    app.inject({ method: 'PUT', url: `/v1/blobs/sha256/${hex}`, payload, headers: { 'content-type': contentType } })

  describe('PUT /v1/blobs/sha256/:hex', () => {
    it('answers 201 with {hash, ref, size} and a Location for new bytes', async () => {
      const res = await put(sha(PNG), PNG)
      expect(res.statusCode).toBe(201)
      expect(res.json()).toEqual({ hash: sha(PNG), ref: `blob:sha256:${sha(PNG)}`, size: PNG.length })
      expect(res.headers.location).toBe(`/v1/blobs/sha256/${sha(PNG)}`)
      expect(await blobs.get(sha(PNG))).toEqual(PNG)
    })

    it('answers 200 when the bytes are already stored', async () => {
      await put(sha(PNG), PNG)
      const res = await put(sha(PNG), PNG)
      expect(res.statusCode).toBe(200)
      expect(res.json()).toEqual({ hash: sha(PNG), ref: `blob:sha256:${sha(PNG)}`, size: PNG.length })
    })

    it('stores the raw bytes whatever the content type, JSON included', async () => {
      const json = Buffer.from('{"not":"parsed"}')
      const res = await put(sha(json), json, 'application/json')
      expect(res.statusCode).toBe(201)
      expect(await blobs.get(sha(json))).toEqual(json)
    })

    it('answers 422 SS_DIGEST_MISMATCH when the body does not hash to the URL, and stores nothing', async () => {
      const res = await put(sha(PNG), TEXT)
      expect(res.statusCode).toBe(422)
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/)
      expect(res.json()).toMatchObject({ status: 422, code: 'SS_DIGEST_MISMATCH' })
      expect(await blobs.has(sha(TEXT))).toBe(false)
    })

    it.each([
      ['upper-case hex', sha(PNG).toUpperCase()],
      ['63 characters', sha(PNG).slice(1)],
      ['65 characters', sha(PNG) + '0'],
      ['a non-hex character', 'g' + sha(PNG).slice(1)],
      ['an encoded traversal', '..%2F..%2Fetc%2Fpasswd'],
    ])('answers 400 SS_INVALID_BLOB_HASH for %s without touching the store', async (_name, hex) => {
      const spies = [vi.spyOn(blobs, 'put'), vi.spyOn(blobs, 'get'), vi.spyOn(blobs, 'has')]
      const res = await put(hex, PNG)
      expect(res.statusCode).toBe(400)
      expect(res.json()).toMatchObject({ status: 400, code: 'SS_INVALID_BLOB_HASH' })
      for (const spy of spies) expect(spy).not.toHaveBeenCalled()
    })
  })

  describe('POST /v1/blobs', () => {
    it('answers 201 {hash, ref, size} with a Location', async () => {
      const res = await app.inject({ method: 'POST', url: '/v1/blobs', payload: TEXT, headers: { 'content-type': 'text/plain' } })
      expect(res.statusCode).toBe(201)
      expect(res.json()).toEqual({ hash: sha(TEXT), ref: `blob:sha256:${sha(TEXT)}`, size: TEXT.length })
      expect(res.headers.location).toBe(`/v1/blobs/sha256/${sha(TEXT)}`)
      expect(await blobs.get(sha(TEXT))).toEqual(TEXT)
    })

    it('answers 201 again for bytes already stored', async () => {
      await app.inject({ method: 'POST', url: '/v1/blobs', payload: TEXT })
      const res = await app.inject({ method: 'POST', url: '/v1/blobs', payload: TEXT })
      expect(res.statusCode).toBe(201)
      expect(res.json()).toMatchObject({ hash: sha(TEXT) })
    })
  })

  describe('GET and HEAD /v1/blobs/sha256/:hex', () => {
    it.each([
      ['image/png', PNG],
      ['image/jpeg', JPEG],
      ['image/gif', GIF],
      ['image/webp', WEBP],
      ['application/octet-stream', TEXT],
    ])('serves %s bytes with caching headers', async (type, bytes) => {
      await put(sha(bytes), bytes)
      const res = await app.inject({ method: 'GET', url: `/v1/blobs/sha256/${sha(bytes)}` })
      expect(res.statusCode).toBe(200)
      expect(res.headers['content-type']).toBe(type)
      expect(res.headers.etag).toBe(`"${sha(bytes)}"`)
      expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable')
      expect(res.headers['content-length']).toBe(String(bytes.length))
      expect(res.rawPayload).toEqual(bytes)
    })

    it('answers HEAD with the same headers and no body', async () => {
      await put(sha(PNG), PNG)
      const res = await app.inject({ method: 'HEAD', url: `/v1/blobs/sha256/${sha(PNG)}` })
      expect(res.statusCode).toBe(200)
      expect(res.headers['content-type']).toBe('image/png')
      expect(res.headers['content-length']).toBe(String(PNG.length))
      expect(res.headers.etag).toBe(`"${sha(PNG)}"`)
      expect(res.rawPayload.length).toBe(0)
    })

    it.each([
      ['its ETag', (hex: string) => `"${hex}"`],
      ['a list holding its weak ETag', (hex: string) => `"${'0'.repeat(64)}", W/"${hex}"`],
      ['*', () => '*'],
    ])('answers 304 to If-None-Match with %s', async (_name, header) => {
      await put(sha(PNG), PNG)
      const res = await app.inject({
        method: 'GET', url: `/v1/blobs/sha256/${sha(PNG)}`, headers: { 'if-none-match': header(sha(PNG)) },
      })
      expect(res.statusCode).toBe(304)
      expect(res.headers.etag).toBe(`"${sha(PNG)}"`)
      expect(res.rawPayload.length).toBe(0)
    })

    it('answers 200 to an If-None-Match that names other bytes', async () => {
      await put(sha(PNG), PNG)
      const res = await app.inject({
        method: 'GET', url: `/v1/blobs/sha256/${sha(PNG)}`, headers: { 'if-none-match': `"${sha(TEXT)}"` },
      })
      expect(res.statusCode).toBe(200)
      expect(res.rawPayload).toEqual(PNG)
    })

    it.each(['GET', 'HEAD'] as const)('answers %s 404 SS_BLOB_NOT_FOUND for an unknown hash', async (method) => {
      const res = await app.inject({ method, url: `/v1/blobs/sha256/${sha(TEXT)}` })
      expect(res.statusCode).toBe(404)
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/)
      expect(res.headers['cache-control']).toBe('no-store')
      expect(res.headers.etag).toBeUndefined()
      if (method === 'GET') expect(res.json()).toMatchObject({ status: 404, code: 'SS_BLOB_NOT_FOUND' })
    })

    it('answers 404 to If-None-Match for an unknown hash rather than 304', async () => {
      const res = await app.inject({
        method: 'GET', url: `/v1/blobs/sha256/${sha(TEXT)}`, headers: { 'if-none-match': `"${sha(TEXT)}"` },
      })
      expect(problemOf(res)).toEqual({ status: 404, code: 'SS_BLOB_NOT_FOUND' })
    })

    it('answers 400 for a traversal attempt without reading the store', async () => {
      const get = vi.spyOn(blobs, 'get')
      const has = vi.spyOn(blobs, 'has')
      const res = await app.inject({ method: 'GET', url: '/v1/blobs/sha256/..%2F..%2F..%2Fetc%2Fpasswd' })
      expect(res.statusCode).toBe(400)
      expect(res.json()).toMatchObject({ code: 'SS_INVALID_BLOB_HASH' })
      expect(get).not.toHaveBeenCalled()
      expect(has).not.toHaveBeenCalled()
    })
  })
})
