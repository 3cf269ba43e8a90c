/**
 * The public routes cost little and are rate-limited per client address: /readyz proves
 * storage writable at most once per READY_PROBE_TTL_MS (concurrent probes share one), and
 * PUBLIC_RATE_LIMIT_MAX bounds requests per client IP to /healthz, /readyz, /openapi.json, /docs.
 */
import { afterEach, describe, expect, it, vi } from 'vitest'
import { READY_PROBE_TTL_MS } from '../../routes/health.js'
import type { App } from '../../src/app.js'
import { MemorySessionStorage } from '../../src/storage/index.js'
import { buildTestApp } from '../helpers/app.js'

let app: App
afterEach(async () => { await app.close() })

describe('/readyz', () => {
  it('writes one probe file for a burst of probes, and probes again once the result is older than the TTL', async () => {
    let failing = false
    const storage = new MemorySessionStorage({ failWrites: () => failing ? Object.assign(new Error('EROFS'), { code: 'EROFS' }) : undefined })
    const writeText = vi.spyOn(storage, 'writeText')
    app = await buildTestApp({ storage })
    const answers = await Promise.all(Array.from({ length: 50 }, async () => await app.inject({ method: 'GET', url: '/readyz' })))
    expect(answers.every((r) => r.statusCode === 200)).toBe(true)
    const probes = (): number => writeText.mock.calls.filter(([path]) => path.includes('/.ready')).length
    expect(probes()).toBe(1)
    failing = true
    expect((await app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200) // still the cached result
    await new Promise((resolve) => setTimeout(resolve, READY_PROBE_TTL_MS + 50))
    expect((await app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(503)
    expect(probes()).toBe(2)
  })
})

describe('PUBLIC_RATE_LIMIT_MAX', () => {
  it('answers 429 with Retry-After past the limit, per client address, across the public routes', async () => {
    app = await buildTestApp({ config: { publicRateLimitMax: 3 } })
    const get = async (url: string, remoteAddress = '127.0.0.7') => await app.inject({ method: 'GET', url, remoteAddress })
    expect((await get('/healthz')).statusCode).toBe(200)
    expect((await get('/readyz')).statusCode).toBe(200)
    expect((await get('/openapi.json')).statusCode).toBe(200)
    const over = await get('/healthz')
    expect([over.statusCode, over.json().code]).toEqual([429, 'SS_RATE_LIMITED'])
    expect(Number(over.headers['retry-after'])).toBeGreaterThan(0)
    expect((await get('/healthz', '127.0.0.8')).statusCode).toBe(200)
    // The API's own limit is separate (off here).
    expect((await get('/v1/sessions')).statusCode).toBe(200)
  })

  it('is off by default without tokens', async () => {
    app = await buildTestApp()
    for (let i = 0; i < 20; i++) expect((await app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200)
  })
})
