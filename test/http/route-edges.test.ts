/**
 * Edges of routing and JSON bodies: the body `null` is refused on every JSON route (fork
 * included, whose body may only be left out), a method no route takes is 405 even with a body
 * the server cannot parse, and the route words `recent`, `continue` and `import` never fall
 * through to the `{id}` routes.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { App } from '../../src/app.js'
import { buildTestApp } from '../helpers/app.js'
import { persistedSession } from './session-helpers.js'
import { problemOf } from '../helpers/problem.js'

let app: App
beforeEach(async () => { app = await buildTestApp() })
afterEach(async () => { await app.close() })

const JSON_TYPE = { 'content-type': 'application/json' }

describe('the JSON body null', () => {
  it('is 400 on fork as on every other JSON route', async () => {
    const { session } = await persistedSession(app)
    const id = session.header.id
    const routes: Array<['POST' | 'PATCH' | 'PUT', string]> = [
      ['POST', `/v1/sessions/${id}/fork`],
      ['POST', '/v1/sessions'],
      ['POST', '/v1/sessions/continue'],
      ['PATCH', `/v1/sessions/${id}`],
      ['POST', `/v1/sessions/${id}/move`],
      ['POST', `/v1/sessions/${id}/entries`],
      ['PUT', `/v1/sessions/${id}/leaf`],
      ['POST', `/v1/sessions/${id}/branch-summary`],
    ]
    for (const [method, url] of routes) {
      const res = await app.inject({ method, url, headers: JSON_TYPE, payload: 'null' })
      expect(res.statusCode, `${method} ${url}`).toBe(400)
      expect(res.json().code, `${method} ${url}`).toBe('SS_VALIDATION')
    }
    const list = await app.inject({ method: 'GET', url: '/v1/sessions' })
    expect(list.json().sessions).toHaveLength(1) // no fork was made
  })
})

describe('methods no route takes', () => {
  it('QUERY /healthz without a content type is 405 with Allow', async () => {
    for (const headers of [{}, { 'content-type': 'application/json' }, { 'content-type': 'text/x-unknown' }]) {
      const res = await app.inject({ method: 'QUERY' as 'GET', url: '/healthz', headers, payload: '{}' })
      expect(res.statusCode, JSON.stringify(headers)).toBe(405)
      expect(res.headers.allow).toBe('GET, HEAD')
      expect(res.json().code).toBe('SS_METHOD_NOT_ALLOWED')
    }
  })
})

describe('route words are not session ids', () => {
  const cases: Array<[string, string, string[]]> = [
    ['/v1/sessions/continue', 'POST', ['OPTIONS', 'DELETE', 'GET', 'PATCH', 'HEAD', 'PUT']],
    ['/v1/sessions/import', 'POST', ['OPTIONS', 'DELETE', 'GET', 'PATCH', 'HEAD', 'PUT']],
    ['/v1/sessions/recent', 'GET, HEAD', ['OPTIONS', 'DELETE', 'PATCH', 'POST', 'PUT']],
  ]
  for (const [url, allow, methods] of cases) {
    it(`${url} answers other methods 405 with Allow: ${allow}`, async () => {
      for (const method of methods) {
        const res = await app.inject({ method: method as 'GET', url })
        expect(res.statusCode, `${method} ${url}`).toBe(405)
        expect(res.headers.allow, `${method} ${url}`).toBe(allow)
        if (method !== 'HEAD') expect(res.json().code).toBe('SS_METHOD_NOT_ALLOWED')
      }
    })
  }

  it('leaves the {id} routes of real ids alone', async () => {
    const { session } = await persistedSession(app)
    const res = await app.inject({ method: 'OPTIONS', url: `/v1/sessions/${session.header.id}` })
    expect(res.statusCode).toBe(405)
    expect(res.headers.allow).toBe('DELETE, GET, HEAD, PATCH')
    const recentWithQuery = await app.inject({ method: 'DELETE', url: '/v1/sessions/recent?cwd=/x' })
    expect(problemOf(recentWithQuery)).toEqual({ status: 405, code: 'SS_METHOD_NOT_ALLOWED' })
    expect(recentWithQuery.headers.allow).toBe('GET, HEAD')
  })
})
