/**
 * Tenants are apart: each has its own storage root (the default tenant DATA_DIR itself, every
 * other DATA_DIR/tenants/<tenant>/), registry and blob store. Another tenant's session, entry,
 * stream or blob is 404, never 403, and listings and the global event stream show only the
 * caller's tenant.
 */
import { storeStack } from '../helpers/stack.js'
import { createHash } from 'node:crypto'
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Agent, request } from 'undici'
import { afterEach, beforeEach, describe, expect, it, onTestFinished } from 'vitest'
import type { App } from '../../src/app.js'
import { Tenants, tenantRoot } from '../../src/auth/tenants.js'
import { FileBlobStore, MemoryBlobStore } from '../../src/blobs/index.js'
import { FileSessionStorage } from '../../src/storage/index.js'
import { buildTestApp } from '../helpers/app.js'
import { bearer, tokenFixture, type TokenFixture } from '../helpers/tokens.js'
import { assistant, message, user } from '../http/session-helpers.js'
import { problemOf } from '../helpers/problem.js'

let fx: TokenFixture
let dataDir: string
let app: App
let base: string
let agent: Agent

const acme = (): Record<string, string> => bearer(fx.secrets.admin)
const globex = (): Record<string, string> => bearer(fx.secrets.globex)

async function call (headers: Record<string, string>, method: string, url: string, payload?: unknown) {
  return await app.inject({ method: method as 'GET', url, headers, ...(payload === undefined ? {} : { payload: payload as object }) })
}

/** Reads a live stream until `until` shows up or `ms` pass (then the text so far). */
async function readStream (url: string, headers: Record<string, string>, until: string, ms: number): Promise<{ status: number, text: string }> {
  const controller = new AbortController()
  const res = await request(`${base}${url}`, { headers, signal: controller.signal, dispatcher: agent })
  let text = ''
  const timer = setTimeout(() => controller.abort(), ms)
  try {
    for await (const chunk of res.body) {
      text += String(chunk)
      if (text.includes(until)) break
    }
  } catch {
    // aborted after `ms`
  } finally {
    clearTimeout(timer)
    res.body.destroy()
  }
  return { status: res.statusCode, text }
}

beforeEach(async () => {
  fx = await tokenFixture()
  dataDir = mkdtempSync(join(tmpdir(), 'ss-tenants-'))
  const storage = new FileSessionStorage()
  const blobs = new FileBlobStore(join(dataDir, 'blobs'))
  app = await buildTestApp({ tokens: await fx.load(), storage, blobs, config: { dataDir, storage: 'disk' } })
  base = await app.listen({ port: 0, host: '127.0.0.1' })
  agent = new Agent()
})
afterEach(async () => {
  await agent.destroy() // its idle sockets would keep the server from closing
  await app.close()
  rmSync(dataDir, { recursive: true, force: true })
  fx.cleanup()
})

describe('storage roots', () => {
  it('keeps the default tenant in DATA_DIR and others under DATA_DIR/tenants/<tenant>/', async () => {
    expect(tenantRoot('/d', 'default')).toBe('/d')
    expect(tenantRoot('/d', 'acme')).toBe('/d/tenants/acme')
    const created = await call(acme(), 'POST', '/v1/sessions', { cwd: '/a' })
    const id = created.json().header.id as string
    await call(acme(), 'POST', `/v1/sessions/${id}/entries`, { entries: [message(user('u')), message(assistant('a'))] })
    await call({ ...acme(), 'content-type': 'application/octet-stream' }, 'POST', '/v1/blobs', Buffer.from('acme bytes'))
    expect(readdirSync(join(dataDir, 'tenants'))).toEqual(['acme']) // globex never wrote anything
    expect(readdirSync(join(dataDir, 'tenants', 'acme', 'sessions'))).toHaveLength(1)
    const hash = createHash('sha256').update('acme bytes').digest('hex')
    expect(existsSync(join(dataDir, 'tenants', 'acme', 'blobs', hash))).toBe(true)
    expect(existsSync(join(dataDir, 'sessions'))).toBe(false)
  })
})

