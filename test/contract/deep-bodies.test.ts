/**
 * API.md "Status codes": a body nested deeper than MAX_JSON_DEPTH is invalid input (400), for
 * JSON and JSONL alike, and changes nothing; one just within the limit is stored and read back.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { App } from '../../src/app.js'
import { MAX_JSON_DEPTH, nestedDeeperThan } from '../../src/plugins/json-depth.js'
import { buildTestApp } from '../helpers/app.js'
import { append, assistant, createSession, message } from '../http/session-helpers.js'
import { problemOf } from '../helpers/problem.js'

/** A custom entry whose whole body nests `depth` levels (the entry object is level 1). */
const nested = (depth: number): string =>
  `{"type":"custom","customType":"deep","data":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}`

describe('nestedDeeperThan', () => {
  it('counts objects and arrays, not brackets inside strings', () => {
    expect(nestedDeeperThan('{"a":[{"b":1}]}', 3)).toBe(false)
    expect(nestedDeeperThan('{"a":[{"b":1}]}', 2)).toBe(true)
    expect(nestedDeeperThan('{"a":"[[[[\\"[[["}', 1)).toBe(false)
  })

  it('settles bodies with no more brackets than the limit without walking them, at the same answer', () => {
    expect(nestedDeeperThan('{"a":1}', 1)).toBe(false)
    expect(nestedDeeperThan('[[1]]', 2)).toBe(false)
    expect(nestedDeeperThan('[[1]]', 1)).toBe(true)
    expect(nestedDeeperThan('{"a":{}}\n{"b":{}}', 2, true)).toBe(false)
  })

  it('measures each line on its own in JSONL', () => {
    const torn = '{"a":[[[\n{"b":[1]}\n'
    expect(nestedDeeperThan(torn, 3, true)).toBe(true)
    expect(nestedDeeperThan('{"a":[[\n{"b":[[1]]}\n', 3, true)).toBe(false)
    expect(nestedDeeperThan('{"a":[[\n{"b":[[1]]}\n', 3, false)).toBe(true)
  })
})

describe('deeply nested bodies over HTTP', () => {
  let app: App
  beforeEach(async () => { app = await buildTestApp() })
  afterEach(async () => { await app.close() })

  const post = async (id: string, payload: string) => await app.inject({
    method: 'POST', url: `/v1/sessions/${id}/entries`, headers: { 'content-type': 'application/json' }, payload,
  })

  it('refuses an append nested one level too deep with 400 and appends nothing', async () => {
    const s = await createSession(app)
    await append(app, s.header.id, message(assistant()))
    const res = await post(s.header.id, nested(MAX_JSON_DEPTH + 1))
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ code: 'SS_INVALID_JSON' })
    const entries = await app.inject({ method: 'GET', url: `/v1/sessions/${s.header.id}/entries` })
    expect(entries.json().total).toBe(1)
  })

  it('stores and reads back an entry nested exactly to the limit', async () => {
    const s = await createSession(app)
    await append(app, s.header.id, message(assistant()))
    expect((await post(s.header.id, nested(MAX_JSON_DEPTH))).statusCode).toBe(201)
    const exported = await app.inject({ method: 'GET', url: `/v1/sessions/${s.header.id}/export` })
    expect(exported.statusCode).toBe(200)
    expect(exported.body.trim().split('\n')).toHaveLength(3)
  })

  it('refuses an import with a line nested too deep with 400', async () => {
    const header = JSON.stringify({ type: 'session', version: 3, id: 'deep-import', timestamp: '2026-01-01T00:00:00.000Z', cwd: '/d' })
    const line = nested(MAX_JSON_DEPTH + 1).replace('"type":"custom"', '"type":"custom","id":"x1","parentId":null')
    const res = await app.inject({
      method: 'POST', url: '/v1/sessions/import', headers: { 'content-type': 'application/x-ndjson' }, payload: `${header}\n${line}\n`,
    })
    expect(problemOf(res)).toEqual({ status: 400, code: 'SS_INVALID_JSON' })
    expect(problemOf(await app.inject({ method: 'GET', url: '/v1/sessions/deep-import' }))).toEqual({ status: 404, code: 'SS_SESSION_NOT_FOUND' })
  })
})
