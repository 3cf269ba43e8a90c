/**
 * The limits of a shared server: per-token rate limits (429 + Retry-After), the cap on live
 * streams per token (429 on the N+1th, a slot freed when one closes), the batch cap (413), the
 * body limit on every kind of body, and load shedding (503) while the event loop lags.
 */
import { createHash } from 'node:crypto'
import { Agent, request } from 'undici'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { App } from '../../src/app.js'
import type { Config } from '../../src/config.js'
import { buildTestApp } from '../helpers/app.js'
import { bearer, tokenFixture, type TokenFixture } from '../helpers/tokens.js'
import { problemOf } from '../helpers/problem.js'

let fx: TokenFixture
let agent: Agent
const apps: App[] = []
beforeEach(async () => {
  fx = await tokenFixture()
  agent = new Agent()
})
afterEach(async () => {
  await agent.destroy() // its idle sockets would keep the server from closing
  for (const app of apps.splice(0)) await app.close()
  fx.cleanup()
})

async function authApp (config: Partial<Config>): Promise<App> {
  const app = await buildTestApp({ tokens: await fx.load(), config })
  apps.push(app)
  return app
}

const get = async (app: App, url: string, headers: Record<string, string> = {}) => await app.inject({ method: 'GET', url, headers })

describe('rate limit (RATE_LIMIT_MAX per RATE_LIMIT_WINDOW_MS)', () => {
  it('answers 429 SS_RATE_LIMITED with Retry-After once a token used up its window; other tokens go on', async () => {
    const app = await authApp({ rateLimitMax: 3, rateLimitWindowMs: 60_000 })
    for (let i = 0; i < 3; i++) expect((await get(app, '/v1/sessions', bearer(fx.secrets.read))).statusCode).toBe(200)
    const limited = await get(app, '/v1/sessions', bearer(fx.secrets.read))
    expect(limited.statusCode).toBe(429)
    expect(limited.headers['content-type']).toMatch(/^application\/problem\+json/)
    expect(limited.json()).toMatchObject({ status: 429, code: 'SS_RATE_LIMITED' })
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0)
    // The limit is per token: the same tenant's write token has its own budget.
    expect((await get(app, '/v1/sessions', bearer(fx.secrets.write))).statusCode).toBe(200)
    // Public routes are not counted.
    for (let i = 0; i < 5; i++) expect((await get(app, '/healthz', bearer(fx.secrets.read))).statusCode).toBe(200)
  })

  it('counts requests without a valid token by client IP, so guessing tokens is limited too', async () => {
    const app = await authApp({ rateLimitMax: 2 })
    expect(problemOf(await get(app, '/v1/sessions'))).toEqual({ status: 401, code: 'SS_UNAUTHENTICATED' })
    expect(problemOf(await get(app, '/v1/sessions', bearer('sst_guess')))).toEqual({ status: 401, code: 'SS_UNAUTHENTICATED' })
    const limited = await get(app, '/v1/sessions', bearer('sst_guess-again'))
    expect([limited.statusCode, limited.json().code]).toEqual([429, 'SS_RATE_LIMITED'])
    expect((await get(app, '/v1/sessions', bearer(fx.secrets.read))).statusCode).toBe(200)
  })

  it('is off by default in open mode, and keyed by IP there when configured', async () => {
    const open = await buildTestApp()
    apps.push(open)
    for (let i = 0; i < 20; i++) expect((await get(open, '/v1/sessions')).statusCode).toBe(200)
    const limitedOpen = await buildTestApp({ config: { rateLimitMax: 1 } })
    apps.push(limitedOpen)
    expect((await get(limitedOpen, '/v1/sessions')).statusCode).toBe(200)
    expect(problemOf(await get(limitedOpen, '/v1/sessions'))).toEqual({ status: 429, code: 'SS_RATE_LIMITED' })
  })
})

/** Opens a stream and resolves once its head arrived. */
async function openStream (base: string, url: string, headers: Record<string, string> = {}) {
  return await request(`${base}${url}`, { headers, dispatcher: agent })
}

describe('live streams per token (MAX_SSE_PER_TOKEN)', () => {
  it('refuses the N+1th stream with 429 SS_TOO_MANY_STREAMS and admits a new one after one closes', async () => {
    const app = await authApp({ maxSsePerToken: 2 })
    const base = await app.listen({ port: 0, host: '127.0.0.1' })
    await app.inject({ method: 'POST', url: '/v1/sessions', headers: bearer(fx.secrets.admin), payload: { cwd: '/s', id: 'capped' } })
    const first = await openStream(base, '/v1/events', bearer(fx.secrets.read))
    const second = await openStream(base, `/v1/sessions/capped/events?access_token=${fx.secrets.read}`)
    expect([first.statusCode, second.statusCode]).toEqual([200, 200])
    const third = await openStream(base, '/v1/sessions/capped/events', bearer(fx.secrets.read))
    expect(third.statusCode).toBe(429)
    expect(third.headers['retry-after']).toBe('5')
    expect(await third.body.json()).toMatchObject({ code: 'SS_TOO_MANY_STREAMS', status: 429 })
    // Another token has its own slots.
    const other = await openStream(base, '/v1/events', bearer(fx.secrets.write))
    expect(other.statusCode).toBe(200)
    other.body.destroy()

    first.body.destroy()
    let again = await openStream(base, '/v1/events', bearer(fx.secrets.read))
    for (let i = 0; i < 100 && again.statusCode === 429; i++) {
      await again.body.dump()
      await new Promise((resolve) => setTimeout(resolve, 20))
      again = await openStream(base, '/v1/events', bearer(fx.secrets.read))
    }
    expect(again.statusCode).toBe(200)
    again.body.destroy()
    second.body.destroy()
  })

  it('gives the slot back when the stream is refused before streaming (unknown session)', async () => {
    const app = await authApp({ maxSsePerToken: 1 })
    for (let i = 0; i < 3; i++) {
      const res = await get(app, '/v1/sessions/nope/events', bearer(fx.secrets.read))
      expect(problemOf(res)).toEqual({ status: 404, code: 'SS_SESSION_NOT_FOUND' })
    }
  })
})

