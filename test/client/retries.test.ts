/**
 * Retries through a proxy that drops connections or answers 503: idempotent calls are retried
 * and succeed, an append is retried under one Idempotency-Key and lands exactly once, and a
 * POST without key support is sent once.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createClient, SessionStoreError, type SessionStoreClient } from '../../src/client/index.js'
import { FaultProxy, type SeenRequest } from './fault-proxy.js'
import { listenTestServer, user, type TestServer } from './helpers.js'

let server: TestServer
let proxy: FaultProxy
let client: SessionStoreClient
let direct: SessionStoreClient
let id: string

beforeEach(async () => {
  server = await listenTestServer()
  proxy = await FaultProxy.start(server.baseUrl)
  client = createClient({ baseUrl: proxy.baseUrl, retries: 3, retryDelayMs: 5 })
  direct = createClient({ baseUrl: server.baseUrl })
  id = (await direct.createSession({ cwd: '/work/r' })).header.id
})
afterEach(async () => {
  await client.close()
  await direct.close()
  await proxy.close()
  await server.close()
})

const to = (method: string, suffix: string) => (req: SeenRequest): boolean =>
  req.method === method && (req.url.split('?')[0] ?? '').endsWith(suffix)

async function failure (promise: Promise<unknown>): Promise<unknown> {
  return await promise.then(() => { throw new Error('expected a failure') }, (e: unknown) => e)
}

describe('idempotent calls', () => {
  it('retries a GET after a dropped connection', async () => {
    proxy.inject(to('GET', `/sessions/${id}`), 'drop')
    expect((await client.getSession(id)).header.id).toBe(id)
    expect(proxy.requests('GET', `/v1/sessions/${id}`)).toHaveLength(2)
  })

  it('retries a GET after 503 and after 502', async () => {
    proxy.inject(to('GET', `/sessions/${id}`), 503)
    proxy.inject(to('GET', `/sessions/${id}`), 502)
    expect((await client.getSession(id)).header.id).toBe(id)
    expect(proxy.requests('GET', `/v1/sessions/${id}`)).toHaveLength(3)
  })

  it('gives up after the configured retries with the last answer', async () => {
    proxy.inject(to('GET', `/sessions/${id}`), 503, 10)
    const err = await failure(client.getSession(id))
    expect(err).toBeInstanceOf(SessionStoreError)
    expect(err).toMatchObject({ status: 503, code: 'SS_INJECTED' })
    expect(proxy.requests('GET', `/v1/sessions/${id}`)).toHaveLength(4)
  })

  it('does not retry with retries: 0', async () => {
    const once = createClient({ baseUrl: proxy.baseUrl, retries: 0 })
    proxy.inject(to('GET', `/sessions/${id}`), 503)
    expect(await failure(once.getSession(id))).toMatchObject({ status: 503 })
    expect(proxy.requests('GET', `/v1/sessions/${id}`)).toHaveLength(1)
    await once.close()
  })

  it('retries a PUT whose answer was lost; the leaf moves once', async () => {
    const { entries: [entry] } = await direct.append(id, { type: 'message', message: user() })
    proxy.inject(to('PUT', '/leaf'), 'drop-after')
    expect((await client.setLeaf(id, entry!.id)).leafId).toBe(entry!.id)
    expect(proxy.requests('PUT', `/v1/sessions/${id}/leaf`)).toHaveLength(2)
  })

  it('does not retry a 4xx', async () => {
    const err = await failure(client.getEntry(id, 'nope'))
    expect(err).toMatchObject({ status: 404 })
    expect(proxy.requests('GET', `/v1/sessions/${id}/entries/nope`)).toHaveLength(1)
  })
})

describe('appends', () => {
  it('retries an append whose answer was lost with the same Idempotency-Key; it lands once', async () => {
    proxy.inject(to('POST', '/entries'), 'drop-after')
    const result = await client.append(id, { type: 'message', message: user('once') })
    expect(result.firstSeq).toBe(1)
    const attempts = proxy.requests('POST', `/v1/sessions/${id}/entries`)
    expect(attempts).toHaveLength(2)
    const keys = attempts.map((r) => r.headers['idempotency-key'])
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/)
    expect(keys[1]).toBe(keys[0])
    const page = await direct.getEntries(id)
    expect(page.total).toBe(1)
    expect(page.entries[0]!.id).toBe(result.entries[0]!.id)
  })

  it('retries an append after a dropped connection and after 503; it lands once', async () => {
    proxy.inject(to('POST', '/entries'), 'drop')
    proxy.inject(to('POST', '/entries'), 503)
    await client.append(id, [{ type: 'custom', customType: 'a' }, { type: 'custom', customType: 'b' }])
    expect(proxy.requests('POST', `/v1/sessions/${id}/entries`)).toHaveLength(3)
    expect((await direct.getEntries(id)).total).toBe(2)
  })

  it('uses a new key per logical append, and the caller’s key when given', async () => {
    await client.append(id, { type: 'custom', customType: 'a' })
    await client.append(id, { type: 'custom', customType: 'a' }, { idempotencyKey: 'mine' })
    const keys = proxy.requests('POST', `/v1/sessions/${id}/entries`).map((r) => r.headers['idempotency-key'])
    expect(keys[0]).not.toBe(keys[1])
    expect(keys[1]).toBe('mine')
    expect((await direct.getEntries(id)).total).toBe(2)
  })
})

describe('other POSTs and PATCH', () => {
  it('does not retry a create after 503', async () => {
    proxy.inject(to('POST', '/v1/sessions'), 503)
    expect(await failure(client.createSession({ cwd: '/work/x' }))).toMatchObject({ status: 503 })
    expect(proxy.requests('POST', '/v1/sessions')).toHaveLength(1)
  })

  it('does not retry a branch summary whose answer was lost: the error surfaces', async () => {
    proxy.inject(to('POST', '/branch-summary'), 'drop-after')
    const err = await failure(client.branchSummary(id, { fromId: null, summary: 's' }))
    expect(err).not.toBeInstanceOf(SessionStoreError)
    expect(proxy.requests('POST', `/v1/sessions/${id}/branch-summary`)).toHaveLength(1)
    expect((await direct.getEntries(id)).total).toBe(1)
  })

  it('does not retry a rename after a dropped connection', async () => {
    proxy.inject(to('PATCH', `/sessions/${id}`), 'drop')
    await failure(client.renameSession(id, 'T'))
    expect(proxy.requests('PATCH', `/v1/sessions/${id}`)).toHaveLength(1)
  })
})
