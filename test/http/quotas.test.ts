/**
 * Quotas per tenant (the token file's `tenants` object), on memory and, in the postgres project,
 * on PostgreSQL: a tenant at its quota is refused every write that stores more (507, or 413 for
 * one body larger than the whole quota) with `SS_QUOTA_EXCEEDED`, its usage and its limit, and
 * still reads, exports and deletes; another tenant writes on; a delete makes room again.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { createHash, randomBytes } from 'node:crypto'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { App } from '../../src/app.js'
import type { TenantSettingsFile } from '../../src/auth/tenant-settings.js'
import { buildTestApp } from '../helpers/app.js'
import { bearer, tokenFixture, type TokenFixture } from '../helpers/tokens.js'
import { assistant, message, user } from './session-helpers.js'

let fx: TokenFixture
let app: App
beforeEach(async () => { fx = await tokenFixture() })
afterEach(async () => {
  await app?.close()
  fx.cleanup()
})

/** The app over the fixture's token file with `tenants` as its settings. */
async function withSettings (tenants: TenantSettingsFile): Promise<App> {
  const file = JSON.parse(readFileSync(fx.path, 'utf8')) as object
  writeFileSync(fx.path, JSON.stringify({ ...file, tenants }))
  app = await buildTestApp({ tokens: await fx.load(), config: { blobGcGraceMs: 0 } })
  return app
}

const sha = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex')

