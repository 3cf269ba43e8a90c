/**
 * API.md "Conventions" and "Status codes" at the edges of routing: a known path with another
 * method (405 + Allow), an unknown path (404), ids that cannot exist (404, not 400), and JSON
 * requests that carry no body.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { App } from '../../src/app.js'
import { buildTestApp } from '../helpers/app.js'
import { createSession, persistedSession } from '../http/session-helpers.js'
import { problemOf } from '../helpers/problem.js'

let app: App
beforeEach(async () => { app = await buildTestApp() })
afterEach(async () => { await app.close() })

const JSON_TYPE = { 'content-type': 'application/json' }

describe('methods and paths', () => {
  it('answers a known path asked with another method 405 problem+json with Allow', async () => {
    const cases: Array<['PUT' | 'DELETE' | 'OPTIONS' | 'POST', string, string]> = [
      ['PUT', '/v1/sessions', 'GET, HEAD, POST'],
      ['DELETE', '/v1/blobs', 'POST'],
      ['POST', '/v1/sessions/s1/tree', 'GET, HEAD'],
      ['OPTIONS', '/healthz', 'GET, HEAD'],
    ]
    for (const [method, url, allow] of cases) {
      const res = await app.inject({ method, url })
      expect(problemOf(res), `${method} ${url}`).toEqual({ status: 405, code: 'SS_METHOD_NOT_ALLOWED' })
      expect(res.headers.allow, `${method} ${url}`).toBe(allow)
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/)
      expect(res.json()).toEqual({
        type: 'about:blank',
        title: 'Method Not Allowed',
        status: 405,
        code: 'SS_METHOD_NOT_ALLOWED',
        detail: `Method ${method} is not allowed for ${url}`,
      })
    }
  })

  it('still answers an unknown path 404 SS_NOT_FOUND', async () => {
    const res = await app.inject({ method: 'DELETE', url: '/v2/anything' })
    expect(res.statusCode).toBe(404)
    expect(res.headers.allow).toBeUndefined()
    expect(res.json()).toMatchObject({ status: 404, code: 'SS_NOT_FOUND' })
  })

  it('answers a session or entry id that cannot exist 404, whatever its length', async () => {
    const long = 'a'.repeat(600)
    const session = await app.inject({ method: 'GET', url: `/v1/sessions/${long}` })
    expect(session.statusCode).toBe(404)
    expect(session.json().code).toBe('SS_SESSION_NOT_FOUND')
    const s = await createSession(app)
    const entry = await app.inject({ method: 'GET', url: `/v1/sessions/${s.header.id}/entries/${long}` })
    expect(entry.statusCode).toBe(404)
    expect(entry.json().code).toBe('SS_ENTRY_NOT_FOUND')
  })
})

describe('JSON requests without a body', () => {
  it('DELETE with Content-Type application/json and no body deletes (204)', async () => {
    const s = await createSession(app)
    const res = await app.inject({ method: 'DELETE', url: `/v1/sessions/${s.header.id}`, headers: JSON_TYPE })
    expect(res.statusCode).toBe(204)
  })

  it('fork with Content-Type application/json and no body copies every entry (201)', async () => {
    const { session } = await persistedSession(app)
    const res = await app.inject({ method: 'POST', url: `/v1/sessions/${session.header.id}/fork`, headers: JSON_TYPE })
    expect(res.statusCode).toBe(201)
    expect(res.json().entryCount).toBe(2)
  })

  it('a route that needs a body still answers 400', async () => {
    const res = await app.inject({ method: 'POST', url: '/v1/sessions', headers: JSON_TYPE })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ status: 400, code: 'SS_VALIDATION' })
  })
})
