/**
 * Odd inputs answer as clients expect: a leap-second `expiresAt` is 400, not 500; a secret in
 * `?access_token=` is never echoed back in a 404 or 405 problem; a missing file under
 * `/docs/static/` is 404, not 405.
 */
import { afterEach, describe, expect, it } from 'vitest'
import type { App } from '../../src/app.js'
import { buildTestApp } from '../helpers/app.js'
import { bearer, tokenFixture, type TokenFixture } from '../helpers/tokens.js'

let app: App
let fx: TokenFixture | undefined
afterEach(async () => {
  await app.close()
  fx?.cleanup()
  fx = undefined
})

describe('token expiry', () => {
  it('a leap-second expiresAt (valid date-time, not a representable instant) is 400', async () => {
    fx = await tokenFixture()
    app = await buildTestApp({ tokens: await fx.load() })
    const res = await app.inject({
      method: 'POST', url: '/v1/tokens', headers: bearer(fx.secrets.admin), payload: { scopes: ['read'], expiresAt: '9999-12-31T23:59:60Z' },
    })
    expect([res.statusCode, res.json().code]).toEqual([400, 'SS_INVALID_ARGUMENT'])
  })
})

describe('a secret in ?access_token= never comes back', () => {
  const SECRET = 'sst_secret-value-that-must-not-echo'
  it('not in a 404', async () => {
    app = await buildTestApp()
    const res = await app.inject({ method: 'GET', url: `/v1/nowhere?x=1&access_token=${SECRET}&y=2` })
    expect(res.statusCode).toBe(404)
    expect(res.body).not.toContain(SECRET)
    expect(res.json().detail).toContain('access_token=[REDACTED]')
    expect(res.json().detail).toContain('y=2')
  })

  it('not in a 405', async () => {
    app = await buildTestApp()
    const res = await app.inject({ method: 'PUT', url: `/v1/sessions?access_token=${SECRET}` })
    expect(res.statusCode).toBe(405)
    expect(res.body).not.toContain(SECRET)
  })

  it('not even percent-encoded or under an encoded name', async () => {
    app = await buildTestApp()
    const res = await app.inject({ method: 'GET', url: `/v1/nowhere?access%5Ftoken=${SECRET}&ACCESS_TOKEN=${SECRET}` })
    expect(res.statusCode).toBe(404)
    expect(res.body).not.toContain(SECRET)
  })
})

describe('/docs/static', () => {
  it('a missing file is 404 problem+json, not 405', async () => {
    app = await buildTestApp()
    const res = await app.inject({ method: 'GET', url: '/docs/static/no-such-file.js' })
    expect([res.statusCode, res.json().code]).toEqual([404, 'SS_NOT_FOUND'])
    expect(res.headers.allow).toBeUndefined()
    const head = await app.inject({ method: 'HEAD', url: '/docs/static/no-such-file.js' })
    expect(head.statusCode).toBe(404)
    const present = await app.inject({ method: 'GET', url: '/docs/static/index.css' })
    expect(present.statusCode).toBe(200)
  })
})
