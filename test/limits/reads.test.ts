/**
 * Reads do not amplify: listings and `/v1/events` carry at most LISTING_TEXT_MAX characters of
 * `firstMessage` and `title`, titles are capped on write, and load shedding refuses the tenant
 * that causes the lag, not every tenant.
 */
import { Agent, request } from 'undici'
import { afterEach, describe, expect, it } from 'vitest'
import type { App } from '../../src/app.js'
import { LISTING_TEXT_MAX, MAX_TITLE_LENGTH } from '../../src/session/listing-item.js'
import { buildTestApp } from '../helpers/app.js'
import { bearer, tokenFixture, type TokenFixture } from '../helpers/tokens.js'
import { assistant, message, user } from '../http/session-helpers.js'
import { problemOf } from '../helpers/problem.js'

const apps: App[] = []
let fx: TokenFixture | undefined
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close()
  fx?.cleanup()
  fx = undefined
})

async function open (): Promise<App> {
  const app = await buildTestApp()
  apps.push(app)
  return app
}

const huge = 'w'.repeat(200_000)

describe('listing and event payloads', () => {
  it('cuts firstMessage and title in listings to LISTING_TEXT_MAX characters', async () => {
    const app = await open()
    // A stored header may carry any title (imports keep headers verbatim).
    const header = { type: 'session', version: 3, id: 'imported', timestamp: new Date().toISOString(), cwd: '/w', title: huge }
    const line = (o: object): string => JSON.stringify(o) + '\n'
    const entry = (id: string, parentId: string | null, m: object) => ({ type: 'message', id, parentId, timestamp: new Date().toISOString(), message: m })
    const body = line(header) + line(entry('a1', null, user(huge))) + line(entry('a2', 'a1', assistant('ok')))
    const imported = await app.inject({ method: 'POST', url: '/v1/sessions/import', headers: { 'content-type': 'application/x-ndjson' }, payload: body })
    expect(imported.statusCode, imported.body).toBe(201)
    await app.inject({ method: 'POST', url: '/v1/sessions', payload: { cwd: '/w', id: 'open' } })
    await app.inject({ method: 'POST', url: '/v1/sessions/open/entries', payload: { entries: [message(user(huge)), message(assistant('ok'))] } })
    const list = await app.inject({ method: 'GET', url: '/v1/sessions?limit=1000' })
    expect(list.statusCode).toBe(200)
    const sessions = list.json().sessions as Array<{ id: string, title?: string, firstMessage: string }>
    expect(sessions.map((s) => s.id).sort()).toEqual(['imported', 'open'])
    for (const s of sessions) {
      expect(s.firstMessage.length).toBeLessThanOrEqual(LISTING_TEXT_MAX)
      expect(s.firstMessage.startsWith('www')).toBe(true)
      if (s.title !== undefined) expect(s.title.length).toBeLessThanOrEqual(LISTING_TEXT_MAX)
    }
    expect(list.body.length).toBeLessThan(4 * LISTING_TEXT_MAX + 2000)
  })

  it('sends dashboards a cut SessionInfo on /v1/events', async () => {
    const app = await open()
    const base = await app.listen({ port: 0, host: '127.0.0.1' })
    const agent = new Agent()
    try {
      await app.inject({ method: 'POST', url: '/v1/sessions', payload: { cwd: '/w', id: 'watched' } })
      await app.inject({ method: 'POST', url: '/v1/sessions/watched/entries', payload: message(user(huge)) })
      const res = await request(`${base}/v1/events`, { dispatcher: agent })
      let received = ''
      const done = new Promise<void>((resolve) => {
        res.body.on('data', (chunk: Buffer) => { received += chunk.toString(); if (received.includes('session-updated')) resolve() })
      })
      for (let i = 0; i < 3; i++) await app.inject({ method: 'POST', url: '/v1/sessions/watched/entries', payload: message(user('more')) })
      await done
      res.body.destroy()
      expect(received.length).toBeLessThan(3 * (LISTING_TEXT_MAX + 1000))
    } finally {
      await agent.destroy()
    }
  })

  it(`refuses a title longer than ${MAX_TITLE_LENGTH} characters on create and on rename with 400`, async () => {
    const app = await open()
    const long = 't'.repeat(MAX_TITLE_LENGTH + 1)
    const created = await app.inject({ method: 'POST', url: '/v1/sessions', payload: { cwd: '/w', title: long } })
    expect([created.statusCode, created.json().code]).toEqual([400, 'SS_VALIDATION'])
    expect((await app.inject({ method: 'POST', url: '/v1/sessions', payload: { cwd: '/w', id: 'ok', title: 't'.repeat(MAX_TITLE_LENGTH) } })).statusCode).toBe(201)
    const renamed = await app.inject({ method: 'PATCH', url: '/v1/sessions/ok', payload: { title: long } })
    expect([renamed.statusCode, renamed.json().code]).toEqual([400, 'SS_VALIDATION'])
  })
})

function blockEventLoop (ms: number): void {
  const end = Date.now() + ms
  while (Date.now() < end) { /* spin */ }
}

describe('load shedding per tenant', () => {
  it('refuses the tenant that keeps the server busy and serves another one meanwhile', async () => {
    fx = await tokenFixture()
    const app = await buildTestApp({ tokens: await fx.load(), config: { maxEventLoopDelayMs: 20, rateLimitMax: 0 } })
    apps.push(app)
    await app.ready()
    const acme = bearer(fx.secrets.admin)
    const globex = bearer(fx.secrets.globex)
    const lagger = setInterval(() => { blockEventLoop(100) }, 110)
    try {
      let shed
      for (let i = 0; i < 300; i++) {
        shed = await app.inject({ method: 'GET', url: '/v1/sessions', headers: acme })
        if (shed.statusCode === 503) break
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
      expect(shed?.statusCode).toBe(503)
      expect(shed?.json().code).toBe('SS_OVERLOADED')
      // The other tenant, which did next to nothing, is served while acme is refused.
      const served = await app.inject({ method: 'GET', url: '/v1/sessions', headers: globex })
      expect(served.statusCode).toBe(200)
      expect(problemOf(await app.inject({ method: 'GET', url: '/v1/sessions', headers: acme }))).toEqual({ status: 503, code: 'SS_OVERLOADED' })
    } finally {
      clearInterval(lagger)
    }
  }, 60_000)
})
