/**
 * The live streams over a real socket (inject cannot follow a stream): resume without gap or
 * duplicate, many subscribers, a slow subscriber cut off with bounded server memory, leaf /
 * session / deleted events, heartbeats, the dashboard stream and shutdown.
 */
import { storeStack } from './helpers/stack.js'
import { mkdtempSync, rmSync } from 'node:fs'
import { connect, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { runInNewContext } from 'node:vm'
import { setFlagsFromString } from 'node:v8'
import { Agent } from 'undici'
import { afterEach, describe, expect, it } from 'vitest'
import type { App } from '../src/app.js'
import { MemoryBlobStore } from '../src/blobs/index.js'
import { type SessionRegistry, type StreamOptions } from '../src/registry/session-registry.js'
import { buildTestApp, testConfig } from './helpers/app.js'
import { waitUntil } from './helpers/wait.js'
import { append, assistant, message, persistedSession, user } from './http/session-helpers.js'
import { SseClient } from './sse-client.js'

let app: App
let registry: SessionRegistry
let base: string
const clients: SseClient[] = []

async function start (streams: Partial<StreamOptions> = {}): Promise<void> {
  const blobs = new MemoryBlobStore()
  const stack = storeStack({ dataDir: testConfig().dataDir, blobs, streams })
  registry = stack.registry
  app = await buildTestApp({ store: stack.store, blobs, registry })
  app.addHook('onClose', stack.close)
  base = await app.listen({ port: 0, host: '127.0.0.1' })
}

async function subscribe (path: string, headers: Record<string, string> = {}): Promise<SseClient> {
  const client = await SseClient.connect(`${base}${path}`, headers)
  clients.push(client)
  return client
}

setFlagsFromString('--expose-gc')
const collectGarbage = runInNewContext('gc') as () => void

const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i)

afterEach(async () => {
  for (const c of clients.splice(0)) c.close()
  await app.close()
})

