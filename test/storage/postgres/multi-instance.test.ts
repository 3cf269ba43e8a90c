/**
 * Two server processes on one database (STORAGE=postgres), the way replicas behind a load
 * balancer run: whatever one of them writes, the other serves at once, streams live, and
 * refuses writes based on what it no longer holds. Server B reaches the database through a TCP
 * proxy, so that the database can be taken away from it and given back.
 */
import { describe, expect, it } from 'vitest'
import { pgAvailable } from '../../helpers/pg.js'
import { assistant, message, user } from '../../http/session-helpers.js'
import { SseClient } from '../../sse-client.js'
import { call } from './server-calls.js'
import { useTwoServers } from './two-servers.js'

/** A saved session made on `base`: a user and an assistant message. */
async function savedSession (base: string, cwd = '/work/p'): Promise<string> {
  const created = await call(base, 'POST', '/v1/sessions', { cwd })
  expect(created.status).toBe(201)
  const id = created.body.header.id as string
  expect((await call(base, 'POST', `/v1/sessions/${id}/entries`, { entries: [message(user('hello')), message(assistant('hi'))] })).status).toBe(201)
  return id
}

async function entriesOf (base: string, id: string): Promise<Array<{ id: string, parentId: string | null, message?: { content: unknown } }>> {
  const res = await call(base, 'GET', `/v1/sessions/${id}/entries?limit=1000`)
  expect(res.status).toBe(200)
  return res.body.entries
}

/** Every entry's parent is the entry before it (appends that attach to the leaf make a chain). */
function expectChain (entries: Array<{ id: string, parentId: string | null }>): void {
  entries.forEach((e, i) => { expect(e.parentId).toBe(i === 0 ? null : entries[i - 1]?.id) })
}

