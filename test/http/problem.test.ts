import { Writable } from 'node:stream'
import { Type } from '@sinclair/typebox'
import { pino } from 'pino'
import { afterEach, describe, expect, it } from 'vitest'
import type { App } from '../../src/app.js'
import { SessionNotFound, StorageFailed } from '../../src/errors.js'
import { buildTestApp } from '../helpers/app.js'

const SECRET = 'disk layout /srv/secret/sessions/abc.jsonl'

/** Log lines written by the app, parsed. */
function captureLogs (): { lines: Array<Record<string, unknown>>, stream: Writable } {
  const lines: Array<Record<string, unknown>> = []
  const stream = new Writable({
    write (chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line !== '') lines.push(JSON.parse(line))
      done()
    },
  })
  return { lines, stream }
}

/** The test app plus throwaway routes that fail in known ways. */
async function appWithProbes (options: Parameters<typeof buildTestApp>[0] = {}): Promise<App> {
  const app = await buildTestApp(options)
  const Echo = Type.Object({
    n: Type.Integer(),
    leafId: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  }, { additionalProperties: false })
  app.post('/probe/echo', {
    schema: { body: Echo, querystring: Type.Object({ limit: Type.Optional(Type.Integer({ maximum: 10 })) }) },
  }, async (req) => ({ body: req.body, query: req.query }))
  app.post('/probe/text', { config: { textBody: true } }, async (req) => ({ length: String(req.body).length }))
  app.get('/probe/crash', async () => { throw new Error(SECRET) })
  app.get('/probe/enospc', async () => {
    throw Object.assign(new Error(`ENOSPC: no space left on device, write '${SECRET}'`), { code: 'ENOSPC' })
  })
  app.get('/probe/storage-failed', async () => {
    throw new StorageFailed('s1', { cause: Object.assign(new Error(SECRET), { code: 'EIO' }) })
  })
  app.get('/probe/missing-session', async () => { throw new SessionNotFound('s1') })
  return app
}

const PROBLEM_KEYS = ['code', 'detail', 'status', 'title', 'type']

