/**
 * `subscribe`: every entry, then live appends, leaf and session events, ending after
 * `deleted`; and across drops — a socket cut between events, a cut inside an event, a server
 * restart on the same DATA_DIR — every seq exactly once, in order.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { createClient, SessionStoreError, type SessionStoreClient, type SessionStreamEvent } from '../../src/client/index.js'
import { FaultProxy } from './fault-proxy.js'
import { assistant, listenTestServer, tempDataDir, until, user, type TestServer } from './helpers.js'

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

async function serve (options: { dataDir?: string, port?: number } = {}): Promise<TestServer> {
  const server = await listenTestServer(options)
  cleanups.push(async () => { await server.close() })
  return server
}

function clientOf (baseUrl: string): SessionStoreClient {
  const client = createClient({ baseUrl, retryDelayMs: 5 })
  cleanups.push(async () => { await client.close() })
  return client
}

/** Reads a subscription in the background; `events` fills as they arrive. */
function collect (iterator: AsyncGenerator<SessionStreamEvent>): { events: SessionStreamEvent[], done: Promise<void>, seqs: () => number[] } {
  const events: SessionStreamEvent[] = []
  const done = (async () => { for await (const event of iterator) events.push(event) })()
  const seqs = (): number[] => events.flatMap((e) => (e.type === 'entry' ? [e.seq] : []))
  return { events, done, seqs }
}

const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i)

async function appendCustom (client: SessionStoreClient, id: string, n: number): Promise<string[]> {
  const result = await client.append(id, Array.from({ length: n }, (_, i) => ({ type: 'custom' as const, customType: `c${i}` })))
  return result.entries.map((e) => e.id)
}

describe('subscribe', () => {
  it('yields every entry, live appends, leaf and session events, and ends after deleted', async () => {
    const server = await serve()
    const client = clientOf(server.baseUrl)
    const id = (await client.createSession({ cwd: '/work/s' })).header.id
    const first = await appendCustom(client, id, 2)
    const sub = collect(client.subscribe(id))
    await until(() => sub.seqs().length === 2)
    const live = await appendCustom(client, id, 1)
    await until(() => sub.seqs().length === 3)
    await client.setLeaf(id, first[0]!)
    await client.renameSession(id, 'Renamed')
    await until(() => sub.events.length === 5)
    await client.deleteSession(id)
    await sub.done
    expect(sub.events).toEqual([
      { type: 'entry', seq: 1, entry: expect.objectContaining({ id: first[0] }) },
      { type: 'entry', seq: 2, entry: expect.objectContaining({ id: first[1] }) },
      { type: 'entry', seq: 3, entry: expect.objectContaining({ id: live[0] }) },
      { type: 'leaf', leafId: first[0] },
      { type: 'session', session: expect.objectContaining({ header: expect.objectContaining({ title: 'Renamed' }) }) },
      { type: 'deleted', id },
    ])
  })

  it('starts after a given seq', async () => {
    const server = await serve()
    const client = clientOf(server.baseUrl)
    const id = (await client.createSession({ cwd: '/work/s' })).header.id
    await appendCustom(client, id, 4)
    const controller = new AbortController()
    const sub = collect(client.subscribe(id, { after: 2, signal: controller.signal }))
    await until(() => sub.seqs().length === 2)
    controller.abort()
    await sub.done
    expect(sub.seqs()).toEqual([3, 4])
  })

  it('rejects an unknown session with SessionStoreError 404', async () => {
    const client = clientOf((await serve()).baseUrl)
    const iterator = client.subscribe('nope')
    await expect(iterator.next()).rejects.toSatisfy((err) => err instanceof SessionStoreError && err.code === 'SS_SESSION_NOT_FOUND')
  })

  it('ends without an error when the signal aborts, and when the consumer breaks', async () => {
    const server = await serve()
    const client = clientOf(server.baseUrl)
    const id = (await client.createSession({ cwd: '/work/s' })).header.id
    await appendCustom(client, id, 3)
    const events = client.subscribe(id)[Symbol.asyncIterator]()
    const first = await events.next()
    await events.return?.(undefined)
    expect(first.value).toMatchObject({ type: 'entry', seq: 1 })
    const controller = new AbortController()
    const sub = collect(client.subscribe(id, { signal: controller.signal }))
    await until(() => sub.seqs().length === 3)
    controller.abort()
    await expect(sub.done).resolves.toBeUndefined()
  })

  it('ends without an error when the client closes', async () => {
    const server = await serve()
    const writer = clientOf(server.baseUrl)
    const reader = createClient({ baseUrl: server.baseUrl })
    const id = (await writer.createSession({ cwd: '/work/s' })).header.id
    await appendCustom(writer, id, 2)
    const sub = collect(reader.subscribe(id))
    await until(() => sub.seqs().length === 2)
    await reader.close()
    await expect(sub.done).resolves.toBeUndefined()
    expect(sub.seqs()).toEqual([1, 2])
  })
})

