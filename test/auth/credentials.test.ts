/**
 * How credentials are taken: `Authorization: Bearer` everywhere, `?access_token=` only on the
 * two live streams (elsewhere it is ignored, so the request is unauthenticated), and nothing at
 * all in open mode, where every caller is the default tenant with every scope.
 */
import { Agent, request } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { App } from '../../src/app.js'
import { buildTestApp } from '../helpers/app.js'
import { bearer, tokenFixture, type TokenFixture } from '../helpers/tokens.js'

let fx: TokenFixture
let app: App
let base: string
const agent = new Agent()
beforeAll(async () => {
  fx = await tokenFixture()
  app = await buildTestApp({ tokens: await fx.load() })
  base = await app.listen({ port: 0, host: '127.0.0.1' })
  await app.inject({ method: 'POST', url: '/v1/sessions', headers: bearer(fx.secrets.admin), payload: { cwd: '/c', id: 'creds' } })
})
afterAll(async () => {
  await agent.destroy()
  await app.close()
  fx.cleanup()
})

async function status (url: string, headers: Record<string, string> = {}): Promise<number> {
  const res = await request(`${base}${url}`, { headers, dispatcher: agent })
  if (String(res.headers['content-type']).startsWith('text/event-stream')) res.body.destroy()
  else await res.body.dump()
  return res.statusCode
}

describe('?access_token=', () => {
  it('works on the two live streams', async () => {
    expect(await status(`/v1/events?access_token=${fx.secrets.read}`)).toBe(200)
    expect(await status(`/v1/sessions/creds/events?access_token=${fx.secrets.read}`)).toBe(200)
    expect(await status(`/v1/events?access_token=${fx.secrets.expired}`)).toBe(401)
    expect(await status('/v1/events?access_token=sst_wrong')).toBe(401)
  })

  it('is ignored everywhere else: without a header the request is unauthenticated', async () => {
    for (const url of ['/v1/sessions', '/v1/sessions/creds', '/v1/sessions/creds/entries', '/v1/tokens']) {
      const res = await app.inject({ method: 'GET', url: `${url}?access_token=${fx.secrets.admin}` })
      expect([url, res.statusCode, res.json().code]).toEqual([url, 401, 'SS_UNAUTHENTICATED'])
    }
  })

  it('never overrides an Authorization header', async () => {
    expect(await status(`/v1/events?access_token=${fx.secrets.read}`, bearer('sst_wrong'))).toBe(401)
  })
})

describe('Authorization', () => {
  it('takes Bearer in any case of the scheme, and refuses other schemes', async () => {
    const ok = await app.inject({ method: 'GET', url: '/v1/sessions', headers: { authorization: `bearer ${fx.secrets.read}` } })
    expect(ok.statusCode).toBe(200)
    const basic = await app.inject({ method: 'GET', url: '/v1/sessions', headers: { authorization: `Basic ${fx.secrets.read}` } })
    expect([basic.statusCode, basic.json().detail]).toEqual([401, 'The Authorization header must be Bearer <token>'])
    const missing = await app.inject({ method: 'GET', url: '/v1/sessions' })
    expect(missing.json().detail).toBe('No access token: send Authorization: Bearer <token>')
    expect(missing.headers['www-authenticate']).toBe('Bearer realm="session-store"')
  })

  it('leaves public routes alone, even with a bad token', async () => {
    for (const url of ['/healthz', '/readyz', '/openapi.json']) {
      expect((await app.inject({ method: 'GET', url, headers: bearer('sst_wrong') })).statusCode).toBe(200)
    }
  })

  it('lets unknown routes answer 404 without asking for credentials', async () => {
    const res = await app.inject({ method: 'GET', url: '/v1/nowhere' })
    expect([res.statusCode, res.json().code]).toEqual([404, 'SS_NOT_FOUND'])
  })
})

describe('open mode (no AUTH_TOKENS_FILE)', () => {
  it('lets everyone in as the default tenant, whatever credentials come along', async () => {
    const open = await buildTestApp()
    try {
      const created = await open.inject({ method: 'POST', url: '/v1/sessions', payload: { cwd: '/o', id: 'open' } })
      expect(created.statusCode).toBe(201)
      const withToken = await open.inject({ method: 'GET', url: '/v1/sessions/open', headers: bearer('sst_anything') })
      expect(withToken.statusCode).toBe(200)
      expect(open.registry).toBe(open.tenants.get('default').registry)
      expect((await open.registry.get('open')).header.id).toBe('open')
    } finally {
      await open.close()
    }
  })
})
