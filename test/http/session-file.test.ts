/**
 * A session as an agent's file says: `PUT /v1/sessions/{id}/file` (created, or replaced whole
 * under If-Match / If-None-Match), an imported file's inline images in the blob store, and
 * `GET export?images=inline` for readers without a blob store.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { App } from '../../src/app.js'
import { buildTestApp } from '../helpers/app.js'
import { problemOf } from '../helpers/problem.js'
import { assistant, getSession, user, type Json } from './session-helpers.js'

let app: App
beforeEach(async () => { app = await buildTestApp() })
afterEach(async () => { await app.close() })

const IMAGE = Buffer.alloc(1500, 9).toString('base64')
const header = (title?: string): Json => ({ type: 'session', version: 3, id: 'agent-file', timestamp: '2026-03-14T15:04:07.123Z', cwd: '/work/demo', ...(title === undefined ? {} : { title }) })
const entry = (id: string, parentId: string | null, message: Json): Json => ({ type: 'message', id, parentId, timestamp: '2026-03-14T15:04:08.000Z', message })
const file = (...records: Json[]): string => records.map((r) => JSON.stringify(r) + '\n').join('')
const put = (id: string, text: string, headers: Record<string, string> = {}) =>
  app.inject({ method: 'PUT', url: `/v1/sessions/${id}/file`, payload: text, headers: { 'content-type': 'application/x-ndjson', ...headers } })
const exportOf = async (id: string, query = ''): Promise<string> => (await app.inject({ method: 'GET', url: `/v1/sessions/${id}/export${query}` })).body

const withImage = (): Json => ({ ...user('see'), content: [{ type: 'text', text: 'see' }, { type: 'image', data: IMAGE, mimeType: 'image/png' }] })

describe('PUT /v1/sessions/{id}/file', () => {
  it('creates a session that does not exist (201), byte for byte', async () => {
    const text = file(header(), entry('a1', null, user()), entry('b2', 'a1', assistant()))
    const res = await put('agent-file', text)
    expect(res.statusCode, res.body).toBe(201)
    expect(res.headers.location).toBe('/v1/sessions/agent-file')
    expect(await exportOf('agent-file')).toBe(text)
  })

  it('replaces an existing session whole: entries, leaf and header become what the file says', async () => {
    await put('agent-file', file(header(), entry('a1', null, user()), entry('b2', 'a1', assistant())))
    const before = await getSession(app, 'agent-file')
    const text = file(header('Renamed'), entry('a1', null, user()), entry('c3', 'a1', assistant('other')))
    const res = await put('agent-file', text, { 'if-match': before.etag })
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json()).toMatchObject({ header: { title: 'Renamed' }, leafId: 'c3', entryCount: 2 })
    expect(res.headers.etag).not.toBe(before.etag)
    expect(await exportOf('agent-file')).toBe(text)
    const entries = (await app.inject({ method: 'GET', url: '/v1/sessions/agent-file/entries' })).json().entries
    expect(entries.map((e: Json) => e.id)).toEqual(['a1', 'c3'])
  })

  it('answers 412 for a stale If-Match, If-Match on a missing session, and If-None-Match: * on an existing one', async () => {
    const text = file(header(), entry('a1', null, user()), entry('b2', 'a1', assistant()))
    expect(problemOf(await put('agent-file', text, { 'if-match': '"x"' }))).toEqual({ status: 412, code: 'SS_PRECONDITION_FAILED' })
    expect((await put('agent-file', text, { 'if-none-match': '*' })).statusCode).toBe(201)
    expect(problemOf(await put('agent-file', text, { 'if-none-match': '*' }))).toEqual({ status: 412, code: 'SS_PRECONDITION_FAILED' })
    expect(problemOf(await put('agent-file', text, { 'if-match': '"stale"' }))).toEqual({ status: 412, code: 'SS_PRECONDITION_FAILED' })
    expect(await exportOf('agent-file')).toBe(text)
  })

  it('counts a replacement (not a creation) against MAX_REWRITE_BYTES: 429 with Retry-After once spent', async () => {
    await app.close()
    app = await buildTestApp({ config: { maxRewriteBytes: 600 } })
    const text = file(header(), entry('a1', null, user()), entry('b2', 'a1', assistant()))
    expect((await put('agent-file', text)).statusCode).toBe(201)
    expect((await put('agent-file', text)).statusCode).toBe(200)
    const spent = await put('agent-file', text)
    expect(problemOf(spent)).toEqual({ status: 429, code: 'SS_REWRITE_BUDGET_SPENT' })
    expect(Number(spent.headers['retry-after'])).toBeGreaterThan(0)
  })

  it('refuses a file whose header names another session (400) and a body that is no session file (400)', async () => {
    expect(problemOf(await put('other-id', file(header())))).toMatchObject({ status: 400 })
    expect(problemOf(await put('agent-file', 'garbage\n'))).toMatchObject({ status: 400 })
  })
})

describe('images of an agent\'s file', () => {
  it('import stores a file with inline images byte for byte and puts the images in the blob store', async () => {
    const text = file(header(), entry('a1', null, withImage()), entry('b2', 'a1', assistant()))
    const res = await app.inject({ method: 'POST', url: '/v1/sessions/import', payload: text, headers: { 'content-type': 'application/x-ndjson' } })
    expect(res.statusCode, res.body).toBe(201)
    expect(await exportOf('agent-file')).toBe(text)
    const entries = (await app.inject({ method: 'GET', url: '/v1/sessions/agent-file/entries?blobs=ref' })).json().entries
    const ref = entries[0].message.content[1].data as string
    expect(ref).toMatch(/^blob:sha256:[0-9a-f]{64}$/)
    const blob = await app.inject({ method: 'GET', url: `/v1/blobs/sha256/${ref.slice(12)}` })
    expect(blob.statusCode).toBe(200)
    expect(blob.rawPayload.equals(Buffer.from(IMAGE, 'base64'))).toBe(true)
  })

  it('export?images=inline gives back the inline file an agent wrote, stored with refs', async () => {
    const text = file(header(), entry('a1', null, withImage()), entry('b2', 'a1', assistant()))
    await put('agent-file', file(header()))
    // Appended as records, the image is stored as a ref.
    const records = text.trimEnd().split('\n').slice(1).map((l) => JSON.parse(l) as Json)
    expect((await app.inject({ method: 'POST', url: '/v1/sessions/agent-file/records', payload: { records } })).statusCode).toBe(201)
    const stored = await exportOf('agent-file')
    expect(stored).toContain('blob:sha256:')
    expect(stored).not.toContain(IMAGE)
    expect(await exportOf('agent-file', '?images=inline')).toBe(text)
    expect(await exportOf('agent-file', '?images=ref')).toBe(stored)
    expect(problemOf(await app.inject({ method: 'GET', url: '/v1/sessions/agent-file/export?images=other' }))).toMatchObject({ status: 400 })
  })
})
