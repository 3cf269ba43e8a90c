/**
 * API.md "Entries" through `app.inject`: paging, single reads and appends. Leaf, branch
 * summaries, tree, branch, context and `?blobs=ref` are in entries-navigation.test.ts.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { App } from '../../src/app.js'
import type { AppendResult, SessionEntryBase } from '../../src/registry/session-registry.js'
import { buildTestApp } from '../helpers/app.js'
import { append, assistant, createSession, getSession, message, persistedSession, user, type Json } from './session-helpers.js'
import { problemOf } from '../helpers/problem.js'

let app: App
beforeEach(async () => { app = await buildTestApp() })
afterEach(async () => { await app.close() })

const entriesUrl = (id: string): string => `/v1/sessions/${id}/entries`
const post = (id: string, payload: unknown, headers: Record<string, string> = {}) =>
  app.inject({ method: 'POST', url: entriesUrl(id), payload: payload as Json, headers })
const get = (url: string) => app.inject({ method: 'GET', url })
const allEntries = async (id: string): Promise<SessionEntryBase[]> => (await get(`${entriesUrl(id)}?limit=1000`)).json().entries

describe('GET /v1/sessions/{id}/entries', () => {
  it('pages by seq: entry i has seq after+i+1, next is the following after', async () => {
    const s = await createSession(app)
    const { entries } = await append(app, s.header.id, { entries: Array.from({ length: 5 }, (_, i) => message(user(`m${i}`))) })
    const first = await get(`${entriesUrl(s.header.id)}?limit=2`)
    expect(first.statusCode).toBe(200)
    expect(first.json()).toEqual({ entries: entries.slice(0, 2), after: 0, next: 2, total: 5 })
    const last = await get(`${entriesUrl(s.header.id)}?after=4&limit=2`)
    expect(last.json()).toEqual({ entries: entries.slice(4), after: 4, next: null, total: 5 })
    const past = await get(`${entriesUrl(s.header.id)}?after=9`)
    expect(past.json()).toEqual({ entries: [], after: 9, next: null, total: 5 })
  })

  it('answers 404 for an unknown session and 400 for a bad after/limit', async () => {
    expect(problemOf(await get(entriesUrl('nope')))).toEqual({ status: 404, code: 'SS_SESSION_NOT_FOUND' })
    const s = await createSession(app)
    for (const q of ['after=-1', 'limit=0', 'limit=1001', 'after=x', 'blobs=other']) {
      expect(problemOf(await get(`${entriesUrl(s.header.id)}?${q}`)), q).toEqual({ status: 400, code: 'SS_VALIDATION' })
    }
  })
})

describe('GET /v1/sessions/{id}/entries/{entryId}', () => {
  it('returns one entry, 404 for an unknown one', async () => {
    const { session, ids } = await persistedSession(app)
    const res = await get(`${entriesUrl(session.header.id)}/${ids[1]}`)
    expect(res.statusCode).toBe(200)
    expect(res.json()).toMatchObject({ id: ids[1], parentId: ids[0], type: 'message', message: { role: 'assistant' } })
    const missing = await get(`${entriesUrl(session.header.id)}/nope`)
    expect(missing.statusCode).toBe(404)
    expect(missing.json().code).toBe('SS_ENTRY_NOT_FOUND')
    expect(problemOf(await get(`${entriesUrl('nope')}/${ids[0]}`))).toEqual({ status: 404, code: 'SS_SESSION_NOT_FOUND' })
  })
})

describe('POST /v1/sessions/{id}/entries', () => {
  it('appends one entry or a batch, chained, contiguous in seq', async () => {
    const s = await createSession(app)
    const one = await append(app, s.header.id, message(user('a')))
    expect(one).toMatchObject({ firstSeq: 1, lastSeq: 1, persisted: false, leafId: one.entries[0]?.id })
    expect(one.entries[0]).toMatchObject({ type: 'message', parentId: null, message: { role: 'user', content: 'a' } })
    const batch = await append(app, s.header.id, {
      entries: [message(assistant('b')), { type: 'custom', customType: 'x', data: { n: 1 } }, { type: 'thinking_level_change', thinkingLevel: 'high' }],
    })
    expect(batch).toMatchObject({ firstSeq: 2, lastSeq: 4, persisted: true })
    const [b, c, d] = batch.entries
    expect(b?.parentId).toBe(one.entries[0]?.id)
    expect(c?.parentId).toBe(b?.id)
    expect(d?.parentId).toBe(c?.id)
    expect(batch.leafId).toBe(d?.id)
    expect((await getSession(app, s.header.id))).toMatchObject({ entryCount: 4, messageCount: 2, leafId: d?.id })
  })

  it('persisted is false under the deferral rule and true from the first assistant message on', async () => {
    const s = await createSession(app)
    expect((await append(app, s.header.id, message(user()))).persisted).toBe(false)
    expect((await getSession(app, s.header.id)).persisted).toBe(false)
    expect((await append(app, s.header.id, message(assistant()))).persisted).toBe(true)
    expect((await append(app, s.header.id, message(user()))).persisted).toBe(true)
  })

  it('parentId attaches the first entry like branch(P), null makes a new root', async () => {
    const { session, ids } = await persistedSession(app)
    const side = await append(app, session.header.id, { parentId: ids[0], entries: [message(assistant('alt')), message(user('next'))] })
    expect(side.entries[0]?.parentId).toBe(ids[0])
    expect(side.entries[1]?.parentId).toBe(side.entries[0]?.id)
    const root = await append(app, session.header.id, { parentId: null, ...message(user('root')) })
    expect(root.entries[0]?.parentId).toBeNull()
    const tree = await get(`/v1/sessions/${session.header.id}/tree`)
    expect(tree.json().nodes.find((n: { id: string }) => n.id === ids[0]).children).toEqual([ids[1], side.entries[0]?.id])
  })

  it('is atomic: an invalid entry anywhere in the batch appends nothing (400)', async () => {
    const { session } = await persistedSession(app)
    const bodies: unknown[] = [
      { entries: [message(user()), { type: 'message', message: { content: 'no role' } }] },
      { entries: [message(user()), { type: 'session', id: 'x' }] },
      { entries: [message(user()), { type: '' }] },
      { entries: [message(user()), { type: 'message', message: { role: 'assistant', content: 'text' } }] },
      { entries: [message(user()), { type: 'model_change', model: '' }] },
      { entries: [message(user()), { type: 'message', id: 'mine', message: user() }] },
      { entries: [message(user()), { type: 'message', message: { role: 'compactionSummary' } }] },
      { entries: [] },
      { nothing: true },
    ]
    for (const body of bodies) {
      const res = await post(session.header.id, body)
      expect(res.statusCode, JSON.stringify(body)).toBe(400)
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/)
    }
    expect((await getSession(app, session.header.id)).entryCount).toBe(2)
  })

  it('answers 422 for an unknown parentId or label target and appends nothing', async () => {
    const { session, ids } = await persistedSession(app)
    const parent = await post(session.header.id, { parentId: 'nope', entries: [message(user())] })
    expect(parent.statusCode).toBe(422)
    expect(parent.json().code).toBe('SS_UNKNOWN_PARENT')
    const label = await post(session.header.id, { entries: [message(user()), { type: 'label', targetId: 'nope', label: 'x' }] })
    expect(label.statusCode).toBe(422)
    expect(label.json().code).toBe('SS_UNKNOWN_LABEL_TARGET')
    expect((await getSession(app, session.header.id)).entryCount).toBe(2)
    const ok = await append(app, session.header.id, { type: 'label', targetId: ids[0], label: 'start' })
    expect(ok.entries[0]).toMatchObject({ targetId: ids[0], label: 'start' })
  })

  it('replays an Idempotency-Key with the same body and appends nothing; 422 for another body', async () => {
    const { session } = await persistedSession(app)
    const body = message(user('once'))
    const first = await post(session.header.id, body, { 'idempotency-key': 'k1' })
    expect(first.statusCode).toBe(201)
    expect(first.headers['idempotent-replayed']).toBeUndefined()
    const retry = await post(session.header.id, body, { 'idempotency-key': 'k1' })
    expect(retry.statusCode).toBe(201)
    expect(retry.headers['idempotent-replayed']).toBe('true')
    expect(retry.json()).toEqual(first.json())
    const other = await post(session.header.id, message(user('different')), { 'idempotency-key': 'k1' })
    expect(other.statusCode).toBe(422)
    expect(other.json().code).toBe('SS_IDEMPOTENCY_KEY_REUSED')
    expect((await getSession(app, session.header.id)).entryCount).toBe(3)
    expect(problemOf(await post(session.header.id, body, { 'idempotency-key': 'x'.repeat(256) }))).toEqual({ status: 400, code: 'SS_VALIDATION' })
  })

  it('appends concurrent duplicates with one Idempotency-Key exactly once', async () => {
    const { session } = await persistedSession(app)
    const body = { entries: [message(user('dup')), message(assistant('dup'))] }
    const results = await Promise.all(Array.from({ length: 10 }, async () => await post(session.header.id, body, { 'idempotency-key': 'same' })))
    expect(results.map((r) => r.statusCode)).toEqual(Array(10).fill(201))
    expect(new Set(results.map((r) => r.body)).size).toBe(1)
    expect(results.filter((r) => r.headers['idempotent-replayed'] === 'true')).toHaveLength(9)
    expect((await getSession(app, session.header.id)).entryCount).toBe(4)
  })

  it('answers 412 for a stale If-Match, 404 for an unknown session, 415 for a non-JSON body', async () => {
    const { session } = await persistedSession(app)
    const stale = await post(session.header.id, message(user()), { 'if-match': session.etag })
    expect(problemOf(stale)).toEqual({ status: 412, code: 'SS_PRECONDITION_FAILED' })
    const current = (await getSession(app, session.header.id)).etag
    expect((await post(session.header.id, message(user()), { 'if-match': current })).statusCode).toBe(201)
    expect(problemOf(await post('nope', message(user())))).toEqual({ status: 404, code: 'SS_SESSION_NOT_FOUND' })
    const text = await app.inject({ method: 'POST', url: entriesUrl(session.header.id), payload: 'x', headers: { 'content-type': 'text/plain' } })
    expect(problemOf(text)).toEqual({ status: 415, code: 'SS_UNSUPPORTED_MEDIA_TYPE' })
  })

  it('survives 20 concurrent writers: every entry once, seq contiguous, every parent exists', async () => {
    const { session } = await persistedSession(app)
    const id = session.header.id
    const writers = Array.from({ length: 20 }, async (_, w) => {
      const mine: AppendResult[] = []
      for (let i = 0; i < 5; i++) mine.push(await append(app, id, { entries: [message(user(`w${w}-${i}a`)), message(user(`w${w}-${i}b`))] }))
      return mine
    })
    const results = (await Promise.all(writers)).flat()
    const entries = await allEntries(id)
    expect(entries).toHaveLength(2 + 200)
    expect(new Set(entries.map((e) => e.id)).size).toBe(202)
    const texts = entries.slice(2).map((e) => (e.message as { content: string }).content).sort()
    expect(texts).toEqual(Array.from({ length: 20 }, (_, w) => Array.from({ length: 5 }, (_, i) => [`w${w}-${i}a`, `w${w}-${i}b`])).flat(2).sort())
    const byId = new Set(entries.map((e) => e.id))
    for (const e of entries.slice(1)) expect(byId.has(e.parentId as string)).toBe(true)
    for (const r of results) {
      expect(r.lastSeq - r.firstSeq).toBe(1)
      expect(entries[r.firstSeq - 1]?.id).toBe(r.entries[0]?.id)
      expect(entries[r.lastSeq - 1]?.id).toBe(r.entries[1]?.id)
      expect(r.persisted).toBe(true)
    }
    expect(new Set(results.map((r) => r.firstSeq)).size).toBe(100)
  })
})
