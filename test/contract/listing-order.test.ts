/**
 * API.md "SessionInfo": listings are sorted by `modified`, newest first, also for sessions that
 * change within the same millisecond.
 */
import { afterEach, beforeEach, expect, it } from 'vitest'
import type { App } from '../../src/app.js'
import { buildTestApp } from '../helpers/app.js'
import { createSession } from '../http/session-helpers.js'

let app: App
beforeEach(async () => { app = await buildTestApp() })
afterEach(async () => { await app.close() })

it('lists sessions created in quick succession newest first', async () => {
  const created: string[] = []
  for (let i = 0; i < 30; i++) created.push((await createSession(app, { cwd: '/burst' })).header.id)
  const res = await app.inject({ method: 'GET', url: '/v1/sessions?cwd=/burst&includeEmpty=true&limit=1000' })
  expect(res.json().sessions.map((s: { id: string }) => s.id)).toEqual(created.reverse())
})

it('moves a session that just changed to the front', async () => {
  const first = await createSession(app, { cwd: '/burst' })
  const second = await createSession(app, { cwd: '/burst' })
  await app.inject({ method: 'PATCH', url: `/v1/sessions/${first.header.id}`, payload: { title: 'changed' } })
  const res = await app.inject({ method: 'GET', url: '/v1/sessions?cwd=/burst&includeEmpty=true' })
  expect(res.json().sessions.map((s: { id: string }) => s.id)).toEqual([first.header.id, second.header.id])
})
