/**
 * `POST /v1/sessions/{id}/records`: entries as an agent wrote them, with their own ids. Unique
 * ids (the same record again is a no-op, another record under a taken id a 409), known
 * parents, the leaf on the last record, the stored line as sent, and every append rule.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { App } from '../../src/app.js'
import { buildTestApp } from '../helpers/app.js'
import { problemOf } from '../helpers/problem.js'
import { assistant, createSession, getSession, user, type Json } from './session-helpers.js'

let app: App
beforeEach(async () => { app = await buildTestApp() })
afterEach(async () => { await app.close() })

const IMAGE = Buffer.alloc(1200, 7).toString('base64')

const record = (id: string, parentId: string | null, message: Json, timestamp = '2026-03-14T15:04:07.123Z'): Json =>
  ({ type: 'message', id, parentId, timestamp, message })
const post = (id: string, records: Json[], headers: Record<string, string> = {}) =>
  app.inject({ method: 'POST', url: `/v1/sessions/${id}/records`, payload: { records }, headers })
const exported = async (id: string): Promise<string> => (await app.inject({ method: 'GET', url: `/v1/sessions/${id}/export` })).body

describe('POST /v1/sessions/{id}/records', () => {
  it('stores each record as sent: its id, parent and timestamp, its JSON text the stored line', async () => {
    const s = await createSession(app)
    const id = s.header.id
    const records = [record('a1', null, user('hello')), record('b2', 'a1', assistant('hi')), { type: 'session_info', id: 'c3', parentId: 'b2', timestamp: '2026-03-14T15:04:08.000Z', name: 'T' }]
    const res = await post(id, records)
    expect(res.statusCode, res.body).toBe(201)
    expect(res.json()).toEqual({ appended: 3, existing: 0, leafId: 'c3', total: 3, persisted: true })
    expect(res.headers.etag).toBe((await getSession(app, id)).etag)
    const lines = (await exported(id)).split('\n')
    expect(lines.slice(1, 4)).toEqual(records.map((r) => JSON.stringify(r)))
    const entries = (await app.inject({ method: 'GET', url: `/v1/sessions/${id}/entries` })).json().entries
    expect(entries).toEqual(records)
  })

  it('takes the same records again as a no-op, and moves the leaf to the last one', async () => {
    const s = await createSession(app)
    const id = s.header.id
    const first = [record('a1', null, user()), record('b2', 'a1', assistant()), record('c3', 'a1', user('other branch'))]
    expect((await post(id, first)).statusCode).toBe(201)
    const again = await post(id, first.slice(0, 2))
    expect(again.statusCode, again.body).toBe(200)
    expect(again.json()).toEqual({ appended: 0, existing: 2, leafId: 'b2', total: 3, persisted: true })
    expect((await getSession(app, id)).leafId).toBe('b2')
    const mixed = await post(id, [...first, record('d4', 'c3', assistant('more'))])
    expect(mixed.statusCode).toBe(201)
    expect(mixed.json()).toMatchObject({ appended: 1, existing: 3, leafId: 'd4', total: 4 })
    const text = await exported(id)
    expect(text.split('\n').filter((l) => l.includes('"id":"a1"'))).toHaveLength(1)
    expect(text.trimEnd().split('\n')).toHaveLength(5)
  })

  it('refuses another record under a taken id (409), a duplicate within the batch included, and appends nothing', async () => {
    const s = await createSession(app)
    const id = s.header.id
    await post(id, [record('a1', null, user('one'))])
    const taken = await post(id, [record('b2', 'a1', assistant()), record('a1', null, user('changed'))])
    expect(problemOf(taken)).toEqual({ status: 409, code: 'SS_ENTRY_ID_TAKEN' })
    const twice = await post(id, [record('x', 'a1', user('1')), record('x', 'a1', user('2'))])
    expect(problemOf(twice)).toEqual({ status: 409, code: 'SS_ENTRY_ID_TAKEN' })
    expect((await getSession(app, id)).entryCount).toBe(1)
  })

  it('needs a parent that exists (in the session or earlier in the batch) or null (422)', async () => {
    const s = await createSession(app)
    const id = s.header.id
    expect(problemOf(await post(id, [record('a1', 'nope', user())]))).toEqual({ status: 422, code: 'SS_UNKNOWN_PARENT' })
    expect(problemOf(await post(id, [record('b2', 'a1', user()), record('a1', null, user())]))).toEqual({ status: 422, code: 'SS_UNKNOWN_PARENT' })
    expect((await post(id, [record('a1', null, user()), record('b2', 'a1', user())])).statusCode).toBe(201)
  })

  it('refuses malformed records (400)', async () => {
    const s = await createSession(app)
    const id = s.header.id
    const bad: Json[] = [
      { type: 'message', parentId: null, timestamp: 't', message: user() },
      { type: 'message', id: '', parentId: null, timestamp: 't', message: user() },
      { type: 'session', id: 'x', parentId: null, timestamp: 't' },
      { type: 'message', id: 'x', parentId: null, message: user() },
      { type: 'message', id: 'x', timestamp: 't', message: user() },
      { type: 'message', id: 'x', parentId: null, timestamp: 't', message: 'text' },
    ]
    for (const r of bad) expect(problemOf(await post(id, [r])), JSON.stringify(r)).toMatchObject({ status: 400 })
    expect(problemOf(await post(id, []))).toMatchObject({ status: 400 })
  })

  it('keeps If-Match (412), Idempotency-Key (a replay) and the deferral rule', async () => {
    const s = await createSession(app)
    const id = s.header.id
    const deferred = await post(id, [record('a1', null, user())])
    expect(deferred.json().persisted).toBe(false)
    expect(problemOf(await post(id, [record('b2', 'a1', assistant())], { 'if-match': '"stale"' }))).toEqual({ status: 412, code: 'SS_PRECONDITION_FAILED' })
    const etag = (await getSession(app, id)).etag
    const reply = record('b2', 'a1', assistant())
    const keyed = await post(id, [reply], { 'if-match': etag, 'idempotency-key': 'k1' })
    expect(keyed.statusCode).toBe(201)
    expect(keyed.json()).toMatchObject({ appended: 1, persisted: true })
    const replay = await post(id, [reply], { 'idempotency-key': 'k1' })
    expect(replay.headers['idempotent-replayed'], replay.body).toBe('true')
    expect(replay.json()).toEqual(keyed.json())
    expect(problemOf(await post(id, [reply, record('c3', 'b2', user())], { 'idempotency-key': 'k1' }))).toEqual({ status: 422, code: 'SS_IDEMPOTENCY_KEY_REUSED' })
  })

  it('stores the bytes of inline images, so every ref ?blobs=ref shows resolves, and keeps refs as sent', async () => {
    const s = await createSession(app)
    const id = s.header.id
    const withImage = user('look')
    withImage.content = [{ type: 'text', text: 'look' }, { type: 'image', data: IMAGE, mimeType: 'image/png' }]
    expect((await post(id, [record('a1', null, withImage), record('b2', 'a1', assistant())])).statusCode).toBe(201)
    const refs = (await app.inject({ method: 'GET', url: `/v1/sessions/${id}/entries?blobs=ref` })).json().entries[0].message.content[1].data as string
    expect(refs).toMatch(/^blob:sha256:[0-9a-f]{64}$/)
    const blob = await app.inject({ method: 'GET', url: `/v1/blobs/sha256/${refs.slice(12)}` })
    expect(blob.statusCode).toBe(200)
    expect(blob.rawPayload.equals(Buffer.from(IMAGE, 'base64'))).toBe(true)
    // The agent's file with the image inline, again: the same record.
    const again = await post(id, [record('a1', null, withImage)])
    expect(again.json()).toMatchObject({ appended: 0, existing: 1 })
    // And as a file with refs (an agent with a blob store) it is the same record too.
    const asRef = { ...withImage, content: [{ type: 'text', text: 'look' }, { type: 'image', data: refs, mimeType: 'image/png' }] }
    expect((await post(id, [record('a1', null, asRef)])).json()).toMatchObject({ appended: 0, existing: 1 })
  })
})