describe('subscribe across drops', () => {
  it('resumes after the socket is cut between events: appends before, during and after, each seq once', async () => {
    const server = await serve()
    const proxy = await FaultProxy.start(server.baseUrl)
    cleanups.push(async () => { await proxy.close() })
    const writer = clientOf(server.baseUrl)
    const reader = clientOf(proxy.baseUrl)
    const id = (await writer.createSession({ cwd: '/work/d' })).header.id
    const ids = await appendCustom(writer, id, 3)
    const sub = collect(reader.subscribe(id))
    await until(() => sub.seqs().length === 3)
    expect(proxy.cutStreams()).toBe(1)
    ids.push(...await appendCustom(writer, id, 3))
    await until(() => sub.seqs().length === 6, 15_000, 'the entries appended during the drop')
    ids.push(...await appendCustom(writer, id, 3))
    await until(() => sub.seqs().length === 9)
    await writer.deleteSession(id)
    await sub.done
    expect(sub.seqs()).toEqual(range(1, 9))
    expect(sub.events.flatMap((e) => (e.type === 'entry' ? [e.entry.id] : []))).toEqual(ids)
    const streams = proxy.requests('GET', `/v1/sessions/${id}/events`)
    expect(streams.map((r) => r.headers['last-event-id'])).toEqual([undefined, '3'])
  })

  it('resumes after cuts inside events, with no loss and no duplicate', async () => {
    const server = await serve()
    const proxy = await FaultProxy.start(server.baseUrl)
    cleanups.push(async () => { await proxy.close() })
    const writer = clientOf(server.baseUrl)
    const reader = clientOf(proxy.baseUrl)
    const id = (await writer.createSession({ cwd: '/work/d' })).header.id
    await appendCustom(writer, id, 30)
    const isStream = (r: { url: string }): boolean => r.url.startsWith(`/v1/sessions/${id}/events`)
    for (const bytes of [700, 1100, 900]) proxy.inject(isStream, { cutAfterBytes: bytes })
    const sub = collect(reader.subscribe(id))
    await until(() => sub.seqs().length === 30, 20_000, 'all 30 entries')
    await writer.deleteSession(id)
    await sub.done
    expect(sub.seqs()).toEqual(range(1, 30))
    const resumedAt = proxy.requests('GET', `/v1/sessions/${id}/events`).map((r) => r.headers['last-event-id'])
    expect(resumedAt).toHaveLength(4)
    expect(resumedAt[0]).toBeUndefined()
    expect(resumedAt.slice(1).map(Number)).toEqual([...resumedAt.slice(1).map(Number)].sort((a, b) => a - b))
  })

  it('survives a server restart on the same DATA_DIR', async () => {
    const data = tempDataDir()
    cleanups.push(data.remove)
    let server = await listenTestServer({ dataDir: data.dir })
    const reader = clientOf(server.baseUrl)
    const writer = clientOf(server.baseUrl)
    const id = (await writer.createSession({ cwd: '/work/restart' })).header.id
    await writer.append(id, [{ type: 'message', message: user('before') }, { type: 'message', message: assistant('persisted') }])
    const sub = collect(reader.subscribe(id))
    await until(() => sub.seqs().length === 2)
    await server.close()
    server = await serve({ dataDir: data.dir, port: server.port })
    await appendCustom(writer, id, 3) // while the reader waits to reconnect
    await until(() => sub.seqs().length === 5, 15_000, 'the entries appended across the restart')
    await appendCustom(writer, id, 2)
    await until(() => sub.seqs().length === 7)
    await writer.deleteSession(id)
    await sub.done
    expect(sub.seqs()).toEqual(range(1, 7))
  })

  it('ends with deleted when the session was deleted while disconnected', async () => {
    const server = await serve()
    const proxy = await FaultProxy.start(server.baseUrl)
    cleanups.push(async () => { await proxy.close() })
    const writer = clientOf(server.baseUrl)
    const id = (await writer.createSession({ cwd: '/work/d' })).header.id
    await appendCustom(writer, id, 1)
    const sub = collect(clientOf(proxy.baseUrl).subscribe(id))
    await until(() => sub.seqs().length === 1)
    proxy.cutStreams()
    await writer.deleteSession(id)
    await sub.done
    expect(sub.events.at(-1)).toEqual({ type: 'deleted', id })
  })
})