describe('quotas', () => {
  const as = (secret: string) => ({
    create: async () => await app.inject({ method: 'POST', url: '/v1/sessions', payload: { cwd: '/q' }, headers: bearer(secret) }),
    get: async (url: string) => await app.inject({ method: 'GET', url, headers: bearer(secret) }),
    del: async (url: string) => await app.inject({ method: 'DELETE', url, headers: bearer(secret) }),
    post: async (url: string, payload: object) => await app.inject({ method: 'POST', url, payload, headers: bearer(secret) }),
    upload: async (bytes: Buffer) => await app.inject({
      method: 'PUT', url: `/v1/blobs/sha256/${sha(bytes)}`, payload: bytes, headers: { ...bearer(secret), 'content-type': 'application/octet-stream' },
    }),
  })

  it('at its quota of sessions a tenant is refused new sessions with 507, reads and deletes; another tenant goes on; a delete makes room', async () => {
    await withSettings({ acme: { quota: { sessions: 2 } } })
    const acme = as(fx.secrets.write)
    const ids: string[] = []
    for (let i = 0; i < 2; i++) {
      const res = await acme.create()
      expect(res.statusCode).toBe(201)
      ids.push(res.json().header.id)
    }
    const refused = await acme.create()
    expect(refused.statusCode).toBe(507)
    expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/)
    expect(refused.json()).toMatchObject({ status: 507, code: 'SS_QUOTA_EXCEEDED', quota: { resource: 'sessions', usage: 2, limit: 2 } })
    expect((await acme.post('/v1/sessions/import', {})).statusCode).toBe(507)
    expect((await acme.post(`/v1/sessions/${ids[0]}/fork`, {})).statusCode).toBe(507)
    // Appending to a session it has stores no new session: within the byte quota it goes on.
    expect((await acme.post(`/v1/sessions/${ids[0]}/entries`, message(user('still here')))).statusCode).toBe(201)
    expect((await acme.get('/v1/sessions?includeEmpty=true')).json().sessions).toHaveLength(2)
    expect((await acme.get(`/v1/sessions/${ids[0]}`)).statusCode).toBe(200)
    expect((await acme.get(`/v1/sessions/${ids[0]}/export`)).statusCode).toBe(200)
    expect((await acme.get('/v1/usage')).json()).toMatchObject({ tenant: 'acme', sessions: 2, quota: { sessions: 2 } })
    expect((await as(fx.secrets.globex).create()).statusCode).toBe(201)
    expect((await acme.del(`/v1/sessions/${ids[1]}`)).statusCode).toBe(204)
    expect((await acme.create()).statusCode).toBe(201)
  })

  it('at its quota of bytes a tenant is refused appends and uploads with 507, a body larger than the quota with 413; a delete and a collection make room', async () => {
    await withSettings({ acme: { quota: { bytes: 40_000 } } })
    const acme = as(fx.secrets.write)
    const created = await acme.create()
    const id = created.json().header.id as string
    const image = { type: 'image', data: randomBytes(20_000).toString('base64'), mimeType: 'image/png' }
    const heavy = { entries: [message({ role: 'user', content: [image], timestamp: Date.now() }), message(assistant())] }
    expect((await acme.post(`/v1/sessions/${id}/entries`, heavy)).statusCode).toBe(201)
    const usage = (await acme.get('/v1/usage')).json()
    expect(usage).toMatchObject({ blobs: 1, blobBytes: 20_000, quota: { bytes: 40_000, sessions: null } })
    expect(usage.bytes).toBe(usage.sessionBytes + usage.blobBytes)
    const more = await acme.upload(randomBytes(20_000))
    expect(more.statusCode).toBe(507)
    expect(more.json()).toMatchObject({ code: 'SS_QUOTA_EXCEEDED', quota: { resource: 'bytes', usage: usage.bytes, limit: 40_000 } })
    expect((await acme.post(`/v1/sessions/${id}/entries`, heavy)).statusCode).toBe(507)
    const huge = await acme.upload(randomBytes(50_000))
    expect(huge.statusCode).toBe(413)
    expect(huge.json()).toMatchObject({ status: 413, code: 'SS_QUOTA_EXCEEDED', quota: { resource: 'bytes', limit: 40_000 } })
    expect((await acme.get(`/v1/blobs/sha256/${sha(Buffer.from(image.data, 'base64'))}`)).statusCode).toBe(200)
    expect((await as(fx.secrets.globex).upload(randomBytes(30_000))).statusCode).toBe(201)
    // Deleting the session frees its text; its blob goes with the next collection.
    expect((await acme.del(`/v1/sessions/${id}`)).statusCode).toBe(204)
    const collected = await app.inject({ method: 'POST', url: '/v1/blobs/gc', headers: bearer(fx.secrets.admin) })
    expect(collected.json()).toMatchObject({ deleted: 1, bytesFreed: 20_000 })
    expect((await acme.upload(randomBytes(20_000))).statusCode).toBe(201)
  })

  it('bound the agents\' own writes too: PUT file makes no session past the quota but replaces one, records append within it', async () => {
    await withSettings({ acme: { quota: { sessions: 1 } } })
    const headers = { ...bearer(fx.secrets.write), 'content-type': 'application/x-ndjson' }
    const file = (id: string): string => JSON.stringify({ type: 'session', version: 3, id, timestamp: '2026-03-14T15:04:07.123Z', cwd: '/q' }) + '\n' +
      JSON.stringify({ type: 'message', id: 'a1', parentId: null, timestamp: '2026-03-14T15:04:08.000Z', message: { role: 'user', content: 'hi' } }) + '\n'
    const put = async (id: string) => await app.inject({ method: 'PUT', url: `/v1/sessions/${id}/file`, payload: file(id), headers })
    expect((await put('mine')).statusCode).toBe(201)
    const refused = await put('another')
    expect(refused.statusCode).toBe(507)
    expect(refused.json()).toMatchObject({ code: 'SS_QUOTA_EXCEEDED', quota: { resource: 'sessions', usage: 1, limit: 1 } })
    expect((await put('mine')).statusCode).toBe(200)
    const record = { type: 'message', id: 'a2', parentId: 'a1', timestamp: '2026-03-14T15:04:09.000Z', message: { role: 'user', content: 'more' } }
    expect((await as(fx.secrets.write).post('/v1/sessions/mine/records', { records: [record] })).statusCode).toBe(201)
  })

  it('refuse records past the byte quota', async () => {
    await withSettings({ acme: { quota: { bytes: 2000 } } })
    const acme = as(fx.secrets.write)
    const id = (await acme.create()).json().header.id as string
    const record = (n: number) => ({ type: 'message', id: `r${n}`, parentId: n === 0 ? null : `r${n - 1}`, timestamp: '2026-03-14T15:04:09.000Z', message: { role: 'user', content: 'x'.repeat(900) } })
    expect((await acme.post(`/v1/sessions/${id}/records`, { records: [record(0)] })).statusCode).toBe(201)
    const refused = await acme.post(`/v1/sessions/${id}/records`, { records: [record(1)] })
    expect([refused.statusCode, refused.json().code]).toEqual([507, 'SS_QUOTA_EXCEEDED'])
  })

  it('are off in open mode unless set', async () => {
    app = await buildTestApp()
    expect((await app.inject({ method: 'GET', url: '/v1/usage' })).json()).toMatchObject({ tenant: 'default', quota: { bytes: null, sessions: null } })
  })
})
