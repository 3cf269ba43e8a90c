/**
 * Two server processes on one database (STORAGE=postgres): a session without an assistant
 * message yet, and the answers kept for Idempotency-Keys, live in the database rather than in the
 * process that made them, so the other server serves them and they outlive a killed server.
 */
import pg from 'pg'
import { describe, expect, it } from 'vitest'
import { pgAvailable } from '../../helpers/pg.js'
import type { ServerProcess } from '../../helpers/server-process.js'
import { assistant, message, user } from '../../http/session-helpers.js'
import { SseClient } from '../../sse-client.js'
import { call } from './server-calls.js'
import { useTwoServers } from './two-servers.js'

async function unsavedSession (base: string, cwd: string): Promise<string> {
  const created = await call(base, 'POST', '/v1/sessions', { cwd })
  expect(created.status).toBe(201)
  expect(created.body.persisted).toBe(false)
  const id = created.body.header.id as string
  const appended = await call(base, 'POST', `/v1/sessions/${id}/entries`, message(user('first question')))
  expect(appended.status).toBe(201)
  expect(appended.body.persisted).toBe(false)
  return id
}

function errorLines (server: ServerProcess): string[] {
  return server.output.filter((line) => (JSON.parse(line) as { level?: number }).level === 50)
}

describe.runIf(pgAvailable)('unsaved sessions and idempotency keys shared by two servers', () => {
  const servers = useTwoServers()

  it('an unsaved session made on A is read, appended to and listed on B', async () => {
    const id = await unsavedSession(servers.a.baseUrl, '/work/unsaved')
    const onB = await call(servers.b.baseUrl, 'GET', `/v1/sessions/${id}`)
    expect(onB.status).toBe(200)
    expect(onB.body.persisted).toBe(false)
    expect(onB.body.entryCount).toBe(1)
    const more = await call(servers.b.baseUrl, 'POST', `/v1/sessions/${id}/entries`, message(user('second question')))
    expect(more.status).toBe(201)
    expect(more.body.persisted).toBe(false)
    const context = await call(servers.a.baseUrl, 'GET', `/v1/sessions/${id}/context`)
    expect(context.status).toBe(200)
    expect(context.body.messages.map((m: { content: unknown }) => m.content)).toEqual(['first question', 'second question'])
    const unsavedListed = await call(servers.b.baseUrl, 'GET', `/v1/sessions?cwd=${encodeURIComponent('/work/unsaved')}`)
    expect(unsavedListed.body.sessions.map((s: { id: string, messageCount: number }) => [s.id, s.messageCount])).toEqual([[id, 2]])
    const saved = await call(servers.a.baseUrl, 'POST', `/v1/sessions/${id}/entries`, message(assistant('answer')))
    expect(saved.body.persisted).toBe(true)
    expect(saved.body.firstSeq).toBe(3)
    const listed = await call(servers.b.baseUrl, 'GET', `/v1/sessions?cwd=${encodeURIComponent('/work/unsaved')}`)
    expect(listed.body.sessions.map((s: { id: string }) => s.id)).toEqual([id])
    const exported = await call(servers.b.baseUrl, 'GET', `/v1/sessions/${id}/export`)
    const lines = String(exported.body).trim().split('\n').map((line) => JSON.parse(line) as { id: string, message?: { content: unknown } })
    expect(lines.map((r) => r.id)).toEqual([id, ...(await call(servers.a.baseUrl, 'GET', `/v1/sessions/${id}/entries`)).body.entries.map((e: { id: string }) => e.id)])
    expect(lines[2]?.message?.content).toBe('second question')
  })

  it('a subscriber on B of an unsaved session gets the entries appended on A', async () => {
    const id = await unsavedSession(servers.a.baseUrl, '/work/live')
    const stream = await SseClient.connect(`${servers.b.baseUrl}/v1/sessions/${id}/events`)
    try {
      expect(stream.statusCode).toBe(200)
      await stream.waitFor(() => stream.seqs.length >= 1)
      expect((await call(servers.a.baseUrl, 'POST', `/v1/sessions/${id}/entries`, message(user('more')))).status).toBe(201)
      await stream.waitFor(() => stream.seqs.length >= 2)
      expect((await call(servers.a.baseUrl, 'POST', `/v1/sessions/${id}/entries`, message(assistant('answer')))).status).toBe(201)
      await stream.waitFor(() => stream.seqs.length >= 3)
      expect(stream.seqs).toEqual([1, 2, 3])
    } finally {
      stream.close()
    }
  })

  it('a retry on B of an append made on A gets the first answer; another body with the key is 422', async () => {
    const created = await call(servers.a.baseUrl, 'POST', '/v1/sessions', { cwd: '/work/retry' })
    const id = created.body.header.id as string
    const body = { entries: [message(user('q')), message(assistant('a'))] }
    const first = await call(servers.a.baseUrl, 'POST', `/v1/sessions/${id}/entries`, body, { 'idempotency-key': 'k-1' })
    expect(first.status).toBe(201)
    const retry = await call(servers.b.baseUrl, 'POST', `/v1/sessions/${id}/entries`, body, { 'idempotency-key': 'k-1' })
    expect(retry.status).toBe(201)
    expect(retry.headers['idempotent-replayed']).toBe('true')
    expect(JSON.stringify(retry.body)).toBe(JSON.stringify(first.body)) // byte for byte: key order kept
    expect(retry.headers.etag).toBe(first.headers.etag)
    const other = await call(servers.b.baseUrl, 'POST', `/v1/sessions/${id}/entries`, message(user('else')), { 'idempotency-key': 'k-1' })
    expect(other.status).toBe(422)
    expect((await call(servers.b.baseUrl, 'GET', `/v1/sessions/${id}`)).body.entryCount).toBe(2)
  })

  it('writers on both servers meet conflicts without logging errors', async () => {
    const created = await call(servers.a.baseUrl, 'POST', '/v1/sessions', { cwd: '/work/busy' })
    const id = created.body.header.id as string
    await call(servers.a.baseUrl, 'POST', `/v1/sessions/${id}/entries`, { entries: [message(user('q')), message(assistant('a'))] })
    await call(servers.b.baseUrl, 'GET', `/v1/sessions/${id}`)
    const answers = await Promise.all(Array.from({ length: 20 }, async (_, i) =>
      await call(i % 2 === 0 ? servers.a.baseUrl : servers.b.baseUrl, 'POST', `/v1/sessions/${id}/entries`, message(user(`w${i}`)))))
    expect(answers.map((r) => r.status)).toEqual(Array(20).fill(201))
    expect([...errorLines(servers.a), ...errorLines(servers.b)]).toEqual([])
  })

  it('a purge at start-up removes only unsaved sessions past the maximum age', async () => {
    const old = await unsavedSession(servers.a.baseUrl, '/work/purge')
    const fresh = await unsavedSession(servers.a.baseUrl, '/work/purge')
    const created = await call(servers.a.baseUrl, 'POST', '/v1/sessions', { cwd: '/work/purge' })
    const saved = created.body.header.id as string
    await call(servers.a.baseUrl, 'POST', `/v1/sessions/${saved}/entries`, { entries: [message(user('q')), message(assistant('a'))] })
    const client = new pg.Client({ connectionString: servers.db.url })
    await client.connect()
    try {
      await client.query('UPDATE ss_sessions SET modified = modified - 2 * 3600 * 1000 WHERE id = ANY($1)', [[old, saved]])
    } finally {
      await client.end()
    }
    const c = await servers.start({ UNSAVED_SESSION_MAX_AGE_MS: String(60 * 60 * 1000) })
    try {
      expect((await call(c.baseUrl, 'GET', `/v1/sessions/${old}`)).status).toBe(404)
      expect((await call(c.baseUrl, 'GET', `/v1/sessions/${fresh}`)).status).toBe(200)
      expect((await call(c.baseUrl, 'GET', `/v1/sessions/${saved}`)).status).toBe(200)
      expect((await call(servers.b.baseUrl, 'GET', `/v1/sessions/${old}`)).status).toBe(404)
    } finally {
      c.child.kill('SIGKILL')
      await c.exited
    }
  })

  it('an unsaved session outlives kill -9 of the server that made it', async () => {
    const id = await unsavedSession(servers.a.baseUrl, '/work/killed')
    servers.a.child.kill('SIGKILL')
    await servers.a.exited
    const onB = await call(servers.b.baseUrl, 'GET', `/v1/sessions/${id}/entries`)
    expect(onB.status).toBe(200)
    expect(onB.body.entries.map((e: { message: { content: unknown } }) => e.message.content)).toEqual(['first question'])
    const saved = await call(servers.b.baseUrl, 'POST', `/v1/sessions/${id}/entries`, message(assistant('answer')))
    expect(saved.status).toBe(201)
    expect(saved.body.persisted).toBe(true)
    expect((await call(servers.b.baseUrl, 'GET', `/v1/sessions/${id}`)).body.entryCount).toBe(2)
  })
})