describe('GET /v1/sessions/{id}/events', () => {
  it('sends retry first, then every entry in seq order, then live appends', async () => {
    await start()
    const { session } = await persistedSession(app)
    const sse = await subscribe(`/v1/sessions/${session.header.id}/events`)
    expect(sse.statusCode).toBe(200)
    expect(sse.headers['content-type']).toMatch(/^text\/event-stream/)
    await sse.waitFor(() => sse.seqs.length === 2)
    expect(sse.retry).toBe(1000)
    const live = await append(app, session.header.id, { entries: [message(user('a')), message(assistant('b'))] })
    await sse.waitFor(() => sse.seqs.length === 4)
    expect(sse.seqs).toEqual([1, 2, 3, 4])
    expect(JSON.parse(sse.events[3]?.data as string)).toEqual(live.entries[1])
  })

  it('resumes after a disconnect with Last-Event-ID: no gap, no duplicate', async () => {
    await start()
    const { session } = await persistedSession(app)
    const id = session.header.id
    const first = await subscribe(`/v1/sessions/${id}/events`)
    await append(app, id, { entries: [message(user('1')), message(user('2'))] })
    await first.waitFor(() => first.seqs.length === 4)
    first.close()
    await first.waitFor(() => registry.streamCount === 0) // the server noticed and unsubscribed
    for (let i = 0; i < 5; i++) await append(app, id, message(user(`gap ${i}`)))
    const second = await subscribe(`/v1/sessions/${id}/events`, { 'last-event-id': first.lastEventId as string })
    await append(app, id, message(user('after reconnect')))
    await second.waitFor(() => second.seqs.length === 6)
    expect([...first.seqs, ...second.seqs]).toEqual(range(1, 10))
    const texts = second.events.map((e) => JSON.parse(e.data).message.content)
    expect(texts).toEqual(['gap 0', 'gap 1', 'gap 2', 'gap 3', 'gap 4', 'after reconnect'])
  })

  it('starts after ?after=, and Last-Event-ID wins over it', async () => {
    await start()
    const { session } = await persistedSession(app)
    await append(app, session.header.id, { entries: [message(user('3')), message(user('4'))] })
    const query = await subscribe(`/v1/sessions/${session.header.id}/events?after=2`)
    await query.waitFor(() => query.seqs.length === 2)
    expect(query.seqs).toEqual([3, 4])
    const both = await subscribe(`/v1/sessions/${session.header.id}/events?after=1`, { 'last-event-id': '3' })
    await both.waitFor(() => both.seqs.length === 1)
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(both.seqs).toEqual([4])
  })

  it('feeds 50 concurrent subscribers every entry once, in order', async () => {
    await start()
    const { session } = await persistedSession(app)
    const subs = await Promise.all(Array.from({ length: 50 }, async () => await subscribe(`/v1/sessions/${session.header.id}/events`)))
    await Promise.all(Array.from({ length: 10 }, async (_, w) => {
      for (let i = 0; i < 5; i++) await append(app, session.header.id, { entries: [message(user(`${w}.${i}`)), message(user('x'))] })
    }))
    await Promise.all(subs.map(async (s) => { await s.waitFor(() => s.seqs.length >= 102) }))
    for (const s of subs) expect(s.seqs).toEqual(range(1, 102))
  })

  it('sends leaf and session events, and ends the stream after deleted', async () => {
    await start()
    const { session, ids } = await persistedSession(app)
    const id = session.header.id
    const sse = await subscribe(`/v1/sessions/${id}/events`)
    await sse.waitFor(() => sse.seqs.length === 2)
    await app.inject({ method: 'PUT', url: `/v1/sessions/${id}/leaf`, payload: { leafId: ids[0] } })
    await sse.waitFor(() => sse.events.some((e) => e.event === 'leaf'))
    expect(JSON.parse(sse.events.find((e) => e.event === 'leaf')?.data as string)).toEqual({ leafId: ids[0] })
    await app.inject({ method: 'PATCH', url: `/v1/sessions/${id}`, payload: { title: 'Live' } })
    await sse.waitFor(() => sse.events.some((e) => e.event === 'session'))
    expect(JSON.parse(sse.events.find((e) => e.event === 'session')?.data as string)).toMatchObject({ header: { id, title: 'Live' } })
    expect((await app.inject({ method: 'DELETE', url: `/v1/sessions/${id}` })).statusCode).toBe(204)
    await sse.waitFor(() => sse.ended)
    expect(sse.events.at(-1)).toMatchObject({ event: 'deleted', data: JSON.stringify({ id }) })
    expect(sse.lastEventId).toBe('2')
  })

  it('delivers one event larger than the backlog limit to a subscriber that keeps up', async () => {
    await start({ maxBufferedBytes: 16 * 1024 })
    const { session } = await persistedSession(app)
    const big = 'b'.repeat(2 * 1024 * 1024)
    await append(app, session.header.id, { entries: [message(user(big)), message(user('after'))] })
    const sse = await subscribe(`/v1/sessions/${session.header.id}/events`)
    await sse.waitFor(() => sse.seqs.length === 4)
    expect(JSON.parse(sse.events[2]?.data as string).message.content).toBe(big)
    expect(registry.streamCount).toBe(1)
  })

  it('sends a ping comment while idle', async () => {
    await start({ heartbeatMs: 50 })
    const { session } = await persistedSession(app)
    const sse = await subscribe(`/v1/sessions/${session.header.id}/events`)
    await sse.waitFor(() => sse.comments.filter((c) => c === 'ping').length >= 2, 2000)
  })

  it('answers 404 for an unknown session and 400 for a bad Last-Event-ID, as problems', async () => {
    await start()
    const missing = await subscribe('/v1/sessions/nope/events')
    expect(missing.statusCode).toBe(404)
    expect(missing.headers['content-type']).toMatch(/^application\/problem\+json/)
    const { session } = await persistedSession(app)
    const bad = await subscribe(`/v1/sessions/${session.header.id}/events`, { 'last-event-id': 'abc' })
    expect(bad.statusCode).toBe(400)
  })

  it('ends every stream when the app closes', async () => {
    await start()
    const { session } = await persistedSession(app)
    const sse = await subscribe(`/v1/sessions/${session.header.id}/events`)
    const all = await subscribe('/v1/events')
    await sse.waitFor(() => sse.seqs.length === 2)
    await app.close()
    await sse.waitFor(() => sse.ended)
    await all.waitFor(() => all.ended)
    expect(registry.streamCount).toBe(0)
    app = await buildTestApp() // for afterEach
  })
})

