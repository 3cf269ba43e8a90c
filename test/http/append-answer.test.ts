/**
 * The answer to an append is the text JSON.stringify gives its result, made of the texts the
 * new entries' stored lines were made from: an entry is written as JSON once per append.
 */
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { App } from '../../src/app.js'
import { buildTestApp } from '../helpers/app.js'
import { message, persistedSession, user } from './session-helpers.js'

let app: App | undefined
afterEach(async () => {
  vi.restoreAllMocks()
  await app?.close()
})

/** Calls of JSON.stringify made with an object holding `marker` (an entry, or an answer holding one). */
function stringifyCallsOf (marker: string): () => number {
  const stringify = JSON.stringify
  let calls = 0
  vi.spyOn(JSON, 'stringify').mockImplementation((value: unknown, ...rest: unknown[]) => {
    const entry = (value as { entries?: unknown[] } | null)?.entries?.[0] ?? value
    if ((entry as { message?: { content?: unknown } } | null)?.message?.content === marker) calls++
    return (stringify as (...args: unknown[]) => string)(value, ...rest)
  })
  return () => calls
}

describe('the answer to an append', () => {
  it('writes the new entry as JSON once, for its stored line and its answer', async () => {
    app = await buildTestApp()
    const { session } = await persistedSession(app)
    const marker = `once ${'x'.repeat(1000)}`
    const payload = JSON.stringify(message(user(marker)))
    const calls = stringifyCallsOf(marker)
    const res = await app.inject({
      method: 'POST', url: `/v1/sessions/${session.header.id}/entries`, payload, headers: { 'content-type': 'application/json' },
    })
    expect(res.statusCode).toBe(201)
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8')
    expect(res.json()).toMatchObject({ entries: [{ type: 'message', message: { role: 'user', content: marker } }], firstSeq: 3, lastSeq: 3, persisted: true })
    expect(calls()).toBe(1)
  })

  it('is the text JSON.stringify gives the result, for a batch, a deferred session and blobs=ref', async () => {
    app = await buildTestApp()
    const { session } = await persistedSession(app)
    const batch = { entries: [message(user('a "quoted" \u2028 one')), message(user('b'))] }
    const created = await app.inject({ method: 'POST', url: '/v1/sessions', payload: { cwd: '/work/q' } })
    const deferred = (created.json() as { header: { id: string } }).header.id
    for (const url of [`/v1/sessions/${session.header.id}/entries`, `/v1/sessions/${session.header.id}/entries?blobs=ref`, `/v1/sessions/${deferred}/entries`]) {
      const res = await app.inject({ method: 'POST', url, payload: batch })
      expect(res.statusCode).toBe(201)
      const body = res.json() as { entries: unknown[], leafId: string, firstSeq: number, lastSeq: number, persisted: boolean }
      expect(Object.keys(body)).toEqual(['entries', 'leafId', 'firstSeq', 'lastSeq', 'persisted'])
      expect(res.body).toBe(JSON.stringify(body))
      expect(body.entries).toHaveLength(2)
    }
  })
})
