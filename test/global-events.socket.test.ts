/**
 * `GET /v1/events` over a real socket: every event carries an `id:`, a reconnect with
 * `Last-Event-ID` resumes after it without gap or repeat while the server holds it, and starts
 * with a `reset` event when it does not (API.md "Live stream (SSE)").
 */
import { storeStack } from './helpers/stack.js'
import { afterEach, describe, expect, it } from 'vitest'
import type { App } from '../src/app.js'
import { MemoryBlobStore } from '../src/blobs/index.js'
import { type StreamOptions } from '../src/registry/session-registry.js'
import { buildTestApp, testConfig } from './helpers/app.js'
import { SseClient } from './sse-client.js'

let app: App
let base: string
const clients: SseClient[] = []

async function start (streams: Partial<StreamOptions> = {}): Promise<void> {
  const blobs = new MemoryBlobStore()
  const stack = storeStack({ dataDir: testConfig().dataDir, blobs, streams })
  app = await buildTestApp({ store: stack.store, blobs, registry: stack.registry })
  app.addHook('onClose', stack.close)
  base = await app.listen({ port: 0, host: '127.0.0.1' })
}

async function subscribe (headers: Record<string, string> = {}): Promise<SseClient> {
  const client = await SseClient.connect(`${base}/v1/events`, headers)
  clients.push(client)
  expect(client.statusCode).toBe(200)
  await client.waitFor(() => client.retry === 1000)
  return client
}

async function create (cwd: string): Promise<string> {
  const res = await app.inject({ method: 'POST', url: '/v1/sessions', payload: { cwd } })
  expect(res.statusCode).toBe(201)
  return res.json().header.id as string
}

async function rename (id: string, title: string): Promise<void> {
  const res = await app.inject({ method: 'PATCH', url: `/v1/sessions/${id}`, payload: { title } })
  expect(res.statusCode).toBe(200)
}

/** `kind:id-of-session` of each event, to compare streams. */
const kinds = (client: SseClient): string[] => client.events.map((e) => `${e.event}:${e.event === 'reset' ? '' : (JSON.parse(e.data) as { id: string }).id}`)

afterEach(async () => {
  for (const c of clients.splice(0)) c.close()
  await app.close()
})

describe('GET /v1/events ids and resume', () => {
  it('gives every event a distinct id', async () => {
    await start()
    const all = await subscribe()
    const a = await create('/a')
    await rename(a, 'one')
    await app.inject({ method: 'DELETE', url: `/v1/sessions/${a}` })
    await all.waitFor(() => all.events.some((e) => e.event === 'session-deleted'))
    const ids = all.events.map((e) => e.id)
    expect(ids.every((id) => typeof id === 'string' && id.length > 0)).toBe(true)
    expect(new Set(ids).size).toBe(ids.length)
  })

  it('resumes after Last-Event-ID with exactly the events missed, none twice', async () => {
    await start()
    const first = await subscribe()
    const a = await create('/a')
    await first.waitFor(() => first.events.length === 1)
    const lastSeen = first.lastEventId as string
    first.close()

    // Missed while disconnected: one per kind.
    await rename(a, 'renamed')
    const b = await create('/b')
    await app.inject({ method: 'DELETE', url: `/v1/sessions/${b}` })

    const again = await subscribe({ 'last-event-id': lastSeen })
    await again.waitFor(() => again.events.length === 3)
    const c = await create('/c') // live after the catch-up
    await again.waitFor(() => again.events.length === 4)
    expect(kinds(again)).toEqual([`session-updated:${a}`, `session-created:${b}`, `session-deleted:${b}`, `session-created:${c}`])
    expect(JSON.parse(again.events[0]?.data as string)).toMatchObject({ id: a, title: 'renamed' })
    const ids = [lastSeen, ...again.events.map((e) => e.id)]
    expect(new Set(ids).size).toBe(ids.length)

    // Resuming from the newest id replays nothing and sends no reset.
    const newest = await subscribe({ 'last-event-id': again.lastEventId as string })
    await rename(c, 'x')
    await newest.waitFor(() => newest.events.length === 1)
    expect(kinds(newest)).toEqual([`session-updated:${c}`])
  })

  it('starts with a reset event when the id is unknown', async () => {
    await start()
    const a = await create('/a')
    for (const lastEventId of ['no-such-id', '12', 'x-999999']) {
      const client = await subscribe({ 'last-event-id': lastEventId })
      await client.waitFor(() => client.events.length === 1)
      expect(client.events[0]?.event).toBe('reset')
      expect(client.events[0]?.id).toBeTruthy()
      client.close()
    }
    // A reset carries an id that resumes: nothing is lost after it.
    const reset = await subscribe({ 'last-event-id': 'no-such-id' })
    await reset.waitFor(() => reset.events.length === 1)
    reset.close()
    await rename(a, 'after reset')
    const resumed = await subscribe({ 'last-event-id': reset.lastEventId as string })
    await resumed.waitFor(() => resumed.events.length === 1)
    expect(kinds(resumed)).toEqual([`session-updated:${a}`])
  })

  it('starts with a reset event when the id is no longer held', async () => {
    await start({ globalBacklog: 3 })
    const first = await subscribe()
    await create('/a')
    await first.waitFor(() => first.events.length === 1)
    first.close()
    for (const cwd of ['/b', '/c', '/d', '/e']) await create(cwd)
    const late = await subscribe({ 'last-event-id': first.lastEventId as string })
    await late.waitFor(() => late.events.length === 1)
    expect(late.events[0]?.event).toBe('reset')
    const e = await create('/f')
    await late.waitFor(() => late.events.length === 2)
    expect(kinds(late)).toEqual(['reset:', `session-created:${e}`])
  })

  it('starts with a reset when events went unrecorded, long after the last dashboard left', async () => {
    await start({ globalResumeWindowMs: 0 })
    const first = await subscribe()
    await create('/a')
    await first.waitFor(() => first.events.length === 1)
    first.close()
    await new Promise((resolve) => setTimeout(resolve, 200)) // the server notices the close
    await create('/b')
    const late = await subscribe({ 'last-event-id': first.lastEventId as string })
    await late.waitFor(() => late.events.length === 1)
    expect(late.events[0]?.event).toBe('reset')
  })
})