describe('a slow subscriber', () => {
  // Over a Unix socket the kernel buffers little (TCP on loopback can absorb tens of MB before
  // the server sees any backpressure), so the server's own backlog handling is what is tested.
  let socketPath = ''
  let agent: Agent | undefined
  afterEach(async () => {
    await agent?.destroy()
    rmSync(dirname(socketPath), { recursive: true, force: true })
  })

  /** Sends the request and never reads: the server's writes back up. */
  async function stalledClient (path: string): Promise<Socket> {
    const socket = connect(socketPath)
    await new Promise<void>((resolve) => socket.once('connect', resolve))
    socket.write(`GET ${path} HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n\r\n`)
    socket.pause()
    return socket
  }

  /** Heap plus buffers after a full collection. */
  const memory = (): number => {
    collectGarbage()
    const m = process.memoryUsage()
    return m.heapUsed + m.external + m.arrayBuffers
  }

  it('is disconnected while server memory stays flat, and resumes without loss', async () => {
    const blobs = new MemoryBlobStore()
    const stack = storeStack({ dataDir: testConfig().dataDir, blobs, streams: { maxBufferedBytes: 256 * 1024, drainTimeoutMs: 200 } })
    registry = stack.registry
    app = await buildTestApp({ store: stack.store, blobs, registry })
    app.addHook('onClose', stack.close)
    socketPath = join(mkdtempSync(join(tmpdir(), 'ss-sse-')), 'server.sock')
    await app.listen({ path: socketPath })
    agent = new Agent({ connect: { socketPath } })
    const { session } = await persistedSession(app)
    const id = session.header.id
    const filler = 'z'.repeat(20_000)
    for (let i = 0; i < 10; i++) await append(app, id, { entries: Array.from({ length: 100 }, () => message(user(filler))) })
    const total = 2 + 1000 // about 20 MB of events
    const url = `http://localhost/v1/sessions/${id}/events`
    const sockets = new Set<Socket>()
    app.server.on('connection', (socket: Socket) => { sockets.add(socket) })
    const before = memory()
    const slow = await stalledClient(`/v1/sessions/${id}/events`)
    await waitUntil(() => registry.streamCount === 1, 'the stalled subscriber to be registered', 5000)
    let backlog = 0
    const sampler = setInterval(() => {
      for (const socket of sockets) backlog = Math.max(backlog, socket.writableLength)
    }, 2)
    await waitUntil(() => registry.streamCount === 0, 'the stalled subscriber to be cut off', 10_000)
    clearInterval(sampler)
    expect(registry.streamCount).toBe(0) // cut off
    expect(backlog).toBeGreaterThan(0)
    expect(backlog).toBeLessThan(256 * 1024 + 64 * 1024)
    expect(memory() - before).toBeLessThan(4 * 1024 * 1024)

    // A reader that keeps up gets everything after `after`; one that a busy machine holds back
    // past the drain timeout is cut off too, and resumes from its last event as any client does.
    const readFrom = async (after: number): Promise<number[]> => {
      const seen: number[] = []
      for (let tries = 0; after + seen.length < total && tries < 10; tries++) {
        const last = seen.at(-1) ?? after
        const reader = await SseClient.connect(url, last === 0 ? {} : { 'last-event-id': String(last) }, agent)
        clients.push(reader)
        await reader.waitFor(() => reader.ended || after + seen.length + reader.seqs.length === total, 20_000)
        seen.push(...reader.seqs)
      }
      return seen
    }
    expect(await readFrom(0)).toEqual(range(1, total))

    // The cut-off subscriber reads what reached it, then resumes from its last complete event.
    let text = ''
    slow.setEncoding('utf8')
    slow.on('data', (chunk: string) => { text += chunk })
    const closed = new Promise<void>((resolve) => slow.once('close', () => { resolve() }))
    slow.resume()
    await closed
    const complete = text.slice(0, text.lastIndexOf('\n\n') + 2)
    const received = [...complete.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]))
    const last = received.at(-1) ?? 0
    expect(received).toEqual(range(1, last))
    expect(last).toBeLessThan(total)
    expect([...received, ...await readFrom(last)]).toEqual(range(1, total))
  }, 60_000)
})

describe('GET /v1/events', () => {
  it('streams session-created, session-updated and session-deleted with a SessionInfo', async () => {
    await start()
    const all = await subscribe('/v1/events')
    expect(all.statusCode).toBe(200)
    await all.waitFor(() => all.retry === 1000)
    const { session } = await persistedSession(app, '/dash')
    const id = session.header.id
    await app.inject({ method: 'DELETE', url: `/v1/sessions/${id}` })
    await all.waitFor(() => all.events.some((e) => e.event === 'session-deleted'))
    const kinds = all.events.map((e) => e.event)
    expect(kinds[0]).toBe('session-created')
    expect(kinds).toContain('session-updated')
    expect(kinds.at(-1)).toBe('session-deleted')
    expect(JSON.parse(all.events[0]?.data as string)).toMatchObject({ id, cwd: '/dash', messageCount: 0 })
    const updated = all.events.filter((e) => e.event === 'session-updated').map((e) => JSON.parse(e.data))
    expect(updated.at(-1)).toMatchObject({ id, messageCount: 2, firstMessage: 'hello' })
    expect(all.events.every((e) => typeof e.id === 'string' && e.id !== '')).toBe(true)
  })
})
