/**
 * API.md "Conventions": every answer about one session carries its `ETag`, every mutation
 * changes it, and every mutating route honours `If-Match` (412 when stale).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { App } from '../../src/app.js'
import { buildTestApp } from '../helpers/app.js'
import { assistant, getSession, message, persistedSession, user, type Json } from '../http/session-helpers.js'
import { problemOf } from '../helpers/problem.js'

let app: App
beforeEach(async () => { app = await buildTestApp() })
afterEach(async () => { await app.close() })

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'
const send = (method: Method, url: string, payload?: Json, headers: Record<string, string> = {}) =>
  app.inject({ method, url, ...(payload === undefined ? {} : { payload }), headers })

describe('ETag on every answer about a session', () => {
  it('is sent by every read, and equals the etag of GET /v1/sessions/{id}', async () => {
    const { session, ids } = await persistedSession(app)
    const id = session.header.id
    const { etag } = await getSession(app, id)
    const reads = [
      `/v1/sessions/${id}`, `/v1/sessions/${id}/entries`, `/v1/sessions/${id}/entries/${ids[0]}`,
      `/v1/sessions/${id}/tree`, `/v1/sessions/${id}/branch`, `/v1/sessions/${id}/context`, `/v1/sessions/${id}/export`,
    ]
    for (const url of reads) {
      const res = await send('GET', url)
      expect(res.statusCode, url).toBe(200)
      expect(res.headers.etag, url).toBe(etag)
    }
  })

  it('is sent by every mutation and is the etag the session has afterwards', async () => {
    const { session, ids } = await persistedSession(app)
    const id = session.header.id
    const mutations: Array<[Method, string, Json | undefined]> = [
      ['PATCH', `/v1/sessions/${id}`, { title: 'T' }],
      ['POST', `/v1/sessions/${id}/move`, { cwd: '/elsewhere' }],
      ['POST', `/v1/sessions/${id}/entries`, message(user('more'))],
      ['PUT', `/v1/sessions/${id}/leaf`, { leafId: ids[0] as string }],
      ['POST', `/v1/sessions/${id}/branch-summary`, { fromId: ids[0] as string, summary: 'tried' }],
    ]
    const seen = new Set([(await getSession(app, id)).etag])
    for (const [method, url, payload] of mutations) {
      const res = await send(method, url, payload)
      expect(res.statusCode, url).toBeLessThan(300)
      const after = (await getSession(app, id)).etag
      expect(res.headers.etag, `${method} ${url}`).toBe(after)
      expect(seen.has(after), `${method} ${url} changes the etag`).toBe(false)
      seen.add(after)
    }
  })

  it('replays the first ETag with an idempotent append', async () => {
    const { session } = await persistedSession(app)
    const url = `/v1/sessions/${session.header.id}/entries`
    const headers = { 'idempotency-key': 'k-1' }
    const body = message(user('once'))
    const first = await send('POST', url, body, headers)
    await send('POST', url, message(assistant('in between')))
    const again = await send('POST', url, body, headers)
    expect(again.headers['idempotent-replayed']).toBe('true')
    expect(again.headers.etag).toBe(first.headers.etag)
    expect(again.json()).toEqual(first.json())
  })
})

describe('If-Match on every mutating route', () => {
  it('answers 412 for a stale etag and changes nothing, then succeeds with the current one', async () => {
    const { session, ids } = await persistedSession(app)
    const id = session.header.id
    // [method, url, body, status with the current etag (API.md)]
    const routes: Array<[Method, string, Json | undefined, number]> = [
      ['PATCH', `/v1/sessions/${id}`, { title: 'T' }, 200],
      ['POST', `/v1/sessions/${id}/move`, { cwd: '/moved' }, 200],
      ['POST', `/v1/sessions/${id}/fork`, {}, 201],
      ['POST', `/v1/sessions/${id}/entries`, message(user('x')), 201],
      ['PUT', `/v1/sessions/${id}/leaf`, { leafId: ids[0] as string }, 200],
      ['POST', `/v1/sessions/${id}/branch-summary`, { fromId: null, summary: 's' }, 201],
      ['DELETE', `/v1/sessions/${id}`, undefined, 204],
    ]
    /** Every session the server holds, empty ones included: a refused fork must add none. */
    const everySession = async (): Promise<unknown> => (await send('GET', '/v1/sessions?includeEmpty=true&limit=1000')).json()
    for (const [method, url, payload, status] of routes) {
      const before = await getSession(app, id)
      const listed = await everySession()
      const stale = await send(method, url, payload, { 'if-match': '"stale"' })
      expect(stale.statusCode, `${method} ${url}`).toBe(412)
      expect(stale.json()).toMatchObject({ status: 412, code: 'SS_PRECONDITION_FAILED' })
      expect(await getSession(app, id)).toEqual(before)
      expect(await everySession(), `${method} ${url}: sessions after the refusal`).toEqual(listed)
      const ok = await send(method, url, payload, { 'if-match': before.etag })
      expect(ok.statusCode, `${method} ${url}`).toBe(status)
    }
    expect(problemOf(await send('GET', `/v1/sessions/${id}`))).toEqual({ status: 404, code: 'SS_SESSION_NOT_FOUND' })
  })
})
