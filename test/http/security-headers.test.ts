/**
 * Headers of every answer: `X-Content-Type-Options: nosniff` everywhere, and CORS when
 * CORS_ORIGINS names origins (off by default).
 */
import net from 'node:net'
import { Agent, request } from 'undici'
import { afterEach, describe, expect, it } from 'vitest'
import type { App } from '../../src/app.js'
import { buildTestApp } from '../helpers/app.js'

const apps: App[] = []
afterEach(async () => { for (const app of apps.splice(0)) await app.close() })
async function app (corsOrigins: string[] = []): Promise<App> {
  const built = await buildTestApp({ config: { corsOrigins } })
  apps.push(built)
  return built
}

const ORIGIN = 'https://app.example'

describe('X-Content-Type-Options: nosniff', () => {
  it('is sent with JSON, problem, text, blob, docs and stream answers', async () => {
    const a = await app()
    const created = await a.inject({ method: 'POST', url: '/v1/sessions', payload: { cwd: '/h', id: 'h' } })
    const answers = [
      created,
      await a.inject({ method: 'GET', url: '/v1/sessions/nope' }),
      await a.inject({ method: 'GET', url: '/v1/nowhere' }),
      await a.inject({ method: 'GET', url: '/v1/sessions/h/export' }),
      await a.inject({ method: 'POST', url: '/v1/blobs', headers: { 'content-type': 'application/octet-stream' }, payload: Buffer.from('b') }),
      await a.inject({ method: 'GET', url: '/healthz' }),
      await a.inject({ method: 'GET', url: '/docs' }),
    ]
    for (const res of answers) expect([res.statusCode, res.headers['x-content-type-options']]).toEqual([res.statusCode, 'nosniff'])
  })
})

describe('X-Content-Type-Options on a request too malformed to reach routing', () => {
  it('is sent with the raw 400 too', async () => {
    const a = await app()
    const port = Number(new URL(await a.listen({ host: '127.0.0.1', port: 0 })).port)
    const head = await new Promise<string>((resolve) => {
      let out = ''
      const socket = net.connect(port, '127.0.0.1', () => socket.end('GARBAGE\r\n\r\n'))
      socket.on('data', (d) => { out += d.toString() }).on('close', () => resolve(out)).on('error', () => resolve(out))
    })
    expect(head).toMatch(/^HTTP\/1\.1 400 /)
    expect(head).toMatch(/\r\nX-Content-Type-Options: nosniff\r\n/i)
  })
})

describe('CORS', () => {
  it('is off by default', async () => {
    const a = await app()
    const res = await a.inject({ method: 'GET', url: '/v1/sessions', headers: { origin: ORIGIN } })
    expect(res.headers['access-control-allow-origin']).toBeUndefined()
    const preflight = await a.inject({ method: 'OPTIONS', url: '/v1/sessions', headers: { origin: ORIGIN, 'access-control-request-method': 'POST' } })
    expect(preflight.statusCode).toBe(405) // a known path, not a method it answers
    expect(preflight.headers['access-control-allow-origin']).toBeUndefined()
  })

  it('answers preflights for listed origins with the allowed methods and headers', async () => {
    const a = await app([ORIGIN])
    const res = await a.inject({
      method: 'OPTIONS',
      url: '/v1/sessions/x/entries',
      headers: { origin: ORIGIN, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,idempotency-key' },
    })
    expect(res.statusCode).toBe(204)
    expect(res.headers['access-control-allow-origin']).toBe(ORIGIN)
    expect(res.headers['access-control-allow-credentials']).toBe('true')
    expect(String(res.headers['access-control-allow-methods']).split(/,\s*/)).toEqual(expect.arrayContaining(['PUT', 'PATCH', 'DELETE']))
    const allowed = String(res.headers['access-control-allow-headers']).toLowerCase().split(/,\s*/)
    expect(allowed).toEqual(expect.arrayContaining(['authorization', 'content-type', 'if-match', 'idempotency-key', 'last-event-id']))
  })

  it('exposes ETag, Location, Idempotent-Replayed and Retry-After to listed origins only', async () => {
    const a = await app([ORIGIN])
    const res = await a.inject({ method: 'POST', url: '/v1/sessions', headers: { origin: ORIGIN }, payload: { cwd: '/c' } })
    expect(res.headers['access-control-allow-origin']).toBe(ORIGIN)
    const exposed = String(res.headers['access-control-expose-headers']).toLowerCase().split(/,\s*/)
    expect(exposed).toEqual(expect.arrayContaining(['etag', 'location', 'idempotent-replayed', 'retry-after']))
    const other = await a.inject({ method: 'GET', url: '/v1/sessions', headers: { origin: 'https://evil.example' } })
    expect(other.headers['access-control-allow-origin']).toBeUndefined()
  })

  it('allows any origin with *, without credentials', async () => {
    const a = await app(['*'])
    const res = await a.inject({ method: 'GET', url: '/v1/sessions', headers: { origin: 'https://any.example' } })
    expect(res.headers['access-control-allow-origin']).toBe('*')
    expect(res.headers['access-control-allow-credentials']).toBeUndefined()
  })

  it('keeps unknown paths 404 (the preflight route matches every path) and sends CORS headers on streams', async () => {
    const a = await app([ORIGIN])
    const missing = await a.inject({ method: 'GET', url: '/nowhere', headers: { origin: ORIGIN } })
    expect([missing.statusCode, missing.json().code]).toEqual([404, 'SS_NOT_FOUND'])
    const base = await a.listen({ port: 0, host: '127.0.0.1' })
    const agent = new Agent()
    try {
      const stream = await request(`${base}/v1/events`, { headers: { origin: ORIGIN }, dispatcher: agent })
      expect(stream.headers['content-type']).toMatch(/^text\/event-stream/)
      expect(stream.headers['access-control-allow-origin']).toBe(ORIGIN)
      expect(stream.headers['x-content-type-options']).toBe('nosniff')
      stream.body.destroy()
    } finally {
      await agent.destroy()
    }
  })
})
