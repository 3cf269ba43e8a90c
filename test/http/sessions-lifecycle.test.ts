/**
 * API.md "Sessions" through `app.inject`: rename, move, fork, import, export, delete, and 507
 * for a session whose storage failed.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { App } from '../../src/app.js'
import { MemoryBlobStore } from '../../src/blobs/index.js'
import { type SessionView } from '../../src/registry/session-registry.js'
import { encodeCwd } from '../../src/session/cwd.js'
import { MemorySessionStorage } from '../../src/storage/index.js'
import { buildTestApp, testConfig } from '../helpers/app.js'
import { append, assistant, createSession, getSession, message, persistedSession, user } from './session-helpers.js'
import { problemOf } from '../helpers/problem.js'

const DATA = testConfig().dataDir
const FIXTURES = join(import.meta.dirname, '..', 'fixtures')

let app: App
let storage: MemorySessionStorage

beforeEach(async () => {
  storage = new MemorySessionStorage()
  app = await buildTestApp({ storage })
})
afterEach(async () => { await app.close() })

describe('PATCH /v1/sessions/{id}', () => {
  it('sets the title and changes the etag', async () => {
    const { session } = await persistedSession(app)
    const before = await getSession(app, session.header.id)
    const res = await app.inject({ method: 'PATCH', url: `/v1/sessions/${session.header.id}`, payload: { title: 'New' }, headers: { 'if-match': before.etag } })
    expect(res.statusCode).toBe(200)
    expect(res.json().header.title).toBe('New')
    expect(res.json().etag).not.toBe(before.etag)
    const file = storage.listFilesSync(join(DATA, 'sessions', encodeCwd('/work/p')), '*.jsonl')[0] as string
    expect(JSON.parse((await storage.readText(file)).split('\n')[0] as string).title).toBe('New')
  })

  it('answers 412 for a stale If-Match, 404 for an unknown session, 400 without a title', async () => {
    const { session } = await persistedSession(app)
    const url = `/v1/sessions/${session.header.id}`
    const stale = await app.inject({ method: 'PATCH', url, payload: { title: 'x' }, headers: { 'if-match': session.etag } })
    expect(stale.statusCode).toBe(412)
    expect(problemOf(stale).code).toBe('SS_PRECONDITION_FAILED')
    expect(problemOf(await app.inject({ method: 'PATCH', url: '/v1/sessions/nope', payload: { title: 'x' } }))).toEqual({ status: 404, code: 'SS_SESSION_NOT_FOUND' })
    expect(problemOf(await app.inject({ method: 'PATCH', url, payload: {} }))).toEqual({ status: 400, code: 'SS_VALIDATION' })
    expect((await getSession(app, session.header.id)).header.title).toBeUndefined()
  })
})

describe('POST /v1/sessions/{id}/move', () => {
  it("moves the file to the new cwd's directory and updates the header", async () => {
    const { session } = await persistedSession(app, '/old')
    const res = await app.inject({ method: 'POST', url: `/v1/sessions/${session.header.id}/move`, payload: { cwd: '/new' } })
    expect(res.statusCode).toBe(200)
    expect(res.json().header.cwd).toBe('/new')
    expect(storage.listFilesSync(join(DATA, 'sessions', encodeCwd('/old')), '*.jsonl')).toEqual([])
    expect(storage.listFilesSync(join(DATA, 'sessions', encodeCwd('/new')), '*.jsonl')).toHaveLength(1)
    const listed = await app.inject({ method: 'GET', url: '/v1/sessions?cwd=/new' })
    expect(listed.json().sessions[0].id).toBe(session.header.id)
  })

  it('answers 409 when the destination file exists, 412 when stale, 404, 400', async () => {
    const { session } = await persistedSession(app, '/old')
    const [file] = storage.listFilesSync(join(DATA, 'sessions', encodeCwd('/old')), '*.jsonl')
    storage.writeTextSync(join(DATA, 'sessions', encodeCwd('/dest'), (file as string).split('/').pop() as string), 'occupied')
    const url = `/v1/sessions/${session.header.id}/move`
    const conflict = await app.inject({ method: 'POST', url, payload: { cwd: '/dest' } })
    expect(conflict.statusCode).toBe(409)
    expect(problemOf(conflict).code).toBe('SS_MOVE_DESTINATION_EXISTS')
    expect(problemOf(await app.inject({ method: 'POST', url, payload: { cwd: '/x' }, headers: { 'if-match': '"stale"' } }))).toEqual({ status: 412, code: 'SS_PRECONDITION_FAILED' })
    expect(problemOf(await app.inject({ method: 'POST', url: '/v1/sessions/nope/move', payload: { cwd: '/x' } }))).toEqual({ status: 404, code: 'SS_SESSION_NOT_FOUND' })
    expect(problemOf(await app.inject({ method: 'POST', url, payload: { cwd: '' } }))).toEqual({ status: 400, code: 'SS_VALIDATION' })
    expect((await getSession(app, session.header.id)).header.cwd).toBe('/old')
  })
})

describe('POST /v1/sessions/{id}/fork', () => {
  it('copies every entry to a new session (201) whose parentSession is the old id', async () => {
    const { session, ids } = await persistedSession(app)
    const res = await app.inject({ method: 'POST', url: `/v1/sessions/${session.header.id}/fork` })
    expect(res.statusCode).toBe(201)
    const fork = res.json<SessionView>()
    expect(fork.header.id).not.toBe(session.header.id)
    expect(fork.header.parentSession).toBe(session.header.id)
    expect(fork).toMatchObject({ entryCount: 2, persisted: true, leafId: ids[1] })
    expect(res.headers.location).toBe(`/v1/sessions/${fork.header.id}`)
    const entries = await app.inject({ method: 'GET', url: `/v1/sessions/${fork.header.id}/entries` })
    expect(entries.json().entries.map((e: { id: string }) => e.id)).toEqual(ids)
    expect((await getSession(app, session.header.id)).entryCount).toBe(2)
  })

  it('with leafId keeps only the path root→leafId', async () => {
    const { session, ids } = await persistedSession(app)
    await append(app, session.header.id, { parentId: ids[0], ...message(user('other branch')) })
    const res = await app.inject({ method: 'POST', url: `/v1/sessions/${session.header.id}/fork`, payload: { leafId: ids[1] } })
    expect(res.statusCode).toBe(201)
    const entries = await app.inject({ method: 'GET', url: `/v1/sessions/${res.json().header.id}/entries` })
    expect(entries.json().entries.map((e: { id: string }) => e.id)).toEqual(ids)
  })

  it('forks a deferred source into a written copy while the source stays deferred', async () => {
    const s = await createSession(app)
    await append(app, s.header.id, message(user('only a user message')))
    const res = await app.inject({ method: 'POST', url: `/v1/sessions/${s.header.id}/fork`, payload: {} })
    expect(res.statusCode).toBe(201)
    expect(res.json()).toMatchObject({ entryCount: 1, persisted: true, header: { parentSession: s.header.id } })
    expect((await getSession(app, s.header.id)).persisted).toBe(false)
  })

  it('answers 404 for an unknown leafId or session, 412 when stale', async () => {
    const { session } = await persistedSession(app)
    const url = `/v1/sessions/${session.header.id}/fork`
    const unknownLeaf = await app.inject({ method: 'POST', url, payload: { leafId: 'nope' } })
    expect(unknownLeaf.statusCode).toBe(404)
    expect(problemOf(unknownLeaf).code).toBe('SS_ENTRY_NOT_FOUND')
    expect(problemOf(await app.inject({ method: 'POST', url: '/v1/sessions/nope/fork' }))).toEqual({ status: 404, code: 'SS_SESSION_NOT_FOUND' })
    expect(problemOf(await app.inject({ method: 'POST', url, headers: { 'if-match': '"stale"' } }))).toEqual({ status: 412, code: 'SS_PRECONDITION_FAILED' })
    expect(problemOf(await app.inject({ method: 'POST', url, payload: { leafId: 5 } }))).toEqual({ status: 400, code: 'SS_VALIDATION' })
  })
})

describe('POST /v1/sessions/import', () => {
  const jsonl = (records: unknown[]): string => records.map((r) => JSON.stringify(r)).join('\n') + '\n'
  const v3 = (id: string) => jsonl([
    { type: 'session', version: 3, id, timestamp: '2026-03-14T15:04:07.123Z', cwd: '/imp', title: 'Imported' },
    { type: 'message', id: 'a1', parentId: null, timestamp: '2026-03-14T15:04:08.000Z', message: user('q') },
    { type: 'message', id: 'a2', parentId: 'a1', timestamp: '2026-03-14T15:04:09.000Z', message: assistant('a') },
  ])
  const importReq = (payload: string, query = '', type = 'application/x-ndjson') =>
    app.inject({ method: 'POST', url: `/v1/sessions/import${query}`, payload, headers: { 'content-type': type } })

  it("keeps the file's id and entries (201)", async () => {
    const res = await importReq(v3('imported-1'))
    expect(res.statusCode).toBe(201)
    expect(res.json()).toMatchObject({ header: { id: 'imported-1', title: 'Imported', cwd: '/imp' }, entryCount: 2, persisted: true, leafId: 'a2' })
    expect(res.headers.location).toBe('/v1/sessions/imported-1')
    const exported = await app.inject({ method: 'GET', url: '/v1/sessions/imported-1/export' })
    expect(exported.body.trim().split('\n').map((l) => JSON.parse(l).id)).toEqual(['imported-1', 'a1', 'a2'])
  })

  it('answers 409 for an existing id unless newId=true', async () => {
    await importReq(v3('dup'))
    const again = await importReq(v3('dup'), '', 'text/plain')
    expect(problemOf(again)).toEqual({ status: 409, code: 'SS_SESSION_EXISTS' })
    const copy = await importReq(v3('dup'), '?newId=true')
    expect(copy.statusCode).toBe(201)
    expect(copy.json().header.id).not.toBe('dup')
    expect(copy.json().header.parentSession).toBe('dup')
    expect(copy.json().entryCount).toBe(2)
  })

  it('migrates a v1 file', async () => {
    const text = readFileSync(join(FIXTURES, 'pi-v1-before-compaction.jsonl'), 'utf8')
    const res = await importReq(text, '', 'application/jsonl')
    expect(res.statusCode).toBe(201)
    expect(res.json().header.version).toBe(3)
    const context = await app.inject({ method: 'GET', url: `/v1/sessions/${res.json().header.id}/context` })
    expect(context.json().messages).toHaveLength(446)
  })

  it('takes the file sent as application/json, the type many clients send, as JSONL text', async () => {
    const file = v3('imported-json')
    const res = await importReq(file, '', 'application/json; charset=utf-8')
    expect(res.statusCode).toBe(201)
    expect(res.json()).toMatchObject({ header: { id: 'imported-json' }, entryCount: 2, leafId: 'a2' })
    const exported = await app.inject({ method: 'GET', url: '/v1/sessions/imported-json/export' })
    expect(exported.body).toBe(file)
    const headerOnly = JSON.stringify({ type: 'session', version: 3, id: 'imported-one-line', timestamp: '2026-03-14T15:04:07.123Z', cwd: '/imp' })
    const one = await importReq(headerOnly, '', 'application/json')
    expect(one.statusCode).toBe(201)
    expect(one.json()).toMatchObject({ header: { id: 'imported-one-line' }, entryCount: 0 })
    expect(problemOf(await importReq('not json at all\n', '', 'application/json'))).toEqual({ status: 400, code: 'SS_INVALID_ARGUMENT' })
  })

  it('answers 400 for an invalid file, 422 for a version too new, 415 for another type, 413 over the body limit', async () => {
    expect(problemOf(await importReq('not json at all\n'))).toEqual({ status: 400, code: 'SS_INVALID_ARGUMENT' })
    expect(problemOf(await importReq(''))).toEqual({ status: 400, code: 'SS_INVALID_ARGUMENT' })
    expect(problemOf(await importReq(jsonl([{ type: 'message', id: 'x' }])))).toEqual({ status: 400, code: 'SS_INVALID_ARGUMENT' })
    const tooNew = await importReq(jsonl([{ type: 'session', version: 4, id: 'future', timestamp: '2026-03-14T15:04:07.123Z', cwd: '/x' }]))
    expect(tooNew.statusCode).toBe(422)
    expect(problemOf(tooNew).code).toBe('SS_SESSION_VERSION_TOO_NEW')
    expect(problemOf(await importReq(v3('octets'), '', 'application/octet-stream'))).toEqual({ status: 415, code: 'SS_UNSUPPORTED_MEDIA_TYPE' })
    await app.close()
    app = await buildTestApp({ config: { bodyLimit: 100 } })
    expect(problemOf(await importReq(v3('big')))).toEqual({ status: 413, code: 'SS_BODY_TOO_LARGE' })
  })
})

describe('GET /v1/sessions/{id}/export', () => {
  it('returns the stored file bytes as application/x-ndjson', async () => {
    const { session } = await persistedSession(app)
    const res = await app.inject({ method: 'GET', url: `/v1/sessions/${session.header.id}/export` })
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toMatch(/^application\/x-ndjson/)
    const file = storage.listFilesSync(join(DATA, 'sessions', encodeCwd('/work/p')), '*.jsonl')[0] as string
    expect(res.body).toBe(await storage.readText(file))
    expect(res.body.trim().split('\n')).toHaveLength(3)
  })

  it('answers 404 for an unknown session', async () => {
    expect(problemOf(await app.inject({ method: 'GET', url: '/v1/sessions/nope/export' }))).toEqual({ status: 404, code: 'SS_SESSION_NOT_FOUND' })
  })
})

describe('DELETE /v1/sessions/{id}', () => {
  it('removes the session and its file (204)', async () => {
    const { session } = await persistedSession(app)
    const dir = join(DATA, 'sessions', encodeCwd('/work/p'))
    expect(storage.listFilesSync(dir, '*.jsonl')).toHaveLength(1)
    const res = await app.inject({ method: 'DELETE', url: `/v1/sessions/${session.header.id}`, headers: { 'if-match': (await getSession(app, session.header.id)).etag } })
    expect(res.statusCode).toBe(204)
    expect(res.body).toBe('')
    expect(storage.listFilesSync(dir, '*.jsonl')).toEqual([])
    expect(problemOf(await app.inject({ method: 'GET', url: `/v1/sessions/${session.header.id}` }))).toEqual({ status: 404, code: 'SS_SESSION_NOT_FOUND' })
    expect(problemOf(await app.inject({ method: 'DELETE', url: `/v1/sessions/${session.header.id}` }))).toEqual({ status: 404, code: 'SS_SESSION_NOT_FOUND' })
  })

  it('answers 412 for a stale If-Match and keeps the session', async () => {
    const { session } = await persistedSession(app)
    const res = await app.inject({ method: 'DELETE', url: `/v1/sessions/${session.header.id}`, headers: { 'if-match': session.etag } })
    expect(problemOf(res)).toEqual({ status: 412, code: 'SS_PRECONDITION_FAILED' })
    expect((await getSession(app, session.header.id)).entryCount).toBe(2)
  })
})

describe('507: a latched persistence error', () => {
  it('fails that session with 507 while other sessions keep working', async () => {
    await app.close()
    let broken = ''
    const failing = new MemorySessionStorage({
      failWrites: (path, op) => broken !== '' && path.includes(broken) && op === 'writeLine'
        ? Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' })
        : undefined,
    })
    const blobs = new MemoryBlobStore()
    app = await buildTestApp({ storage: failing, blobs, config: { dataDir: DATA } })
    const bad = await persistedSession(app, '/bad')
    const good = await persistedSession(app, '/good')
    broken = bad.session.header.id
    const res = await app.inject({ method: 'POST', url: `/v1/sessions/${broken}/entries`, payload: message(user('lost')) })
    expect(res.statusCode).toBe(507)
    expect(res.json()).toMatchObject({ code: 'SS_STORAGE_FAILED', status: 507 })
    expect(res.body).not.toContain('ENOSPC')
    const next = await app.inject({ method: 'POST', url: `/v1/sessions/${broken}/entries`, payload: message(user('again')) })
    expect(problemOf(next)).toEqual({ status: 507, code: 'SS_STORAGE_FAILED' })
    const fine = await append(app, good.session.header.id, message(user('still fine')))
    expect(fine.persisted).toBe(true)

    // Space again: the session was reloaded from disk, without the entries that never got there.
    broken = ''
    const healed = await append(app, bad.session.header.id, message(user('healed')))
    expect(healed.persisted).toBe(true)
    const page = await app.inject({ method: 'GET', url: `/v1/sessions/${bad.session.header.id}/entries` })
    const texts = page.json().entries.map((e: { message?: { content?: unknown } }) => e.message?.content)
    expect(texts).toContain('healed')
    expect(texts).not.toContain('lost')
    expect(texts).not.toContain('again')
  })
})
