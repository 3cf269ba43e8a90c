/**
 * API.md "Running": without tokens on a loopback HOST the server answers only requests whose
 * `Host` is a loopback name or address (421 `SS_MISDIRECTED_HOST`: DNS rebinding), and refuses
 * writes with a foreign `Origin` (403 `SS_FOREIGN_ORIGIN`: cross-site requests from a browser).
 * Its own origin (a page it serves, e.g. /ui/) and the origins of CORS_ORIGINS are not foreign.
 */
import { afterEach, describe, expect, it } from 'vitest'
import type { App } from '../../src/app.js'
import type { Config } from '../../src/config.js'
import { buildTestApp } from '../helpers/app.js'
import { tokenFixture, type TokenFixture, bearer } from '../helpers/tokens.js'
import { problemOf } from '../helpers/problem.js'

let app: App
let fx: TokenFixture | undefined
afterEach(async () => {
  await app.close()
  fx?.cleanup()
  fx = undefined
})

const open = async (config: Partial<Config> = {}): Promise<App> => (app = await buildTestApp({ config }))
const EVIL = 'http://evil.example'
const JSONL = `${JSON.stringify({ type: 'session', version: 3, id: 'planted', timestamp: '2026-01-01T00:00:00.000Z', cwd: '/work/victim' })}\n`

describe('open mode on a loopback HOST: Host check (DNS rebinding)', () => {
  it('answers 421 SS_MISDIRECTED_HOST to a foreign Host, on reads and public routes too', async () => {
    await open()
    for (const url of ['/v1/sessions', '/healthz', '/openapi.json']) {
      const res = await app.inject({ method: 'GET', url, headers: { host: 'rebind.evil.example:8787' } })
      expect([res.statusCode, res.json().code], url).toEqual([421, 'SS_MISDIRECTED_HOST'])
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/)
      expect(res.body).not.toContain('sessions"')
    }
  })

  it('answers loopback names and addresses, with or without a port', async () => {
    await open()
    for (const host of ['localhost', 'localhost:8787', '127.0.0.1:8787', '127.1.2.3', '[::1]:8787', 'LOCALHOST:1']) {
      const res = await app.inject({ method: 'GET', url: '/v1/sessions', headers: { host } })
      expect(res.statusCode, host).toBe(200)
    }
  })

  it('refuses a Host that only starts like a loopback name', async () => {
    await open()
    for (const host of ['localhost.evil.example', '127.0.0.1.evil.example', '0.0.0.0:8787', '10.0.0.1']) {
      const res = await app.inject({ method: 'GET', url: '/v1/sessions', headers: { host } })
      expect(res.statusCode, host).toBe(421)
    }
  })
})

describe('open mode on a loopback HOST: Origin check on writes (cross-site requests)', () => {
  it('refuses a cross-site text/plain import with 403 SS_FOREIGN_ORIGIN, and continue resumes no planted session', async () => {
    await open()
    const plant = await app.inject({
      method: 'POST', url: '/v1/sessions/import', headers: { 'content-type': 'text/plain', origin: EVIL }, payload: JSONL,
    })
    expect([plant.statusCode, plant.json().code]).toEqual([403, 'SS_FOREIGN_ORIGIN'])
    const next = await app.inject({ method: 'POST', url: '/v1/sessions/continue', payload: { cwd: '/work/victim' } })
    expect(next.statusCode).toBe(201)
    expect(next.json().header.id).not.toBe('planted')
  })

  it('refuses a cross-site blob upload and a body-less fork', async () => {
    await open()
    const blob = await app.inject({
      method: 'POST', url: '/v1/blobs', headers: { 'content-type': 'text/plain', origin: EVIL }, payload: 'x',
    })
    expect([blob.statusCode, blob.json().code]).toEqual([403, 'SS_FOREIGN_ORIGIN'])
    const created = await app.inject({ method: 'POST', url: '/v1/sessions', payload: { cwd: '/w' } })
    const id = created.json().header.id as string
    const fork = await app.inject({ method: 'POST', url: `/v1/sessions/${id}/fork`, headers: { origin: EVIL } })
    expect([fork.statusCode, fork.json().code]).toEqual([403, 'SS_FOREIGN_ORIGIN'])
    const del = await app.inject({ method: 'DELETE', url: `/v1/sessions/${id}`, headers: { origin: 'null' } })
    expect(problemOf(del)).toEqual({ status: 403, code: 'SS_FOREIGN_ORIGIN' })
  })

  it('refuses another loopback origin (another local port is another site)', async () => {
    await open()
    const res = await app.inject({
      method: 'POST', url: '/v1/sessions', headers: { host: '127.0.0.1:8787', origin: 'http://127.0.0.1:3000' }, payload: { cwd: '/w' },
    })
    expect(problemOf(res)).toEqual({ status: 403, code: 'SS_FOREIGN_ORIGIN' })
  })

  it('accepts its own origin (a page it serves, such as /ui/), no Origin, and foreign origins on reads', async () => {
    await open()
    const own = await app.inject({
      method: 'POST', url: '/v1/sessions', headers: { host: '127.0.0.1:8787', origin: 'http://127.0.0.1:8787' }, payload: { cwd: '/w' },
    })
    expect(own.statusCode).toBe(201)
    const ownName = await app.inject({
      method: 'POST', url: '/v1/sessions', headers: { host: 'localhost:8787', origin: 'http://LOCALHOST:8787' }, payload: { cwd: '/w' },
    })
    expect(ownName.statusCode).toBe(201)
    const none = await app.inject({ method: 'POST', url: '/v1/sessions', payload: { cwd: '/w' } })
    expect(none.statusCode).toBe(201)
    const read = await app.inject({ method: 'GET', url: '/v1/sessions', headers: { origin: EVIL } })
    expect(read.statusCode).toBe(200)
  })

  it('accepts the origins CORS_ORIGINS names', async () => {
    await open({ corsOrigins: ['https://app.example.com'] })
    const res = await app.inject({
      method: 'POST', url: '/v1/sessions', headers: { origin: 'https://app.example.com' }, payload: { cwd: '/w' },
    })
    expect(res.statusCode).toBe(201)
    const other = await app.inject({ method: 'POST', url: '/v1/sessions', headers: { origin: EVIL }, payload: { cwd: '/w' } })
    expect(problemOf(other)).toEqual({ status: 403, code: 'SS_FOREIGN_ORIGIN' })
  })
})

describe('where the guard does not apply', () => {
  it('with tokens: the token decides, any Host and Origin', async () => {
    fx = await tokenFixture()
    app = await buildTestApp({ tokens: await fx.load() })
    const res = await app.inject({
      method: 'POST', url: '/v1/sessions', headers: { ...bearer(fx.secrets.write), host: 'store.example.com', origin: EVIL }, payload: { cwd: '/w' },
    })
    expect(res.statusCode).toBe(201)
  })

  it('on a HOST that is not loopback (ALLOW_UNAUTHENTICATED=1): the operator chose to expose it', async () => {
    await open({ host: '0.0.0.0', allowUnauthenticated: true })
    const res = await app.inject({ method: 'GET', url: '/v1/sessions', headers: { host: 'store.internal:8787' } })
    expect(res.statusCode).toBe(200)
  })
})
