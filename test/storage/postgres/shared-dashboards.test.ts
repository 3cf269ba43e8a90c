/**
 * Dashboards on any server: `GET /v1/events` on B tells of the sessions another server creates,
 * appends to and deletes, with their listing view, as it tells of its own.
 */
import { describe, expect, it } from 'vitest'
import { pgAvailable } from '../../helpers/pg.js'
import { assistant, message, user } from '../../http/session-helpers.js'
import { SseClient } from '../../sse-client.js'
import { call } from './server-calls.js'
import { useTwoServers } from './two-servers.js'

interface Told { event: string, info: { id: string, messageCount: number } }

describe.runIf(pgAvailable)('dashboards across servers', () => {
  const servers = useTwoServers()

  it('a dashboard on B is told of a session A creates, appends to and deletes', async () => {
    const { a, b } = servers
    const dashboard = await SseClient.connect(`${b.baseUrl}/v1/events`)
    const told = (id: string): Told[] => dashboard.events
      .map((e) => ({ event: e.event, info: JSON.parse(e.data) as Told['info'] }))
      .filter((e) => e.info.id === id)
    try {
      const created = await call(a.baseUrl, 'POST', '/v1/sessions', { cwd: '/work/dash' })
      const id = created.body.header.id as string
      const entries = `/v1/sessions/${id}/entries`
      expect((await call(a.baseUrl, 'POST', entries, { entries: [message(user('hello')), message(assistant('hi'))] })).status).toBe(201)
      await dashboard.waitFor(() => told(id).some((e) => e.info.messageCount === 2))
      expect(told(id)[0]).toMatchObject({ event: 'session-created', info: { id } })
      expect(told(id).at(-1)).toMatchObject({ info: { id, messageCount: 2 } })

      expect((await call(a.baseUrl, 'POST', entries, message(user('more')))).status).toBe(201)
      await dashboard.waitFor(() => told(id).some((e) => e.event === 'session-updated' && e.info.messageCount === 3))

      expect((await call(a.baseUrl, 'DELETE', `/v1/sessions/${id}`)).status).toBe(204)
      await dashboard.waitFor(() => told(id).some((e) => e.event === 'session-deleted'))
      expect(told(id).at(-1)).toMatchObject({ event: 'session-deleted', info: { id } })
      // Every event has an id a reconnect can resume from.
      expect(dashboard.events.every((e) => e.id !== undefined)).toBe(true)
    } finally {
      dashboard.close()
    }
  }, 60_000)
})
