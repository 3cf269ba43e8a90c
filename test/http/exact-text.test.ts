/**
 * Text no column of a database can hold as it is (NUL, lone surrogates) in ids, cwds and titles
 * is stored exactly or refused the same way on every store: this suite runs on the memory store
 * and again on PostgreSQL (vitest.config.ts). A refused request changes nothing.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { App } from '../../src/app.js'
import { buildTestApp } from '../helpers/app.js'
import { append, assistant, createSession, message, user } from './session-helpers.js'

let app: App
beforeEach(async () => { app = await buildTestApp() })
afterEach(async () => { await app.close() })

/** JSON text with the string as sent (a lone surrogate escaped, as a client's serializer writes it). */
const post = async (url: string, body: unknown, method: 'POST' | 'PATCH' = 'POST') =>
  await app.inject({ method, url, headers: { 'content-type': 'application/json' }, payload: JSON.stringify(body) })

describe('text a database column cannot hold', () => {
  it('a session id holding NUL names no session: 404 on every session route; one that is no UTF-8 is 400', async () => {
    for (const [id, status] of [['%00', 404], ['a%00b', 404], ['%ED%A0%80', 400]] as const) {
      for (const route of ['', '/entries', '/context', '/tree', '/export', '/events']) {
        const res = await app.inject({ method: 'GET', url: `/v1/sessions/${id}${route}` })
        expect(res.statusCode, `${id}${route}`).toBe(status)
      }
      expect((await app.inject({ method: 'DELETE', url: `/v1/sessions/${id}` })).statusCode).toBe(status)
    }
  })

  it('a title holding NUL is stored exactly, on create and on rename, and the session keeps working', async () => {
    const created = await post('/v1/sessions', { cwd: '/w/nul', title: 'a\u0000b' })
    expect(created.statusCode, created.body).toBe(201)
    const id = created.json().header.id as string
    await append(app, id, message(user('q')))
    const renamed = await post(`/v1/sessions/${id}`, { title: 'c\u0000d' }, 'PATCH')
    expect(renamed.statusCode, renamed.body).toBe(200)
    const saved = await append(app, id, message(assistant('a')))
    expect(saved.persisted).toBe(true)
    const got = (await app.inject({ method: 'GET', url: `/v1/sessions/${id}` })).json()
    expect(got).toMatchObject({ header: { title: 'c\u0000d' }, entryCount: 2, persisted: true })
    const listed = (await app.inject({ method: 'GET', url: '/v1/sessions?cwd=%2Fw%2Fnul' })).json()
    expect(listed.sessions.map((s: { title: string }) => s.title)).toEqual(['c\u0000d'])
  })

  it('a cwd holding a lone surrogate is kept exactly: continue finds it by that cwd, not by U+FFFD', async () => {
    const cwd = '/w/\ud800'
    const { header } = await createSession(app, { cwd })
    await append(app, header.id, { entries: [message(user('q')), message(assistant('a'))] })
    const same = await post('/v1/sessions/continue', { cwd })
    expect(same.statusCode).toBe(200)
    expect(same.json().header.id).toBe(header.id)
    const other = await post('/v1/sessions/continue', { cwd: '/w/\ufffd' })
    expect(other.statusCode).toBe(201)
    expect(other.json().header.id).not.toBe(header.id)
    // Two cwds a file system would give one directory name are still two: a move between them works.
    const moved = await post(`/v1/sessions/${header.id}/move`, { cwd: '/w/\udbff' })
    expect(moved.statusCode, moved.body).toBe(200)
    expect(moved.json().header.cwd).toBe('/w/\udbff')
    expect(moved.body).not.toContain('/session-store-test')
  })

  it('a refused request changes nothing, in memory or stored', async () => {
    const { header } = await createSession(app, { cwd: '/w/refused' })
    await append(app, header.id, { entries: [message(user('q')), message(assistant('a'))] })
    const before = await app.inject({ method: 'GET', url: `/v1/sessions/${header.id}` })
    const stale = await post(`/v1/sessions/${header.id}`, { title: 'never' }, 'PATCH')
    expect(stale.statusCode).toBe(200) // a rename without If-Match goes through…
    const refused = await app.inject({ method: 'PATCH', url: `/v1/sessions/${header.id}`, headers: { 'if-match': before.headers.etag as string }, payload: { title: 'stale-title' } })
    expect(refused.statusCode).toBe(412) // …one with a stale If-Match does not, and leaves no trace
    const badAppend = await post(`/v1/sessions/${header.id}/entries`, { entries: [message(user('ok')), { type: 'label', targetId: 'nope' }] })
    expect(badAppend.statusCode).toBe(422)
    const after = (await app.inject({ method: 'GET', url: `/v1/sessions/${header.id}` })).json()
    expect(after).toMatchObject({ header: { title: 'never' }, entryCount: 2 })
    const exported = (await app.inject({ method: 'GET', url: `/v1/sessions/${header.id}/export` })).body
    expect(exported).not.toContain('stale-title')
    expect(exported.trim().split('\n')).toHaveLength(3)
  })
})
