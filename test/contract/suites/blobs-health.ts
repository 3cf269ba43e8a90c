/**
 * API.md "Blobs" and "Health and docs" through the OpenAPI client, with raw bodies: every
 * route, its success and its errors (507 and 503 through the server's fault switchboard).
 */
import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { READY_PROBE_TTL_MS } from '../../../routes/health.js'
import { raw } from '../contract-client.js'
import { BODY_LIMIT } from '../contract-server.js'
import { ctx, expectHeadProblem, expectProblem } from './context.js'

const OCTETS = raw('application/octet-stream')
const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex')
const PNG = Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), Buffer.from('contract png')])
const hexPath = (hex: string) => ({ params: { path: { hex } } })

/** `GET` or `HEAD` of one blob. */
async function readBlob (method: 'GET' | 'HEAD', hex: string, headers: Record<string, string> = {}) {
  const init = { ...hexPath(hex), headers }
  return method === 'GET' ? await ctx.client.GET('/v1/blobs/sha256/{hex}', init) : await ctx.client.HEAD('/v1/blobs/sha256/{hex}', init)
}

/** Runs `fn` with every blob-store call failing. */
async function withBrokenBlobs (fn: () => Promise<void>): Promise<void> {
  ctx.server.faults.blobs = true
  try {
    await fn()
  } finally {
    ctx.server.faults.blobs = false
  }
}

export function blobsHealthSuite (): void {
  describe('PUT and POST blobs', () => {
    it('PUT stores (201), finds it stored (200), and answers 400, 413, 422 and 507', async () => {
      const bytes = Buffer.from('contract blob put')
      const hex = sha256(bytes)
      const put = async (h: string, body: Buffer) => await ctx.client.PUT('/v1/blobs/sha256/{hex}', { ...hexPath(h), body: body as never, ...OCTETS })
      const created = await put(hex, bytes)
      expect(created.response.status).toBe(201)
      expect(created.data).toEqual({ hash: hex, ref: `blob:sha256:${hex}`, size: bytes.length })
      expect((await put(hex, bytes)).response.status).toBe(200)
      expectProblem(await put(hex.toUpperCase(), bytes), 400, 'SS_INVALID_BLOB_HASH')
      expectProblem(await put(hex, Buffer.from('other bytes')), 422, 'SS_DIGEST_MISMATCH')
      const big = Buffer.alloc(BODY_LIMIT + 1, 1)
      expectProblem(await put(sha256(big), big), 413, 'SS_BODY_TOO_LARGE')
      const fresh = Buffer.from('never stored')
      await withBrokenBlobs(async () => { expectProblem(await put(sha256(fresh), fresh), 507, 'SS_STORAGE_FAILED') })
    })

    it('POST stores and reports the hash (201), and answers 413 and 507', async () => {
      const post = async (body: Buffer) => await ctx.client.POST('/v1/blobs', { body: body as never, ...OCTETS })
      const created = await post(PNG)
      expect(created.data).toEqual({ hash: sha256(PNG), ref: `blob:sha256:${sha256(PNG)}`, size: PNG.length })
      expect(created.response.headers.get('location')).toBe(`/v1/blobs/sha256/${sha256(PNG)}`)
      expectProblem(await post(Buffer.alloc(BODY_LIMIT + 1)), 413, 'SS_BODY_TOO_LARGE')
      await withBrokenBlobs(async () => { expectProblem(await post(Buffer.from('x')), 507, 'SS_STORAGE_FAILED') })
    })
  })

  describe('GET and HEAD blobs', () => {
    it('serve the bytes with a sniffed type (200), 304 for a matching If-None-Match, 400, 404 and 507', async () => {
      await ctx.client.POST('/v1/blobs', { body: PNG as never, ...OCTETS })
      const hex = sha256(PNG)
      const got = await ctx.client.GET('/v1/blobs/sha256/{hex}', { ...hexPath(hex), parseAs: 'arrayBuffer' })
      expect(got.response.headers.get('content-type')).toBe('image/png')
      expect(Buffer.from(got.data as ArrayBuffer).equals(PNG)).toBe(true)
      const head = await ctx.client.HEAD('/v1/blobs/sha256/{hex}', hexPath(hex))
      expect(head.response.headers.get('content-length')).toBe(String(PNG.length))
      for (const method of ['GET', 'HEAD'] as const) {
        const refused = (result: Awaited<ReturnType<typeof readBlob>>, status: number, code: `SS_${string}`): void => {
          if (method === 'GET') expectProblem(result, status, code)
          else expectHeadProblem(result, status)
        }
        expect((await readBlob(method, hex, { 'if-none-match': `"${hex}"` })).response.status).toBe(304)
        refused(await readBlob(method, 'xyz'), 400, 'SS_INVALID_BLOB_HASH')
        refused(await readBlob(method, '0'.repeat(64)), 404, 'SS_BLOB_NOT_FOUND')
        await withBrokenBlobs(async () => { refused(await readBlob(method, hex), 507, 'SS_STORAGE_FAILED') })
      }
    })
  })

  describe('health and docs', () => {
    it('metrics (200, Prometheus text)', async () => {
      const res = await ctx.client.GET('/metrics', { parseAs: 'text' })
      expect(res.response.status).toBe(200)
      expect(String(res.data)).toMatch(/^# HELP ss_http_requests_total /m)
    })

    it('healthz (200), readyz (200, then 503 while storage cannot write)', async () => {
      expect((await ctx.client.GET('/healthz')).data).toEqual({ status: 'ok' })
      expect((await ctx.client.GET('/readyz')).data).toEqual({ status: 'ok' })
      ctx.server.faults.writes.add('.readyz-')
      try {
        // The last probe's result answers for READY_PROBE_TTL_MS.
        await new Promise((resolve) => setTimeout(resolve, READY_PROBE_TTL_MS + 50))
        expectProblem(await ctx.client.GET('/readyz'), 503, 'SS_NOT_READY')
      } finally {
        ctx.server.faults.writes.delete('.readyz-')
      }
    })

    it('serves the OpenAPI 3.1 document and the rendered reference', async () => {
      const doc = await ctx.client.GET('/openapi.json')
      expect(doc.data?.openapi).toMatch(/^3\.1\./)
      const docs = await ctx.client.GET('/docs', { parseAs: 'text' })
      expect(docs.data).toContain('<html')
    })

    it('/ redirects to the dashboard (302, Location /ui/)', async () => {
      const res = await ctx.client.GET('/', { redirect: 'manual', parseAs: 'text' })
      expect(res.response.status).toBe(302)
      expect(res.response.headers.get('location')).toBe('/ui/')
    })
  })
}
