/**
 * The client's health and session calls against a real listening server, with the mapping of
 * error answers to `SessionStoreError` (404, 409, 412, 422, 400).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createClient, SessionStoreError, type SessionStoreClient } from '../../src/client/index.js'
import { assistant, listenTestServer, user, type TestServer } from './helpers.js'

let server: TestServer
let client: SessionStoreClient

beforeEach(async () => {
  server = await listenTestServer()
  client = createClient({ baseUrl: server.baseUrl, retryDelayMs: 5 })
})
afterEach(async () => {
  await client.close()
  await server.close()
})

/** The error a promise rejects with. */
async function failure (promise: Promise<unknown>): Promise<SessionStoreError> {
  const err = await promise.then(() => undefined, (e: unknown) => e)
  expect(err).toBeInstanceOf(SessionStoreError)
  return err as SessionStoreError
}

/** A session with a user and an assistant message (persisted). */
async function persisted (cwd = '/work/p', id?: string): Promise<string> {
  const session = await client.createSession({ cwd, id })
  await client.append(session.header.id, [{ type: 'message', message: user('hello') }, { type: 'message', message: assistant() }])
  return session.header.id
}

describe('health', () => {
  it('reports live and ready', async () => {
    expect(await client.health()).toEqual({ status: 'ok' })
    expect(await client.isReady()).toBe(true)
  })
})

describe('sessions', () => {
  it('creates a session and reads it back', async () => {
    const created = await client.createSession({ cwd: '/work/p', title: 'T', parentSession: 'x' })
    expect(created).toMatchObject({ header: { type: 'session', version: 3, cwd: '/work/p', title: 'T', parentSession: 'x' }, leafId: null, persisted: false })
    expect(await client.getSession(created.header.id)).toEqual(created)
  })

  it('maps a 404 to SessionStoreError with status, code, title and detail', async () => {
    const err = await failure(client.getSession('nope'))
    expect(err).toMatchObject({ status: 404, code: 'SS_SESSION_NOT_FOUND', title: 'Not Found', type: 'about:blank' })
    expect(err.detail).toContain('nope')
    expect(err.request).toBe('GET /v1/sessions/nope')
  })

  it('maps 409 for a taken id and 400 for an invalid one', async () => {
    await client.createSession({ cwd: '/a', id: 'taken' })
    expect(await failure(client.createSession({ cwd: '/b', id: 'taken' }))).toMatchObject({ status: 409, code: 'SS_SESSION_EXISTS' })
    expect(await failure(client.createSession({ cwd: '/b', id: 'recent' }))).toMatchObject({ status: 400, code: 'SS_INVALID_SESSION_ID' })
  })

  it('lists sessions newest first, pages with the cursor, and hides empty ones unless asked', async () => {
    const a = await persisted('/work/a')
    const b = await persisted('/work/b')
    const empty = await client.createSession({ cwd: '/work/a' })
    const all = await client.listSessions()
    expect(all.sessions.map((s) => s.id)).toEqual([b, a])
    const first = await client.listSessions({ limit: 1 })
    expect(first.sessions.map((s) => s.id)).toEqual([b])
    const second = await client.listSessions({ limit: 1, cursor: first.nextCursor ?? undefined })
    expect(second.sessions.map((s) => s.id)).toEqual([a])
    expect((await client.listSessions({ cwd: '/work/a', includeEmpty: true })).sessions.map((s) => s.id)).toContain(empty.header.id)
    expect((await client.listSessions({ cwd: '/work/a' })).sessions.map((s) => s.id)).toEqual([a])
    expect(await failure(client.listSessions({ cursor: 'garbage' }))).toMatchObject({ status: 400, code: 'SS_INVALID_CURSOR' })
  })

  it('reads the recent sessions of a cwd', async () => {
    const id = await persisted('/work/r')
    await client.renameSession(id, 'Recent one')
    const recent = await client.recentSessions('/work/r', 5)
    expect(recent).toEqual([{ id, name: 'Recent one', modified: expect.any(String) }])
  })

  it('continues the newest session of a cwd, or starts one', async () => {
    const started = await client.continueSession({ cwd: '/work/c' })
    expect(started.created).toBe(true)
    const id = await persisted('/work/c')
    const resumed = await client.continueSession({ cwd: '/work/c', terminalId: 'pts-1' })
    expect(resumed).toMatchObject({ created: false, session: { header: { id } } })
  })

  it('renames with If-Match, and maps a stale etag to 412', async () => {
    const id = await persisted()
    const before = await client.getSession(id)
    const renamed = await client.renameSession(id, 'New title', { ifMatch: before.etag })
    expect(renamed.header.title).toBe('New title')
    expect(renamed.etag).not.toBe(before.etag)
    const stale = await failure(client.renameSession(id, 'Again', { ifMatch: before.etag }))
    expect(stale).toMatchObject({ status: 412, code: 'SS_PRECONDITION_FAILED' })
  })

  it('moves a session to another cwd', async () => {
    const id = await persisted('/work/old')
    expect((await client.moveSession(id, '/work/new')).header.cwd).toBe('/work/new')
    expect((await client.getSession(id)).header.cwd).toBe('/work/new')
  })

  it('forks a whole session or the path to a leaf', async () => {
    const id = await persisted()
    const [first] = (await client.getEntries(id)).entries
    const whole = await client.forkSession(id)
    expect(whole.header.parentSession).toBe(id)
    expect(whole.entryCount).toBe(2)
    const branched = await client.forkSession(id, { leafId: first!.id })
    expect(branched.entryCount).toBe(1)
    expect((await failure(client.forkSession(id, { leafId: 'nope' }))).code).toBe('SS_ENTRY_NOT_FOUND')
  })

  it('exports the stored file and imports it again under a new id; the same id is 409', async () => {
    const id = await persisted('/work/x', 'exported')
    const jsonl = await client.exportSession(id)
    expect(jsonl.split('\n').filter((l) => l !== '')).toHaveLength(3)
    expect(await failure(client.importSession(jsonl))).toMatchObject({ status: 409, code: 'SS_SESSION_EXISTS' })
    const copy = await client.importSession(jsonl, { newId: true })
    expect(copy.header.id).not.toBe(id)
    expect(copy.entryCount).toBe(2)
  })

  it('maps an import of a too-new version to 422', async () => {
    const jsonl = JSON.stringify({ type: 'session', version: 4, id: 'future', timestamp: new Date().toISOString(), cwd: '/f' }) + '\n'
    expect(await failure(client.importSession(jsonl))).toMatchObject({ status: 422, code: 'SS_SESSION_VERSION_TOO_NEW' })
  })

  it('deletes a session; it is then 404', async () => {
    const id = await persisted()
    const { etag } = await client.getSession(id)
    await client.deleteSession(id, { ifMatch: etag })
    expect((await failure(client.getSession(id))).status).toBe(404)
    expect((await failure(client.deleteSession(id))).code).toBe('SS_SESSION_NOT_FOUND')
  })
})