describe.runIf(pgAvailable)('two servers on one database', () => {
  const servers = useTwoServers({ proxied: 'b' })

  it('an append on A reaches a subscriber on B, in order', async () => {
    const id = await savedSession(servers.a.baseUrl)
    const stream = await SseClient.connect(`${servers.b.baseUrl}/v1/sessions/${id}/events`)
    try {
      expect(stream.statusCode).toBe(200)
      for (let i = 0; i < 10; i++) expect((await call(servers.a.baseUrl, 'POST', `/v1/sessions/${id}/entries`, message(user(`m${i}`)))).status).toBe(201)
      await stream.waitFor(() => stream.seqs.length >= 12)
      expect(stream.seqs).toEqual(Array.from({ length: 12 }, (_, i) => i + 1))
    } finally {
      stream.close()
    }
  })

  it('lists and looks up on B the sessions A made, and an etag of one server holds on the other', async () => {
    const id = await savedSession(servers.a.baseUrl, '/work/listed')
    const listed = await call(servers.b.baseUrl, 'GET', `/v1/sessions?cwd=${encodeURIComponent('/work/listed')}`)
    expect(listed.body.sessions.map((s: { id: string }) => s.id)).toEqual([id])
    const onA = await call(servers.a.baseUrl, 'GET', `/v1/sessions/${id}`)
    const onB = await call(servers.b.baseUrl, 'GET', `/v1/sessions/${id}`)
    expect(onB.status).toBe(200)
    expect(onB.body.entryCount).toBe(2)
    expect(onB.etag).toBe(onA.etag)
    expect((await call(servers.b.baseUrl, 'POST', `/v1/sessions/${id}/entries`, message(user('from B')), { 'if-match': onA.etag as string })).status).toBe(201)
  })

  it('a stale If-Match on B after a write on A gets 412', async () => {
    const id = await savedSession(servers.a.baseUrl)
    const seen = await call(servers.b.baseUrl, 'GET', `/v1/sessions/${id}`)
    expect((await call(servers.a.baseUrl, 'POST', `/v1/sessions/${id}/entries`, message(user('on A')))).status).toBe(201)
    const stale = await call(servers.b.baseUrl, 'POST', `/v1/sessions/${id}/entries`, message(user('on B')), { 'if-match': seen.etag as string })
    expect(stale.status).toBe(412)
    expect((await entriesOf(servers.b.baseUrl, id)).length).toBe(3)
  })

  it('20 writers split across A and B give one entry each, contiguous and chained', async () => {
    const id = await savedSession(servers.a.baseUrl)
    await call(servers.b.baseUrl, 'GET', `/v1/sessions/${id}`) // both servers hold the session open
    const answers = await Promise.all(Array.from({ length: 20 }, async (_, i) =>
      await call(i % 2 === 0 ? servers.a.baseUrl : servers.b.baseUrl, 'POST', `/v1/sessions/${id}/entries`, message(user(`writer ${i}`)))))
    expect(answers.map((r) => r.status)).toEqual(Array(20).fill(201))
    for (const base of [servers.a.baseUrl, servers.b.baseUrl]) {
      const entries = await entriesOf(base, id)
      expect(entries).toHaveLength(22)
      expectChain(entries)
      const texts = entries.slice(2).map((e) => e.message?.content).sort()
      expect(texts).toEqual(Array.from({ length: 20 }, (_, i) => `writer ${i}`).sort())
    }
  })

  it('leaf moves, titles, moves and deletes on A are what B serves', async () => {
    const id = await savedSession(servers.a.baseUrl)
    const [first] = await entriesOf(servers.a.baseUrl, id)
    await call(servers.b.baseUrl, 'GET', `/v1/sessions/${id}`)
    const moved = await call(servers.a.baseUrl, 'PUT', `/v1/sessions/${id}/leaf`, { leafId: first?.id, durable: true })
    expect(moved.status).toBe(200)
    expect((await call(servers.b.baseUrl, 'GET', `/v1/sessions/${id}`)).body.leafId).toBe(moved.body.leafId)
    expect((await call(servers.a.baseUrl, 'PATCH', `/v1/sessions/${id}`, { title: 'Renamed on A' })).status).toBe(200)
    const titled = await call(servers.b.baseUrl, 'GET', `/v1/sessions/${id}`)
    expect(titled.body.header.title).toBe('Renamed on A')
    expect(titled.etag).toBe((await call(servers.a.baseUrl, 'GET', `/v1/sessions/${id}`)).etag)
    expect((await call(servers.a.baseUrl, 'POST', `/v1/sessions/${id}/move`, { cwd: '/work/elsewhere' })).status).toBe(200)
    expect((await call(servers.b.baseUrl, 'GET', `/v1/sessions/${id}`)).body.header.cwd).toBe('/work/elsewhere')
    expect((await call(servers.b.baseUrl, 'POST', `/v1/sessions/${id}/entries`, message(user('after the move')))).status).toBe(201)
    expect((await call(servers.a.baseUrl, 'DELETE', `/v1/sessions/${id}`)).status).toBe(204)
    expect((await call(servers.b.baseUrl, 'GET', `/v1/sessions/${id}`)).status).toBe(404)
  })

  it("B's streams resume after its database connection is cut and restored", async () => {
    const id = await savedSession(servers.a.baseUrl)
    const stream = await SseClient.connect(`${servers.b.baseUrl}/v1/sessions/${id}/events`)
    try {
      await stream.waitFor(() => stream.seqs.length >= 2)
      servers.proxy.cut()
      for (let i = 0; i < 3; i++) expect((await call(servers.a.baseUrl, 'POST', `/v1/sessions/${id}/entries`, message(user(`cut ${i}`)))).status).toBe(201)
      expect((await call(servers.b.baseUrl, 'GET', `/v1/sessions/${id}/entries`)).status).toBe(503)
      servers.proxy.restore()
      await stream.waitFor(() => stream.seqs.length >= 5, 20_000)
      expect(stream.seqs).toEqual([1, 2, 3, 4, 5])
      expect((await call(servers.b.baseUrl, 'POST', `/v1/sessions/${id}/entries`, message(user('B again')))).status).toBe(201)
    } finally {
      servers.proxy.restore()
      stream.close()
    }
  })

  it('kill -9 of A under load loses no acknowledged entry, and B keeps serving', async () => {
    const id = await savedSession(servers.a.baseUrl)
    const acked: string[] = []
    const load = { stop: false }
    const writer = async (base: string, name: string): Promise<void> => {
      for (let i = 0; !load.stop; i++) {
        const text = `${name} ${i}`
        try {
          const res = await call(base, 'POST', `/v1/sessions/${id}/entries`, message(user(text)))
          if (res.status === 201) acked.push(text)
        } catch {
          if (base === servers.a.baseUrl) return // A is gone
        }
      }
    }
    const writers = [0, 1, 2, 3].map((n) => writer(n % 2 === 0 ? servers.a.baseUrl : servers.b.baseUrl, `w${n}`))
    while (acked.length < 40) await new Promise((resolve) => setTimeout(resolve, 10))
    servers.a.child.kill('SIGKILL')
    await servers.a.exited
    const ackedBefore = acked.length
    while (acked.length < ackedBefore + 10) await new Promise((resolve) => setTimeout(resolve, 10))
    load.stop = true
    await Promise.all(writers)
    const entries = await entriesOf(servers.b.baseUrl, id)
    const stored = new Set(entries.map((e) => e.message?.content))
    for (const text of acked) expect(stored.has(text), text).toBe(true)
    expectChain(entries)
  })
})
