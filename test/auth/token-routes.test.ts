/**
 * `/v1/tokens` for admins: list the own tenant's tokens without hashes, create one (the secret
 * works at once), revoke one (it stops at once), never see or touch another tenant's. Without
 * AUTH_TOKENS_FILE the routes answer 409 SS_AUTH_DISABLED.
 */
import { readFileSync } from 'node:fs'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { App } from '../../src/app.js'
import { buildTestApp } from '../helpers/app.js'
import { bearer, tokenFixture, type TokenFixture } from '../helpers/tokens.js'
import { problemOf } from '../helpers/problem.js'

let fx: TokenFixture
let app: App
beforeEach(async () => {
  fx = await tokenFixture()
  app = await buildTestApp({ tokens: await fx.load() })
})
afterEach(async () => {
  await app.close()
  fx.cleanup()
})

const admin = (): Record<string, string> => bearer(fx.secrets.admin)

describe('GET /v1/tokens', () => {
  it("lists the caller's tenant's tokens, without hashes or secrets", async () => {
    const res = await app.inject({ method: 'GET', url: '/v1/tokens', headers: admin() })
    expect(res.statusCode).toBe(200)
    const tokens = res.json().tokens as Array<Record<string, unknown>>
    expect(tokens.map((t) => t.id).sort()).toEqual([fx.ids.read, fx.ids.write, fx.ids.admin, fx.ids.expired].sort())
    expect(tokens.every((t) => t.tenant === 'acme' && !('sha256' in t))).toBe(true)
    expect(res.body).not.toContain(fx.ids.globex)
    for (const secret of Object.values(fx.secrets)) expect(res.body).not.toContain(secret)
  })
})

describe('POST /v1/tokens', () => {
  it('creates a token for the own tenant whose secret works at once', async () => {
    const res = await app.inject({ method: 'POST', url: '/v1/tokens', headers: admin(), payload: { scopes: ['read'], name: 'dashboard' } })
    expect(res.statusCode).toBe(201)
    const { secret, token } = res.json()
    expect(token).toEqual({ id: expect.stringMatching(/^tok_/), tenant: 'acme', scopes: ['read'], createdAt: expect.any(String), name: 'dashboard' })
    expect(readFileSync(fx.path, 'utf8')).not.toContain(secret)
    const list = await app.inject({ method: 'GET', url: '/v1/sessions', headers: bearer(secret) })
    expect(list.statusCode).toBe(200)
    const write = await app.inject({ method: 'POST', url: '/v1/sessions', headers: bearer(secret), payload: { cwd: '/x' } })
    expect(problemOf(write)).toEqual({ status: 403, code: 'SS_FORBIDDEN' })
  })

  it('refuses an expiry in the past (400) and a bad scope (400)', async () => {
    const past = await app.inject({ method: 'POST', url: '/v1/tokens', headers: admin(), payload: { scopes: ['read'], expiresAt: '2020-01-01T00:00:00Z' } })
    expect([past.statusCode, past.json().code]).toEqual([400, 'SS_INVALID_ARGUMENT'])
    const bad = await app.inject({ method: 'POST', url: '/v1/tokens', headers: admin(), payload: { scopes: ['root'] } })
    expect([bad.statusCode, bad.json().code]).toEqual([400, 'SS_VALIDATION'])
    const none = await app.inject({ method: 'POST', url: '/v1/tokens', headers: admin(), payload: { scopes: [] } })
    expect(problemOf(none)).toEqual({ status: 400, code: 'SS_VALIDATION' })
  })

  it('an expiring token works until it expires', async () => {
    const expiresAt = new Date(Date.now() + 3_600_000).toISOString()
    const res = await app.inject({ method: 'POST', url: '/v1/tokens', headers: admin(), payload: { scopes: ['write'], expiresAt } })
    expect(res.json().token.expiresAt).toBe(expiresAt)
    expect((await app.inject({ method: 'GET', url: '/v1/sessions', headers: bearer(res.json().secret) })).statusCode).toBe(200)
  })
})

describe('DELETE /v1/tokens/{id}', () => {
  it('revokes a token of the own tenant: it stops working at once', async () => {
    expect((await app.inject({ method: 'GET', url: '/v1/sessions', headers: bearer(fx.secrets.read) })).statusCode).toBe(200)
    const res = await app.inject({ method: 'DELETE', url: `/v1/tokens/${fx.ids.read}`, headers: admin() })
    expect(res.statusCode).toBe(204)
    const after = await app.inject({ method: 'GET', url: '/v1/sessions', headers: bearer(fx.secrets.read) })
    expect([after.statusCode, after.json().code]).toEqual([401, 'SS_UNAUTHENTICATED'])
    expect(problemOf(await app.inject({ method: 'DELETE', url: `/v1/tokens/${fx.ids.read}`, headers: admin() }))).toEqual({ status: 404, code: 'SS_TOKEN_NOT_FOUND' })
  })

  it("answers 404 for another tenant's token and leaves it working", async () => {
    const res = await app.inject({ method: 'DELETE', url: `/v1/tokens/${fx.ids.globex}`, headers: admin() })
    expect([res.statusCode, res.json().code]).toEqual([404, 'SS_TOKEN_NOT_FOUND'])
    expect((await app.inject({ method: 'GET', url: '/v1/tokens', headers: bearer(fx.secrets.globex) })).statusCode).toBe(200)
  })
})

describe('without AUTH_TOKENS_FILE', () => {
  it('every token route answers 409 SS_AUTH_DISABLED', async () => {
    const open = await buildTestApp()
    try {
      for (const [method, url, payload] of [['GET', '/v1/tokens'], ['POST', '/v1/tokens', { scopes: ['read'] }], ['DELETE', '/v1/tokens/tok_x']] as const) {
        const res = await open.inject({ method, url, ...(payload === undefined ? {} : { payload }) })
        expect([method, res.statusCode, res.json().code]).toEqual([method, 409, 'SS_AUTH_DISABLED'])
      }
    } finally {
      await open.close()
    }
  })
})
