/**
 * API.md "Entries" through `app.inject`: leaf, branch summaries, tree, branch, context and
 * `?blobs=ref` on every route that returns entries.
 */
import { createHash } from 'node:crypto'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { App } from '../../src/app.js'
import type { SessionEntryBase } from '../../src/registry/session-registry.js'
import { buildTestApp } from '../helpers/app.js'
import { append, assistant, createSession, getSession, message, persistedSession, user, type Json } from './session-helpers.js'
import { problemOf } from '../helpers/problem.js'

let app: App
beforeEach(async () => { app = await buildTestApp() })
afterEach(async () => { await app.close() })

const entriesUrl = (id: string): string => `/v1/sessions/${id}/entries`
const get = (url: string) => app.inject({ method: 'GET', url })

describe('PUT /v1/sessions/{id}/leaf', () => {
  it('moves the leaf (200 {leafId, etag, durable: false}); null resets it', async () => {
    const { session, ids } = await persistedSession(app)
    const url = `/v1/sessions/${session.header.id}/leaf`
    const before = (await getSession(app, session.header.id)).etag
    const res = await app.inject({ method: 'PUT', url, payload: { leafId: ids[0] } })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toEqual({ leafId: ids[0], etag: expect.any(String), durable: false })
    expect(res.json().etag).not.toBe(before)
    expect((await getSession(app, session.header.id)).etag).toBe(res.json().etag)
    const next = await append(app, session.header.id, message(user('sibling')))
    expect(next.entries[0]?.parentId).toBe(ids[0])
    const reset = await app.inject({ method: 'PUT', url, payload: { leafId: null } })
    expect(reset.json().leafId).toBeNull()
    expect((await append(app, session.header.id, message(user('root')))).entries[0]?.parentId).toBeNull()
  })

  it('changes the etag even when the leaf comes back to where it was', async () => {
    const { session, ids } = await persistedSession(app)
    const url = `/v1/sessions/${session.header.id}/leaf`
    const start = (await getSession(app, session.header.id)).etag
    await app.inject({ method: 'PUT', url, payload: { leafId: ids[0] } })
    const back = await app.inject({ method: 'PUT', url, payload: { leafId: ids[1] } })
    expect(back.json().etag).not.toBe(start)
    expect(problemOf(await app.inject({ method: 'PUT', url, payload: { leafId: ids[0] }, headers: { 'if-match': start } }))).toEqual({ status: 412, code: 'SS_PRECONDITION_FAILED' })
  })

  it('answers 404 for an unknown entry or session, 412 when stale, 400 for a bad body', async () => {
    const { session } = await persistedSession(app)
    const url = `/v1/sessions/${session.header.id}/leaf`
    const unknown = await app.inject({ method: 'PUT', url, payload: { leafId: 'nope' } })
    expect(unknown.statusCode).toBe(404)
    expect(unknown.json().code).toBe('SS_ENTRY_NOT_FOUND')
    expect((await app.inject({ method: 'PUT', url: '/v1/sessions/nope/leaf', payload: { leafId: null } })).statusCode).toBe(404)
    expect((await app.inject({ method: 'PUT', url, payload: { leafId: null }, headers: { 'if-match': session.etag } })).statusCode).toBe(412)
    expect(problemOf(await app.inject({ method: 'PUT', url, payload: {} }))).toEqual({ status: 400, code: 'SS_VALIDATION' })
  })
})