describe('another tenant\'s things are not found (404, never 403)', () => {
  it('sessions and entries by id, on every kind of route', async () => {
    const id = (await call(acme(), 'POST', '/v1/sessions', { cwd: '/a', id: 'acme-secret' })).json().header.id as string
    const entry = (await call(acme(), 'POST', `/v1/sessions/${id}/entries`, message(user('u')))).json().entries[0].id as string
    const attempts: Array<[string, string, unknown?]> = [
      ['GET', `/v1/sessions/${id}`], ['PATCH', `/v1/sessions/${id}`, { title: 'x' }], ['DELETE', `/v1/sessions/${id}`],
      ['POST', `/v1/sessions/${id}/move`, { cwd: '/x' }], ['POST', `/v1/sessions/${id}/fork`, {}], ['GET', `/v1/sessions/${id}/export`],
      ['GET', `/v1/sessions/${id}/entries`], ['GET', `/v1/sessions/${id}/entries/${entry}`], ['POST', `/v1/sessions/${id}/entries`, message(user('x'))],
      ['PUT', `/v1/sessions/${id}/leaf`, { leafId: null }], ['POST', `/v1/sessions/${id}/branch-summary`, { fromId: null, summary: 's' }],
      ['GET', `/v1/sessions/${id}/tree`], ['GET', `/v1/sessions/${id}/branch`], ['GET', `/v1/sessions/${id}/context`],
      ['GET', `/v1/sessions/${id}/events`],
    ]
    for (const [method, url, payload] of attempts) {
      const res = await call(globex(), method, url, payload)
      expect([method, url, res.statusCode, res.json().code]).toEqual([method, url, 404, 'SS_SESSION_NOT_FOUND'])
    }
    // Nothing changed for its owner, and the same id is free in the other tenant.
    expect((await call(acme(), 'GET', `/v1/sessions/${id}`)).json().entryCount).toBe(1)
    expect((await call(globex(), 'POST', '/v1/sessions', { cwd: '/g', id: 'acme-secret' })).statusCode).toBe(201)
  })

  it('blobs by hash (GET, HEAD, and If-None-Match)', async () => {
    const bytes = Buffer.from('only for acme')
    const hash = createHash('sha256').update(bytes).digest('hex')
    const put = await call({ ...acme(), 'content-type': 'application/octet-stream' }, 'PUT', `/v1/blobs/sha256/${hash}`, bytes)
    expect(put.statusCode).toBe(201)
    expect((await call(acme(), 'GET', `/v1/blobs/sha256/${hash}`)).statusCode).toBe(200)
    expect(problemOf(await call(globex(), 'GET', `/v1/blobs/sha256/${hash}`))).toEqual({ status: 404, code: 'SS_BLOB_NOT_FOUND' })
    expect((await call(globex(), 'HEAD', `/v1/blobs/sha256/${hash}`)).statusCode).toBe(404)
    expect((await call({ ...globex(), 'if-none-match': `"${hash}"` }, 'GET', `/v1/blobs/sha256/${hash}`)).statusCode).toBe(404)
    // Storing the same bytes in the other tenant is a new blob there.
    expect((await call({ ...globex(), 'content-type': 'application/octet-stream' }, 'PUT', `/v1/blobs/sha256/${hash}`, bytes)).statusCode).toBe(201)
  })

  it('the session stream of another tenant\'s session is 404 over a real socket, by header or access_token', async () => {
    await call(acme(), 'POST', '/v1/sessions', { cwd: '/a', id: 'streamed' })
    const own = await readStream('/v1/sessions/streamed/events', acme(), 'retry:', 5000)
    expect(own.status).toBe(200)
    const byHeader = await request(`${base}/v1/sessions/streamed/events`, { headers: globex(), dispatcher: agent })
    expect(byHeader.statusCode).toBe(404)
    await byHeader.body.dump()
    const byQuery = await request(`${base}/v1/sessions/streamed/events?access_token=${fx.secrets.globex}`, { dispatcher: agent })
    expect(byQuery.statusCode).toBe(404)
    await byQuery.body.dump()
  })
})

