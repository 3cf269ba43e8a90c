/**
 * Two server processes on a PostgreSQL server that is stopped and started again under them (a
 * cluster of this file's own, test/helpers/pg-cluster.ts): while it is down they answer 503
 * with Retry-After; once it is back they serve again without a restart of their own, and the
 * streams open on B all along tell of what A appends afterwards: the session's entries in
 * order, each once, and its dashboard view.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { clusterAvailable, PgCluster } from '../../helpers/pg-cluster.js'
import { startServer, type ServerProcess } from '../../helpers/server-process.js'
import { assistant, message, user } from '../../http/session-helpers.js'
import { SseClient } from '../../sse-client.js'
import { call, type Answer } from './server-calls.js'

/** Repeats `attempt` while it answers 503 (the pool finding its connections gone), up to `ms`. */
async function untilServed (attempt: () => Promise<Answer>, ms = 30_000): Promise<Answer> {
  const deadline = Date.now() + ms
  for (;;) {
    const answer = await attempt()
    if (answer.status !== 503 || Date.now() > deadline) return answer
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

describe.runIf(clusterAvailable)('a database restart under two servers', () => {
  let cluster: PgCluster
  const servers: ServerProcess[] = []
  const dirs: string[] = []

  beforeAll(async () => {
    cluster = await PgCluster.create()
    for (let i = 0; i < 2; i++) {
      const dir = mkdtempSync(join(tmpdir(), 'ss-pg-restart-'))
      dirs.push(dir)
      servers.push(await startServer({ DATA_DIR: dir, STORAGE: 'postgres', DATABASE_URL: cluster.url }))
    }
  }, 120_000)

  afterAll(async () => {
    for (const s of servers) if (s.child.exitCode === null && s.child.signalCode === null) { s.child.kill('SIGKILL'); await s.exited }
    cluster?.destroy()
    for (const d of dirs) rmSync(d, { recursive: true, force: true })
  })

  it('answers 503 while it is down; afterwards B serves again and its open streams tell of what A appended, in order, each once', async () => {
    const [a, b] = servers as [ServerProcess, ServerProcess]
    const created = await call(a.baseUrl, 'POST', '/v1/sessions', { cwd: '/work/restart' })
    expect(created.status).toBe(201)
    const id = created.body.header.id as string
    const entries = `/v1/sessions/${id}/entries`
    expect((await call(a.baseUrl, 'POST', entries, { entries: [message(user('hello')), message(assistant('hi'))] })).status).toBe(201)
    const stream = await SseClient.connect(`${b.baseUrl}/v1/sessions/${id}/events`)
    const dashboard = await SseClient.connect(`${b.baseUrl}/v1/events`)
    try {
      await stream.waitFor(() => stream.seqs.length >= 2)

      cluster.stop()
      for (const server of [a, b]) {
        const down = await call(server.baseUrl, 'POST', entries, message(user('while down')))
        expect(down.status, JSON.stringify(down.body)).toBe(503)
        expect(down.headers['retry-after']).toBeDefined()
        expect(down.body.code).toBe('SS_DATABASE_UNAVAILABLE')
      }

      cluster.start()
      for (let i = 0; i < 3; i++) {
        const appended = await untilServed(async () => await call(a.baseUrl, 'POST', entries, message(user(`after ${i}`))))
        expect(appended.status).toBe(201)
        expect(appended.body.persisted).toBe(true)
      }
      await stream.waitFor(() => stream.seqs.length >= 5, 30_000)
      expect(stream.seqs).toEqual([1, 2, 3, 4, 5])
      // B's dashboard stream stayed open too, and is told of A's appends.
      const counts = (): number[] => dashboard.events.map((e) => JSON.parse(e.data) as { id: string, messageCount: number })
        .filter((info) => info.id === id).map((info) => info.messageCount)
      await dashboard.waitFor(() => counts().includes(5), 30_000)

      // B serves reads and writes again, and a stream resumed on it starts after its Last-Event-ID.
      const listed = await untilServed(async () => await call(b.baseUrl, 'GET', `${entries}?limit=100`))
      const text = (content: string | Array<{ text: string }>): string => typeof content === 'string' ? content : content.map((c) => c.text).join('')
      expect(listed.body.entries.map((e: { message: { content: string | Array<{ text: string }> } }) => text(e.message.content)))
        .toEqual(['hello', 'hi', 'after 0', 'after 1', 'after 2'])
      expect((await call(b.baseUrl, 'POST', entries, message(user('B again')))).status).toBe(201)
      const resumed = await SseClient.connect(`${b.baseUrl}/v1/sessions/${id}/events`, { 'last-event-id': '3' })
      try {
        await resumed.waitFor(() => resumed.seqs.length >= 3)
        expect(resumed.seqs).toEqual([4, 5, 6])
      } finally {
        resumed.close()
      }
      await stream.waitFor(() => stream.seqs.length >= 6)
      expect(stream.seqs).toEqual([1, 2, 3, 4, 5, 6])
    } finally {
      stream.close()
      dashboard.close()
    }
  }, 120_000)
})