describe('POST /v1/sessions/{id}/branch-summary', () => {
  it('appends a branch_summary under fromId (201 {entry, leafId})', async () => {
    const { session, ids } = await persistedSession(app)
    const url = `/v1/sessions/${session.header.id}/branch-summary`
    const res = await app.inject({ method: 'POST', url, payload: { fromId: ids[0], summary: 'tried X', details: { n: 1 } } })
    expect(res.statusCode).toBe(201)
    const { entry, leafId } = res.json()
    expect(entry).toMatchObject({ type: 'branch_summary', parentId: ids[0], fromId: ids[0], summary: 'tried X', details: { n: 1 } })
    expect(leafId).toBe(entry.id)
    const root = await app.inject({ method: 'POST', url, payload: { fromId: null, summary: 'restart' } })
    expect(root.json().entry).toMatchObject({ parentId: null, fromId: 'root' })
    const context = await get(`/v1/sessions/${session.header.id}/context`)
    expect(context.json().messages).toEqual([expect.objectContaining({ role: 'branchSummary', summary: 'restart', fromId: 'root' })])
  })

  it('answers 404 for an unknown fromId or session, 412 when stale, 400 for a bad body', async () => {
    const { session } = await persistedSession(app)
    const url = `/v1/sessions/${session.header.id}/branch-summary`
    expect(problemOf(await app.inject({ method: 'POST', url, payload: { fromId: 'nope', summary: 's' } }))).toEqual({ status: 404, code: 'SS_ENTRY_NOT_FOUND' })
    expect((await app.inject({ method: 'POST', url: '/v1/sessions/nope/branch-summary', payload: { fromId: null, summary: 's' } })).statusCode).toBe(404)
    expect((await app.inject({ method: 'POST', url, payload: { fromId: null, summary: 's' }, headers: { 'if-match': session.etag } })).statusCode).toBe(412)
    expect(problemOf(await app.inject({ method: 'POST', url, payload: { fromId: null } }))).toEqual({ status: 400, code: 'SS_VALIDATION' })
    expect((await getSession(app, session.header.id)).entryCount).toBe(2)
  })
})

describe('GET tree, branch, context', () => {
  it('tree: flat nodes in file order with labels and children', async () => {
    const { session, ids } = await persistedSession(app)
    await append(app, session.header.id, { type: 'label', targetId: ids[0], label: 'start' })
    const res = await get(`/v1/sessions/${session.header.id}/tree`)
    expect(res.statusCode).toBe(200)
    const { leafId, nodes } = res.json()
    expect(nodes).toHaveLength(3)
    expect(nodes[0]).toEqual({ id: ids[0], parentId: null, type: 'message', timestamp: expect.any(String), label: 'start', children: [ids[1]] })
    expect(leafId).toBe(nodes[2].id)
    expect(problemOf(await get('/v1/sessions/nope/tree'))).toEqual({ status: 404, code: 'SS_SESSION_NOT_FOUND' })
  })

  it('tree and context handle a 100,000-entry chain', async () => {
    const s = await createSession(app)
    // Open mode has no batch cap: ten batches of 10,000.
    for (let i = 0; i < 10; i++) {
      await append(app, s.header.id, { entries: Array.from({ length: 10_000 }, (_, j) => message(j % 2 === 0 ? user('u') : assistant('a'))) })
    }
    const tree = await get(`/v1/sessions/${s.header.id}/tree`)
    expect(tree.statusCode).toBe(200)
    const nodes = tree.json().nodes as Array<{ children: string[] }>
    expect(nodes).toHaveLength(100_000)
    expect(nodes.every((n, i) => n.children.length === (i === 99_999 ? 0 : 1))).toBe(true)
    const context = await get(`/v1/sessions/${s.header.id}/context`)
    expect(context.json().messages).toHaveLength(100_000)
    const branch = await get(`/v1/sessions/${s.header.id}/branch`)
    expect(branch.json().entries).toHaveLength(100_000)
  }, 60_000)

  it('branch: root → leaf, or root → leafId; empty for an unknown leafId (getBranch)', async () => {
    const { session, ids } = await persistedSession(app)
    const side = await append(app, session.header.id, { parentId: ids[0], ...message(user('side')) })
    const current = await get(`/v1/sessions/${session.header.id}/branch`)
    expect(current.json().entries.map((e: SessionEntryBase) => e.id)).toEqual([ids[0], side.entries[0]?.id])
    const other = await get(`/v1/sessions/${session.header.id}/branch?leafId=${ids[1]}`)
    expect(other.json().entries.map((e: SessionEntryBase) => e.id)).toEqual(ids)
    const unknown = await get(`/v1/sessions/${session.header.id}/branch?leafId=nope`)
    expect(unknown.statusCode).toBe(200)
    expect(unknown.json()).toEqual({ entries: [] })
    expect(problemOf(await get('/v1/sessions/nope/branch'))).toEqual({ status: 404, code: 'SS_SESSION_NOT_FOUND' })
  })

  it('context: current leaf, a given leafId, and the fallback for an unknown one', async () => {
    const { session, ids } = await persistedSession(app)
    await append(app, session.header.id, { parentId: ids[0], ...message(user('side')) })
    const current = await get(`/v1/sessions/${session.header.id}/context`)
    expect(current.json()).toMatchObject({ thinkingLevel: 'off', mode: 'none', injectedTtsrRules: [] })
    expect(current.json().messages.map((m: { content: unknown }) => m.content)).toEqual(['hello', 'side'])
    const at = await get(`/v1/sessions/${session.header.id}/context?leafId=${ids[1]}`)
    expect(at.json().messages).toHaveLength(2)
    expect(at.json().models).toEqual({ default: 'anthropic/claude-test' })
    const unknown = await get(`/v1/sessions/${session.header.id}/context?leafId=zzz`)
    expect(unknown.json()).toEqual(current.json())
    expect(problemOf(await get('/v1/sessions/nope/context'))).toEqual({ status: 404, code: 'SS_SESSION_NOT_FOUND' })
  })

  it('context is streamed as JSON with its etag and the usual headers; HEAD answers without a body', async () => {
    const { session } = await persistedSession(app)
    const url = `/v1/sessions/${session.header.id}/context`
    const res = await get(url)
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8')
    expect(res.headers.etag).toBe((await get(`/v1/sessions/${session.header.id}`)).headers.etag)
    expect(res.headers['x-content-type-options']).toBe('nosniff')
    expect(res.body).toBe(JSON.stringify(res.json()))
    const head = await app.inject({ method: 'HEAD', url })
    expect(head.statusCode).toBe(200)
    expect(head.body).toBe('')
  })
})