describe('problem+json errors', () => {
  let app: App
  afterEach(async () => { await app.close() })

  it('answers an unknown route 404 SS_NOT_FOUND', async () => {
    app = await appWithProbes()
    const res = await app.inject({ method: 'GET', url: '/v1/nowhere' })
    expect(res.statusCode).toBe(404)
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/)
    expect(res.json()).toEqual({
      type: 'about:blank', title: 'Not Found', status: 404, code: 'SS_NOT_FOUND', detail: 'Route GET /v1/nowhere not found',
    })
  })

  it('answers a malformed URL 400 SS_BAD_REQUEST', async () => {
    app = await appWithProbes()
    const res = await app.inject({ method: 'GET', url: '/v1/blobs/sha256/%E0%A4%A' })
    expect(res.statusCode).toBe(400)
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/)
    expect(res.json()).toMatchObject({ status: 400, code: 'SS_BAD_REQUEST' })
  })

  it('answers an overlong path parameter 414 SS_URI_TOO_LONG', async () => {
    app = await appWithProbes()
    const res = await app.inject({ method: 'GET', url: `/v1/blobs/sha256/${'a'.repeat(2000)}` })
    expect(res.statusCode).toBe(414)
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/)
    expect(res.json()).toMatchObject({ status: 414, title: 'URI Too Long', code: 'SS_URI_TOO_LONG' })
  })

  it('answers invalid JSON 400 SS_INVALID_JSON', async () => {
    app = await appWithProbes()
    const res = await app.inject({
      method: 'POST', url: '/probe/echo', payload: '{"n": 1,', headers: { 'content-type': 'application/json' },
    })
    expect(res.statusCode).toBe(400)
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/)
    expect(res.json()).toMatchObject({ type: 'about:blank', title: 'Bad Request', status: 400, code: 'SS_INVALID_JSON' })
  })

  it('reads an empty JSON body as no body: 400 SS_VALIDATION where the route needs one', async () => {
    app = await appWithProbes()
    const res = await app.inject({ method: 'POST', url: '/probe/echo', payload: '', headers: { 'content-type': 'application/json' } })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ status: 400, code: 'SS_VALIDATION', detail: 'body must be object' })
  })

  it('answers a body over BODY_LIMIT 413 SS_BODY_TOO_LARGE', async () => {
    app = await appWithProbes({ config: { bodyLimit: 64 } })
    const res = await app.inject({ method: 'POST', url: '/probe/echo', payload: { n: 1, leafId: 'x'.repeat(100) } })
    expect(res.statusCode).toBe(413)
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/)
    expect(res.json()).toMatchObject({ status: 413, title: 'Payload Too Large', code: 'SS_BODY_TOO_LARGE' })
  })

  it('answers blob bodies over BODY_LIMIT 413 too', async () => {
    app = await appWithProbes({ config: { bodyLimit: 64 } })
    const res = await app.inject({ method: 'POST', url: '/v1/blobs', payload: Buffer.alloc(65) })
    expect(res.statusCode).toBe(413)
    expect(res.json()).toMatchObject({ code: 'SS_BODY_TOO_LARGE' })
  })

  it.each(['application/xml', 'multipart/form-data; boundary=x', 'text/plain', 'application/x-ndjson'])(
    'answers %s on a JSON route 415 SS_UNSUPPORTED_MEDIA_TYPE', async (contentType) => {
      app = await appWithProbes()
      const res = await app.inject({ method: 'POST', url: '/probe/echo', payload: '{"n":1}', headers: { 'content-type': contentType } })
      expect(res.statusCode).toBe(415)
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/)
      expect(res.json()).toMatchObject({ status: 415, title: 'Unsupported Media Type', code: 'SS_UNSUPPORTED_MEDIA_TYPE' })
    })

  it.each(['application/x-ndjson', 'application/jsonl', 'text/plain'])(
    'hands a %s body as a string to a route that takes text', async (contentType) => {
      app = await appWithProbes()
      const res = await app.inject({ method: 'POST', url: '/probe/text', payload: '{"a":1}\n{"b":2}\n', headers: { 'content-type': contentType } })
      expect(res.statusCode).toBe(200)
      expect(res.json()).toEqual({ length: 16 })
    })

  it('answers a schema violation 400 SS_VALIDATION with the message as detail', async () => {
    app = await appWithProbes()
    const res = await app.inject({ method: 'POST', url: '/probe/echo', payload: { n: 1, extra: true } })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toEqual({
      type: 'about:blank',
      title: 'Bad Request',
      status: 400,
      code: 'SS_VALIDATION',
      detail: 'body must NOT have additional properties',
    })
  })

  it('never coerces body values: null stays null and a numeric string is rejected', async () => {
    app = await appWithProbes()
    const ok = await app.inject({ method: 'POST', url: '/probe/echo', payload: { n: 1, leafId: null } })
    expect(ok.statusCode).toBe(200)
    expect(ok.json().body).toEqual({ n: 1, leafId: null })
    const bad = await app.inject({ method: 'POST', url: '/probe/echo', payload: { n: '1' } })
    expect(bad.statusCode).toBe(400)
    expect(bad.json()).toMatchObject({ code: 'SS_VALIDATION', detail: 'body/n must be integer' })
  })

  it('converts declared numeric query parameters and rejects the ones that do not convert', async () => {
    app = await appWithProbes()
    const ok = await app.inject({ method: 'POST', url: '/probe/echo?limit=7', payload: { n: 1 } })
    expect(ok.json().query).toEqual({ limit: 7 })
    for (const limit of ['seven', '11']) {
      const bad = await app.inject({ method: 'POST', url: `/probe/echo?limit=${limit}`, payload: { n: 1 } })
      expect(bad.statusCode).toBe(400)
      expect(bad.json()).toMatchObject({ code: 'SS_VALIDATION' })
    }
  })

  it('answers SS_ errors with their own status, code and message', async () => {
    app = await appWithProbes()
    const res = await app.inject({ method: 'GET', url: '/probe/missing-session' })
    expect(res.statusCode).toBe(404)
    expect(res.json()).toEqual({
      type: 'about:blank', title: 'Not Found', status: 404, code: 'SS_SESSION_NOT_FOUND', detail: "Session 's1' not found",
    })
  })

  it('answers an unexpected error 500 SS_INTERNAL without its message, and logs it with err', async () => {
    const logs = captureLogs()
    app = await appWithProbes({ logger: pino({ level: 'error' }, logs.stream) })
    const res = await app.inject({ method: 'GET', url: '/probe/crash' })
    expect(res.statusCode).toBe(500)
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/)
    expect(res.json()).toEqual({ type: 'about:blank', title: 'Internal Server Error', status: 500, code: 'SS_INTERNAL' })
    expect(res.body).not.toContain('secret')
    const logged = logs.lines.find((line) => line.msg === 'request failed')
    expect(logged).toMatchObject({ level: 50, err: { message: SECRET } })
  })

  it('answers a raw disk error (ENOSPC) 507 SS_STORAGE_FAILED without its message', async () => {
    app = await appWithProbes()
    const res = await app.inject({ method: 'GET', url: '/probe/enospc' })
    expect(res.statusCode).toBe(507)
    expect(res.json()).toMatchObject({ status: 507, title: 'Insufficient Storage', code: 'SS_STORAGE_FAILED' })
    expect(res.body).not.toContain('secret')
    expect(res.body).not.toContain('ENOSPC')
  })

  it('answers StorageFailed 507 with a fixed detail that leaks neither the cause nor the id', async () => {
    const logs = captureLogs()
    app = await appWithProbes({ logger: pino({ level: 'error' }, logs.stream) })
    const res = await app.inject({ method: 'GET', url: '/probe/storage-failed' })
    expect(res.statusCode).toBe(507)
    expect(Object.keys(res.json()).sort()).toEqual(PROBLEM_KEYS)
    expect(res.json()).toMatchObject({ code: 'SS_STORAGE_FAILED', detail: "The session's storage failed; other sessions keep working" })
    expect(res.body).not.toContain('secret')
    expect(logs.lines.some((line) => line.level === 50)).toBe(true)
  })
})