describe('batch cap (MAX_BATCH_ENTRIES)', () => {
  it('answers 413 SS_BATCH_TOO_LARGE above the cap and appends nothing', async () => {
    const app = await authApp({ maxBatchEntries: 3 })
    const headers = bearer(fx.secrets.write)
    await app.inject({ method: 'POST', url: '/v1/sessions', headers, payload: { cwd: '/b', id: 'batched' } })
    const entries = (n: number) => ({ entries: Array.from({ length: n }, (_, i) => ({ type: 'custom', customType: `c${i}` })) })
    const over = await app.inject({ method: 'POST', url: '/v1/sessions/batched/entries', headers, payload: entries(4) })
    expect(over.statusCode).toBe(413)
    expect(over.json()).toMatchObject({ code: 'SS_BATCH_TOO_LARGE', detail: 'The batch has 4 entries; at most 3 are accepted at once' })
    expect((await get(app, '/v1/sessions/batched', headers)).json().entryCount).toBe(0)
    expect((await app.inject({ method: 'POST', url: '/v1/sessions/batched/entries', headers, payload: entries(3) })).statusCode).toBe(201)
  })

  it('has no cap at 0, the default without tokens (API.md bounds a batch by BODY_LIMIT only)', async () => {
    const app = await authApp({ maxBatchEntries: 0 })
    const headers = bearer(fx.secrets.write)
    await app.inject({ method: 'POST', url: '/v1/sessions', headers, payload: { cwd: '/b', id: 'uncapped' } })
    const entries = Array.from({ length: 5000 }, (_, i) => ({ type: 'custom', customType: `c${i}` }))
    const res = await app.inject({ method: 'POST', url: '/v1/sessions/uncapped/entries', headers, payload: { entries } })
    expect(res.statusCode).toBe(201)
    expect((await get(app, '/v1/sessions/uncapped', headers)).json().entryCount).toBe(5000)
  })
})

describe('body limit (BODY_LIMIT) on every kind of body', () => {
  it('answers 413 for JSON, JSONL import and raw blob bodies over the limit', async () => {
    const app = await buildTestApp({ config: { bodyLimit: 200 } })
    apps.push(app)
    const big = 'x'.repeat(300)
    const bytes = Buffer.alloc(300, 1)
    const hex = createHash('sha256').update(bytes).digest('hex')
    const cases = [
      { method: 'POST', url: '/v1/sessions', type: 'application/json', payload: JSON.stringify({ cwd: big }) },
      { method: 'POST', url: '/v1/sessions/import', type: 'application/x-ndjson', payload: `${big}\n` },
      { method: 'PUT', url: `/v1/blobs/sha256/${hex}`, type: 'application/octet-stream', payload: bytes },
      { method: 'POST', url: '/v1/blobs', type: 'image/png', payload: bytes },
    ] as const
    for (const c of cases) {
      const res = await app.inject({ method: c.method, url: c.url, headers: { 'content-type': c.type }, payload: c.payload })
      expect([c.url, res.statusCode, res.json().code]).toEqual([c.url, 413, 'SS_BODY_TOO_LARGE'])
    }
  })
})

/** Keeps the event loop busy for `ms`, as a CPU-bound request would. */
function blockEventLoop (ms: number): void {
  const end = Date.now() + ms
  while (Date.now() < end) {
    // spin
  }
}

describe('load shedding (MAX_EVENT_LOOP_DELAY_MS)', () => {
  it('answers 503 SS_OVERLOADED with Retry-After while the event loop lags, keeps /healthz up, and recovers', async () => {
    const app = await buildTestApp({ config: { maxEventLoopDelayMs: 20 } })
    apps.push(app)
    await app.ready()
    // Keep the event loop blocked most of the time, in 100 ms slices.
    const lagger = setInterval(() => { blockEventLoop(100) }, 110)
    let shed
    try {
      for (let i = 0; i < 100; i++) {
        shed = await get(app, '/v1/sessions')
        if (shed.statusCode === 503) break
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
      expect(shed?.statusCode).toBe(503)
      expect(shed?.headers['retry-after']).toBe('2')
      expect(shed?.json()).toEqual({
        type: 'about:blank',
        title: 'Service Unavailable',
        status: 503,
        code: 'SS_OVERLOADED',
        detail: 'The server is overloaded; retry after the time in Retry-After',
      })
      expect((await get(app, '/healthz')).statusCode).toBe(200)
      expect(problemOf(await get(app, '/readyz'))).toEqual({ status: 503, code: 'SS_OVERLOADED' })
    } finally {
      clearInterval(lagger)
    }
    let recovered = await get(app, '/v1/sessions')
    for (let i = 0; i < 100 && recovered.statusCode === 503; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50))
      recovered = await get(app, '/v1/sessions')
    }
    expect(recovered.statusCode).toBe(200)
  }, 30_000)
})
