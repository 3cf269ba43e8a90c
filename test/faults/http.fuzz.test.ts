/**
 * Fuzzes the HTTP API with generated and mutated requests (bodies, content types, If-Match,
 * Idempotency-Key, Last-Event-ID, ids, blob hashes with traversal attempts and encoded NULs,
 * query strings) against a real listening app on the disk store and on PostgreSQL, the same requests on each. No answer may be a 5xx,
 * every error is problem+json, the server stays up, and nothing is written outside DATA_DIR or
 * outside its layout. The long version is bench/faults/http-fuzz.ts. Replay with FAULT_SEED.
 */
import { describe, expect, it } from 'vitest'
import { buildTestApp } from '../helpers/app.js'
import { pgAvailable } from '../helpers/pg.js'
import { runHttpFuzz } from './support/http-fuzz.js'
import { seedFromEnv } from './support/prng.js'

const REQUESTS = 10_000
const CONCURRENCY = 32
/** One seed for both stores: they get the same requests. */
const SEED = seedFromEnv()

describe.each([
  { storage: 'disk' as const, run: true },
  { storage: 'postgres' as const, run: pgAvailable },
])('HTTP API fuzz on $storage', ({ storage, run }) => {
  it.runIf(run)(`${REQUESTS} generated and mutated requests (the same on either store): no 5xx, problem+json errors, nothing outside DATA_DIR`, async () => {
    const seed = SEED
    const result = await runHttpFuzz({ seed, requests: REQUESTS, concurrency: CONCURRENCY, storage })
    const rps = Math.round(result.answered / (result.ms / 1000))
    console.log(`http fuzz: seed ${seed}, ${result.answered} answered (${result.unsent} unsent) in ${result.ms} ms, ${rps} req/s`)
    console.log(`http fuzz statuses: ${JSON.stringify(result.statuses)}`)
    expect(result.problems).toEqual([])
    expect(result.serverErrors).toEqual([])
    expect(result.answered + result.unsent).toBe(REQUESTS)
    // The fuzz reaches the working paths too, not only refusals.
    expect(Object.keys(result.statuses)).toEqual(expect.arrayContaining(['200', '201', '204']))
    // Alone it takes 20–30 s; beside the rest of the suite on two cores, up to three times that.
  }, 240_000)
})

describe('what the fuzz found, pinned down', () => {
  /** A custom entry whose data nests `depth` arrays: 20 KB of body at depth 10,000. */
  const deep = (depth: number): string => `{"type":"custom","customType":"deep","data":${'['.repeat(depth)}${']'.repeat(depth)}}`
  const assistant = JSON.stringify({ type: 'message', message: { role: 'assistant', content: [] } })

  it('a body nested 10,000 deep is refused with 400 SS_INVALID_JSON and breaks neither its session nor /recent', async () => {
    const app = await buildTestApp()
    try {
      const post = async (id: string, payload: string) => await app.inject({
        method: 'POST', url: `/v1/sessions/${id}/entries`, headers: { 'content-type': 'application/json' }, payload,
      })
      const create = async () => (await app.inject({ method: 'POST', url: '/v1/sessions', payload: { cwd: '/deep' } })).json().header.id as string
      const deferred = await create()
      const flushed = await create()
      expect((await post(flushed, assistant)).statusCode).toBe(201)
      for (const id of [deferred, flushed]) {
        const res = await post(id, deep(10_000))
        expect(res.statusCode).toBe(400)
        expect(res.headers['content-type']).toMatch(/^application\/problem\+json/)
        expect(res.json()).toMatchObject({ status: 400, code: 'SS_INVALID_JSON' })
      }
      // Nothing of the refused bodies was appended.
      const totals = await Promise.all([deferred, flushed].map(async (id) => (await app.inject({ method: 'GET', url: `/v1/sessions/${id}/entries` })).json().total as number))
      expect(totals).toEqual([0, 1])
      expect((await app.inject({ method: 'GET', url: '/v1/sessions/recent?cwd=%2Fdeep' })).statusCode).toBe(200)
      for (const id of [deferred, flushed]) {
        expect((await app.inject({ method: 'GET', url: `/v1/sessions/${id}/entries` })).statusCode).toBe(200)
        expect((await post(id, assistant)).json()).toMatchObject({ persisted: true })
      }
    } finally {
      await app.close()
    }
  })
})
