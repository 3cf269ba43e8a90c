/**
 * The reconnecting stream against a scripted SSE server: a torn last event is not yielded, a
 * seq repeated after a reconnect is skipped, `retry:` and error answers are honoured, and a
 * first opening that keeps failing gives up after `retries`.
 */
import { once } from 'node:events'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { createClient, SessionStoreError, type SessionStoreClient, type SessionStreamEvent } from '../../src/client/index.js'

type Script = (req: IncomingMessage, res: ServerResponse, attempt: number) => void

let server: Server
let client: SessionStoreClient
const seen: IncomingMessage[] = []

async function scripted (script: Script): Promise<void> {
  seen.length = 0
  server = createServer((req, res) => {
    seen.push(req)
    script(req, res, seen.length)
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  client = createClient({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, retries: 2, retryDelayMs: 5 })
}

afterEach(async () => {
  await client.close()
  server.closeAllConnections()
  server.close()
})

const stream = (res: ServerResponse, text: string): void => {
  res.writeHead(200, { 'content-type': 'text/event-stream' })
  res.write(text)
}
/** A whole event-stream response that then ends. */
const complete = (res: ServerResponse, text: string): void => {
  stream(res, text)
  res.end()
}
const entry = (seq: number): string => `event: entry\nid: ${seq}\ndata: {"type":"custom","id":"e${seq}"}\n\n`
const problem = (res: ServerResponse, status: number, code: string): void => {
  res.writeHead(status, { 'content-type': 'application/problem+json' })
  res.end(JSON.stringify({ type: 'about:blank', title: 'x', status, code }))
}

async function all (iterator: AsyncGenerator<SessionStreamEvent>): Promise<SessionStreamEvent[]> {
  const out: SessionStreamEvent[] = []
  for await (const event of iterator) out.push(event)
  return out
}

describe('reconnecting session stream', () => {
  it('drops a torn event, resumes after the last whole one, and skips a repeated seq', async () => {
    await scripted((req, res, attempt) => {
      if (attempt === 1) {
        stream(res, 'retry: 20\n\n' + entry(1) + entry(2) + 'event: entry\nid: 3\ndata: {"type":"cus')
        setTimeout(() => { res.socket?.destroy() }, 20)
      } else {
        stream(res, entry(2) + entry(3) + 'event: leaf\ndata: {"leafId":"e1"}\n\nevent: deleted\ndata: {"id":"s"}\n\n')
      }
    })
    const events = await all(client.subscribe('s'))
    expect(events).toEqual([
      { type: 'entry', seq: 1, entry: { type: 'custom', id: 'e1' } },
      { type: 'entry', seq: 2, entry: { type: 'custom', id: 'e2' } },
      { type: 'entry', seq: 3, entry: { type: 'custom', id: 'e3' } },
      { type: 'leaf', leafId: 'e1' },
      { type: 'deleted', id: 's' },
    ])
    expect(seen.map((r) => r.headers['last-event-id'])).toEqual([undefined, '2'])
    expect(seen[0]!.headers.accept).toBe('text/event-stream')
  })

  it('reconnects after a clean end of the response and after 503 answers', async () => {
    await scripted((_req, res, attempt) => {
      if (attempt === 1) complete(res, 'retry: 10\n\n' + entry(1))
      else if (attempt < 4) problem(res, 503, 'SS_NOT_READY')
      else complete(res, entry(2) + 'event: deleted\ndata: {"id":"s"}\n\n')
    })
    const events = await all(client.subscribe('s', { after: 0 }))
    expect(events.map((e) => e.type === 'entry' ? e.seq : e.type)).toEqual([1, 2, 'deleted'])
    expect(seen.map((r) => r.headers['last-event-id'])).toEqual([undefined, '1', '1', '1'])
  })

  it('sends the starting seq as Last-Event-ID and the blob mode as a query', async () => {
    await scripted((_req, res) => { complete(res, 'event: deleted\ndata: {}\n\n') })
    expect(await all(client.subscribe('a b', { after: 7, blobs: 'ref' }))).toEqual([{ type: 'deleted', id: 'a b' }])
    expect(seen[0]!.url).toBe('/v1/sessions/a%20b/events?blobs=ref')
    expect(seen[0]!.headers['last-event-id']).toBe('7')
  })

  it('throws a non-retryable error answer at once', async () => {
    await scripted((_req, res) => { problem(res, 400, 'SS_VALIDATION') })
    await expect(all(client.subscribe('s'))).rejects.toMatchObject({ status: 400, code: 'SS_VALIDATION' })
    expect(seen).toHaveLength(1)
  })

  it('gives up opening after the configured retries', async () => {
    await scripted((_req, res) => { problem(res, 503, 'SS_NOT_READY') })
    const err = await all(client.subscribe('s')).then(() => undefined, (e: unknown) => e)
    expect(err).toBeInstanceOf(SessionStoreError)
    expect(seen).toHaveLength(3)
  })

  it('rejects an answer that is not an event stream', async () => {
    await scripted((_req, res) => { res.writeHead(200, { 'content-type': 'application/json' }).end('{}') })
    await expect(all(client.subscribe('s'))).rejects.toThrow(/did not answer an event stream/)
  })
})

describe('reconnecting global stream', () => {
  it('yields lifecycle events across a reconnect that resumes after the last id, and ignores other events', async () => {
    const info = (id: string): string => JSON.stringify({ id, cwd: '/c', created: 'x', modified: 'x', messageCount: 0, firstMessage: '', entryCount: 0 })
    await scripted((_req, res, attempt) => {
      if (attempt === 1) complete(res, `retry: 10\n\nevent: session-created\nid: b-1\ndata: ${info('a')}\n\nevent: other\ndata: {}\n\n`)
      else if (attempt === 2) complete(res, 'event: reset\nid: b-7\ndata: {}\n\n')
      else stream(res, `event: session-deleted\nid: b-8\ndata: ${info('a')}\n\n`)
    })
    const controller = new AbortController()
    const events: string[] = []
    for await (const event of client.subscribeAll({ signal: controller.signal })) {
      events.push(event.type === 'reset' ? 'reset' : `${event.type}:${event.info.id}`)
      if (events.length === 3) controller.abort()
    }
    expect(events).toEqual(['session-created:a', 'reset', 'session-deleted:a'])
    expect(seen.map((r) => r.url)).toEqual(['/v1/events', '/v1/events', '/v1/events'])
    expect(seen.map((r) => r.headers['last-event-id'])).toEqual([undefined, 'b-1', 'b-7'])
  })
})
