/**
 * A live stream lasts only as long as its token: revoking the token (`DELETE /v1/tokens/{id}`, or
 * a reload of a file without it) or its expiry ends the stream, while other tokens' streams go
 * on; a stream still being set up when its token goes is cut instead of started.
 */
import { EventEmitter } from 'node:events'
import { writeFileSync } from 'node:fs'
import type { ServerResponse } from 'node:http'
import { Agent, request } from 'undici'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { App } from '../../src/app.js'
import { addToken, effectiveScopes, readTokenFileOrEmpty, type Principal, type TokenStore } from '../../src/auth/tokens.js'
import { StreamRevocation } from '../../src/http/stream-revocation.js'
import { buildTestApp } from '../helpers/app.js'
import { bearer, tokenFixture, type TokenFixture } from '../helpers/tokens.js'

let fx: TokenFixture
let agent: Agent
let tokens: TokenStore
let app: App
let base: string
beforeEach(async () => {
  fx = await tokenFixture()
  agent = new Agent()
  tokens = await fx.load()
  app = await buildTestApp({ tokens })
  base = await app.listen({ port: 0, host: '127.0.0.1' })
  await app.inject({ method: 'POST', url: '/v1/sessions', headers: bearer(fx.secrets.write), payload: { cwd: '/s', id: 'watched' } })
})
afterEach(async () => {
  await agent.destroy()
  await app.close()
  fx.cleanup()
})

/** A live stream: its status, and a promise of everything it received once it ended. */
async function stream (url: string, secret: string): Promise<{ status: number, text: Promise<string>, close: () => void }> {
  const res = await request(`${base}${url}`, { headers: bearer(secret), dispatcher: agent })
  return { status: res.statusCode, text: res.body.text().catch(() => ''), close: () => { res.body.destroy() } }
}

/** Resolves `'ended'` when `text` settles within `ms`, else `'open'`. */
async function settles (text: Promise<string>, ms: number): Promise<'ended' | 'open'> {
  return await Promise.race([text.then(() => 'ended' as const), new Promise<'open'>((resolve) => setTimeout(() => { resolve('open') }, ms))])
}

describe('revoked tokens', () => {
  it('DELETE /v1/tokens/{id} ends that token’s streams at once; other tokens’ streams go on', async () => {
    const revoked = await stream('/v1/sessions/watched/events', fx.secrets.read)
    const global = await stream('/v1/events', fx.secrets.read)
    const kept = await stream('/v1/sessions/watched/events', fx.secrets.write)
    expect([revoked.status, global.status, kept.status]).toEqual([200, 200, 200])

    const del = await app.inject({ method: 'DELETE', url: `/v1/tokens/${fx.ids.read}`, headers: bearer(fx.secrets.admin) })
    expect(del.statusCode).toBe(204)
    expect(await settles(revoked.text, 5000)).toBe('ended')
    expect(await settles(global.text, 5000)).toBe('ended')
    expect(await settles(kept.text, 300)).toBe('open')

    const again = await request(`${base}/v1/sessions/watched/events`, { headers: bearer(fx.secrets.read), dispatcher: agent })
    expect(again.statusCode).toBe(401)
    await again.body.dump()
    kept.close()
  })

  it('a reload of a file without the token (SIGHUP) ends its streams; a failed reload ends none', async () => {
    const live = await stream('/v1/events', fx.secrets.write)
    const other = await stream('/v1/events', fx.secrets.read)
    const original = await readTokenFileOrEmpty(fx.path)
    writeFileSync(fx.path, '{ not json')
    await expect(tokens.reload()).rejects.toMatchObject({ code: 'SS_INVALID_ARGUMENT', message: 'token file is not valid JSON' })
    expect(await settles(live.text, 300)).toBe('open')

    const withoutWrite = original.tokens.filter((t) => t.id !== fx.ids.write)
    writeFileSync(fx.path, JSON.stringify({ version: 1, tokens: withoutWrite }))
    await tokens.reload()
    expect(await settles(live.text, 5000)).toBe('ended')
    expect(await settles(other.text, 300)).toBe('open')
    other.close()
  })
})

describe('expiring tokens', () => {
  it('a stream ends when its token expires', async () => {
    const { secret } = await addToken(fx.path, { tenant: 'acme', scopes: ['read'], expiresAt: new Date(Date.now() + 1500).toISOString() })
    await tokens.reload()
    const live = await stream('/v1/sessions/watched/events', secret)
    expect(live.status).toBe(200)
    expect(await settles(live.text, 300)).toBe('open')
    expect(await settles(live.text, 5000)).toBe('ended')
  })
})

describe('StreamRevocation', () => {
  const principal: Principal = { tokenId: 'tok_a', tenant: 'acme', scopes: effectiveScopes(['read']) }

  /** A response stand-in that records how it was ended. */
  function response (headersSent: boolean): ServerResponse & { how?: string } {
    const res = Object.assign(new EventEmitter(), { headersSent }) as unknown as ServerResponse & { how?: string }
    res.end = (() => { res.how = 'end'; res.emit('close'); return res }) as ServerResponse['end']
    res.destroy = (() => { res.how = 'destroy'; res.emit('close'); return res }) as ServerResponse['destroy']
    return res
  }

  it('ends streaming responses and destroys ones not started; forgets closed ones', () => {
    let valid = true
    const ended: string[] = []
    const revocation = new StreamRevocation(() => valid, (p) => { ended.push(p.tokenId) })
    const streaming = response(true)
    const starting = response(false)
    const gone = response(true)
    for (const res of [streaming, starting, gone]) revocation.track(principal, res)
    gone.emit('close')
    expect(revocation.size).toBe(2)
    expect(revocation.sweep()).toBe(0)
    valid = false
    expect(revocation.sweep()).toBe(2)
    expect([streaming.how, starting.how, gone.how]).toEqual(['end', 'destroy', undefined])
    expect(ended).toEqual(['tok_a', 'tok_a'])
    expect(revocation.size).toBe(0)
  })
})
