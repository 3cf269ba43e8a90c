/**
 * API.md "RecentSession": `GET /v1/sessions/recent` names the newest sessions of a cwd as
 * SPEC.md §11.2 does, header-only sessions included, also those still held in memory under the
 * deferral rule (no file yet), which `GET /v1/sessions` hides until they have a message.
 */
import { afterEach, beforeEach, expect, it } from 'vitest'
import type { App } from '../../src/app.js'
import { buildTestApp } from '../helpers/app.js'
import { append, createSession, message, persistedSession, user } from '../http/session-helpers.js'

let app: App
beforeEach(async () => { app = await buildTestApp() })
afterEach(async () => { await app.close() })

const recent = async (query: string): Promise<Array<{ id: string, name: string, modified: string }>> => {
  const res = await app.inject({ method: 'GET', url: `/v1/sessions/recent?${query}` })
  expect(res.statusCode).toBe(200)
  return res.json().sessions
}

it('lists deferred and written sessions newest first, named title → first user text → id', async () => {
  const titled = await createSession(app, { cwd: '/r', title: 'Alpha\nsecond line' })
  const chatty = await createSession(app, { cwd: '/r' })
  await append(app, chatty.header.id, message(user('  first question\nmore')))
  const bare = await createSession(app, { cwd: '/r', id: 'bare-session' })
  const { session: written } = await persistedSession(app, '/r')
  const items = await recent('cwd=/r&limit=10')
  expect(items.map((s) => [s.id, s.name])).toEqual([
    [written.header.id, 'hello'], [bare.header.id, 'bare-session'], [chatty.header.id, 'first question'], [titled.header.id, 'Alpha'],
  ])
  const listed = await app.inject({ method: 'GET', url: '/v1/sessions?cwd=/r' })
  expect(listed.json().sessions.map((s: { id: string }) => s.id)).toEqual([written.header.id, chatty.header.id])
})

it('answers 3 items by default and cuts long names to 39 code units plus …', async () => {
  for (let i = 0; i < 4; i++) await createSession(app, { cwd: '/r', title: `${i} ${'x'.repeat(50)}` })
  const items = await recent('cwd=/r')
  expect(items).toHaveLength(3)
  expect(items[0]?.name).toBe(`3 ${'x'.repeat(37)}…`)
})

it('forgets a deleted session', async () => {
  const s = await createSession(app, { cwd: '/r' })
  await app.inject({ method: 'DELETE', url: `/v1/sessions/${s.header.id}` })
  expect(await recent('cwd=/r')).toEqual([])
})