describe('listings and the global stream show the caller\'s tenant only', () => {
  it('GET /v1/sessions and /recent', async () => {
    const a = (await call(acme(), 'POST', '/v1/sessions', { cwd: '/same' })).json().header.id as string
    await call(acme(), 'POST', `/v1/sessions/${a}/entries`, { entries: [message(user('acme says')), message(assistant('ok'))] })
    const g = (await call(globex(), 'POST', '/v1/sessions', { cwd: '/same' })).json().header.id as string
    await call(globex(), 'POST', `/v1/sessions/${g}/entries`, { entries: [message(user('globex says')), message(assistant('ok'))] })
    const ids = async (headers: Record<string, string>, url: string) =>
      (await call(headers, 'GET', url)).json().sessions.map((s: { id: string }) => s.id) as string[]
    expect(await ids(acme(), '/v1/sessions')).toEqual([a])
    expect(await ids(globex(), '/v1/sessions')).toEqual([g])
    expect(await ids(acme(), '/v1/sessions/recent?cwd=%2Fsame')).toEqual([a])
    expect(await ids(globex(), '/v1/sessions/recent?cwd=%2Fsame')).toEqual([g])
  })

  it('GET /v1/events carries only the token\'s tenant\'s events', async () => {
    const controller = new AbortController()
    const res = await request(`${base}/v1/events`, { headers: globex(), signal: controller.signal, dispatcher: agent })
    expect(res.statusCode).toBe(200)
    let text = ''
    const reading = (async () => {
      try {
        for await (const chunk of res.body) text += String(chunk)
      } catch {}
    })()
    await call(acme(), 'POST', '/v1/sessions', { cwd: '/a', id: 'acme-event' })
    await call(globex(), 'POST', '/v1/sessions', { cwd: '/g', id: 'globex-event' })
    const deadline = Date.now() + 10_000
    while (!text.includes('globex-event') && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
    controller.abort()
    await reading
    expect(text).toContain('"id":"globex-event"')
    expect(text).not.toContain('acme-event')
  })
})

describe('Tenants', () => {
  it('creates registries lazily, reports readiness of all, and closes the ones it created', async () => {
    const blobs = new MemoryBlobStore()
    const { store, registry, close } = storeStack({ dataDir: '/t', blobs })
    onTestFinished(close)
    const tenants = new Tenants({ dataDir: '/t', store, blobStores: () => new MemoryBlobStore(), defaultTenant: { registry, blobs } })
    expect(tenants.names).toEqual(['default'])
    expect(tenants.get('default').registry).toBe(registry)
    const acmeTenant = tenants.get('acme')
    expect(tenants.get('acme')).toBe(acmeTenant)
    expect(acmeTenant.blobs).not.toBe(blobs)
    expect(tenants.names).toEqual(['default', 'acme'])
    expect(() => tenants.get('../escape')).toThrow(expect.objectContaining({ code: 'SS_INVALID_ARGUMENT' }))
    await acmeTenant.registry.create({ cwd: '/x', id: 'in-acme' })
    await expect(registry.get('in-acme')).rejects.toMatchObject({ code: 'SS_SESSION_NOT_FOUND' })
    expect(tenants.isReady()).toBe(true)
    await tenants.close()
    expect(await acmeTenant.registry.isReady()).toBe(false) // shut down and closed
    expect(await registry.isReady()).toBe(false) // shut down; its owner closes it
    expect(() => tenants.get('globex')).toThrow(expect.objectContaining({ code: 'SS_NOT_READY' }))
    await registry.close()
  })
})
