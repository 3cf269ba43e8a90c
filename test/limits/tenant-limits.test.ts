/**
 * Limits that a tenant cannot multiply by minting tokens: at most MAX_TOKENS_PER_TENANT tokens,
 * and the rate limit and the stream cap count per tenant (RATE_LIMIT_TENANT_MAX,
 * MAX_SSE_PER_TENANT) as well as per token.
 */
import { Agent, request } from 'undici'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { App } from '../../src/app.js'
import type { Config } from '../../src/config.js'
import { buildTestApp } from '../helpers/app.js'
import { bearer, tokenFixture, type TokenFixture } from '../helpers/tokens.js'

let fx: TokenFixture
let agent: Agent
const apps: App[] = []
beforeEach(async () => {
  fx = await tokenFixture()
  agent = new Agent()
})
afterEach(async () => {
  await agent.destroy()
  for (const app of apps.splice(0)) await app.close()
  fx.cleanup()
})

async function authApp (config: Partial<Config>): Promise<App> {
  const app = await buildTestApp({ tokens: await fx.load(), config })
  apps.push(app)
  return app
}

const mint = async (app: App, secret: string) => await app.inject({
  method: 'POST', url: '/v1/tokens', headers: bearer(secret), payload: { scopes: ['read'] },
})

describe('tokens per tenant (MAX_TOKENS_PER_TENANT)', () => {
  it('refuses a new token once the tenant holds the cap, until one is revoked; other tenants go on', async () => {
    const app = await authApp({ maxTokensPerTenant: 6 }) // acme starts with 4 tokens
    expect((await mint(app, fx.secrets.admin)).statusCode).toBe(201)
    const last = await mint(app, fx.secrets.admin)
    expect(last.statusCode).toBe(201)
    const refused = await mint(app, fx.secrets.admin)
    expect([refused.statusCode, refused.json().code]).toEqual([409, 'SS_TOO_MANY_TOKENS'])
    expect((await mint(app, fx.secrets.globex)).statusCode).toBe(201)
    const id = (last.json() as { token: { id: string } }).token.id
    expect((await app.inject({ method: 'DELETE', url: `/v1/tokens/${id}`, headers: bearer(fx.secrets.admin) })).statusCode).toBe(204)
    expect((await mint(app, fx.secrets.admin)).statusCode).toBe(201)
  })

  it('refuses concurrent creations past the cap too', async () => {
    const app = await authApp({ maxTokensPerTenant: 6 })
    const results = await Promise.all(Array.from({ length: 6 }, async () => (await mint(app, fx.secrets.admin)).statusCode))
    expect(results.filter((s) => s === 201)).toHaveLength(2)
    expect(results.filter((s) => s === 409)).toHaveLength(4)
  })
})

describe('rate limit per tenant (RATE_LIMIT_TENANT_MAX)', () => {
  it('counts every token of a tenant together; another tenant has its own budget', async () => {
    const app = await authApp({ rateLimitMax: 100, rateLimitTenantMax: 4 })
    for (const name of ['read', 'write', 'admin', 'read'] as const) {
      expect((await app.inject({ method: 'GET', url: '/v1/sessions', headers: bearer(fx.secrets[name]) })).statusCode).toBe(200)
    }
    const limited = await app.inject({ method: 'GET', url: '/v1/sessions', headers: bearer(fx.secrets.write) })
    expect([limited.statusCode, limited.json().code]).toEqual([429, 'SS_RATE_LIMITED'])
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0)
    expect((await app.inject({ method: 'GET', url: '/v1/sessions', headers: bearer(fx.secrets.globex) })).statusCode).toBe(200)
  })
})

describe('live streams per tenant (MAX_SSE_PER_TENANT)', () => {
  it('refuses a stream past the tenant cap even from a token under its own cap', async () => {
    const app = await authApp({ maxSsePerToken: 5, maxSsePerTenant: 2 })
    const base = await app.listen({ port: 0, host: '127.0.0.1' })
    const open = async (secret: string) => await request(`${base}/v1/events`, { headers: bearer(secret), dispatcher: agent })
    const a = await open(fx.secrets.read)
    const b = await open(fx.secrets.write)
    expect([a.statusCode, b.statusCode]).toEqual([200, 200])
    const refused = await open(fx.secrets.admin)
    expect(refused.statusCode).toBe(429)
    expect(((await refused.body.json()) as { code: string }).code).toBe('SS_TOO_MANY_STREAMS')
    const other = await open(fx.secrets.globex)
    expect(other.statusCode).toBe(200)
    for (const s of [a, b, other]) s.body.destroy()
  })
})