describe('?blobs=ref', () => {
  const bytes = Buffer.alloc(1500, 7)
  const data = bytes.toString('base64')
  const ref = `blob:sha256:${createHash('sha256').update(bytes).digest('hex')}`
  const imageMessage = (): Json => message({ role: 'user', content: [{ type: 'text', text: 'look' }, { type: 'image', mimeType: 'image/png', data }] })
  const imageOf = (entry: SessionEntryBase): unknown => ((entry.message as { content: Array<{ data?: string }> }).content[1])?.data

  it('keeps base64 by default and shows refs with blobs=ref on every entry route', async () => {
    const { session } = await persistedSession(app)
    const id = session.header.id
    const appended = await app.inject({ method: 'POST', url: `${entriesUrl(id)}?blobs=ref`, payload: imageMessage() })
    const entry = appended.json().entries[0] as SessionEntryBase
    expect(imageOf(entry)).toBe(ref)
    expect(imageOf((await get(entriesUrl(id))).json().entries[2])).toBe(data)
    expect(imageOf((await get(`${entriesUrl(id)}?blobs=ref`)).json().entries[2])).toBe(ref)
    expect(imageOf((await get(`${entriesUrl(id)}/${entry.id}?blobs=ref`)).json())).toBe(ref)
    expect(imageOf((await get(`${entriesUrl(id)}/${entry.id}`)).json())).toBe(data)
    expect(imageOf((await get(`/v1/sessions/${id}/branch?blobs=ref`)).json().entries[2])).toBe(ref)
    const context = (await get(`/v1/sessions/${id}/context?blobs=ref`)).json()
    expect(context.messages[2].content[1].data).toBe(ref)
    expect((await get(`/v1/sessions/${id}/context`)).json().messages[2].content[1].data).toBe(data)
  })

  it('stores the image bytes as a blob fetchable by its hash', async () => {
    const { session } = await persistedSession(app)
    await append(app, session.header.id, imageMessage())
    const blob = await get(`/v1/blobs/sha256/${ref.slice('blob:sha256:'.length)}`)
    expect(blob.statusCode).toBe(200)
    expect(blob.rawPayload.equals(bytes)).toBe(true)
    const exported = (await get(`/v1/sessions/${session.header.id}/export`)).body
    expect(exported).toContain(ref)
    expect(exported).not.toContain(data)
  })
})
