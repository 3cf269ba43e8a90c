/**
 * Unsaved sessions (held in memory under the deferral rule, SPEC.md §8.3) are bounded: bytes and
 * entries per session (413 `SS_UNSAVED_SESSION_TOO_LARGE`) and sessions per tenant (429
 * `SS_TOO_MANY_UNSAVED_SESSIONS`). The bound never writes a session out early: an assistant
 * message still saves it, and nothing acknowledged is lost. The open-session cache also evicts
 * by bytes, not only by count.
 */
import { storeStack } from '../helpers/stack.js'
import { afterEach, describe, expect, it, onTestFinished } from 'vitest'
import type { App } from '../../src/app.js'
import type { Config } from '../../src/config.js'
import type { SessionRegistry } from '../../src/registry/session-registry.js'
import { MemoryBlobStore } from '../../src/blobs/index.js'
import { buildTestApp } from '../helpers/app.js'
import { assistant, message, user } from '../http/session-helpers.js'
import { problemOf } from '../helpers/problem.js'

const apps: App[] = []
afterEach(async () => { for (const app of apps.splice(0)) await app.close() })

async function app (config: Partial<Config>): Promise<App> {
  const built = await buildTestApp({ config })
  apps.push(built)
  return built
}

const post = async (a: App, url: string, payload: unknown) => await a.inject({ method: 'POST', url, payload: payload as object })

describe('bytes and entries of one unsaved session', () => {
  it('refuses an append past MAX_UNSAVED_SESSION_BYTES with 413, keeps what it acknowledged, and still saves on an assistant message', async () => {
    const a = await app({ maxUnsavedSessionBytes: 64 * 1024 })
    expect((await post(a, '/v1/sessions', { cwd: '/w', id: 'big' })).statusCode).toBe(201)
    const chunk = 'x'.repeat(20 * 1024)
    for (let i = 0; i < 3; i++) {
      const ok = await post(a, '/v1/sessions/big/entries', message(user(chunk)))
      expect(ok.statusCode, ok.body).toBe(201)
      expect(ok.json().persisted).toBe(false)
    }
    const refused = await post(a, '/v1/sessions/big/entries', message(user(chunk)))
    expect(refused.statusCode).toBe(413)
    expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/)
    expect(refused.json()).toMatchObject({ status: 413, code: 'SS_UNSAVED_SESSION_TOO_LARGE' })
    // Nothing of the refused batch was appended.
    expect((await a.inject({ method: 'GET', url: '/v1/sessions/big' })).json().entryCount).toBe(3)
    // The assistant's reply saves the session whole (deferral rule), bound or not.
    const saved = await post(a, '/v1/sessions/big/entries', message(assistant('done')))
    expect(saved.statusCode, saved.body).toBe(201)
    expect(saved.json().persisted).toBe(true)
    // Saved sessions are no longer bounded by the unsaved limit.
    expect((await post(a, '/v1/sessions/big/entries', message(user(chunk)))).json().persisted).toBe(true)
  })

  it('refuses an append past MAX_UNSAVED_SESSION_ENTRIES with 413', async () => {
    const a = await app({ maxUnsavedSessionEntries: 5 })
    await post(a, '/v1/sessions', { cwd: '/w', id: 'many' })
    const four = { entries: Array.from({ length: 4 }, () => message(user('hi'))) }
    expect((await post(a, '/v1/sessions/many/entries', four)).statusCode).toBe(201)
    const refused = await post(a, '/v1/sessions/many/entries', { entries: [message(user('a')), message(user('b'))] })
    expect([refused.statusCode, refused.json().code]).toEqual([413, 'SS_UNSAVED_SESSION_TOO_LARGE'])
    // A batch that ends the deferral (it carries the assistant message) is accepted.
    const saving = await post(a, '/v1/sessions/many/entries', { entries: [message(user('a')), message(assistant('b'))] })
    expect([saving.statusCode, saving.json().persisted]).toEqual([201, true])
  })
})

describe('unsaved sessions per tenant (MAX_UNSAVED_SESSIONS)', () => {
  it('refuses a new unsaved session with 429 until one is saved or deleted', async () => {
    const a = await app({ maxUnsavedSessions: 2 })
    expect((await post(a, '/v1/sessions', { cwd: '/w', id: 'u1' })).statusCode).toBe(201)
    expect((await post(a, '/v1/sessions', { cwd: '/w', id: 'u2' })).statusCode).toBe(201)
    const refused = await post(a, '/v1/sessions', { cwd: '/w', id: 'u3' })
    expect([refused.statusCode, refused.json().code]).toEqual([429, 'SS_TOO_MANY_UNSAVED_SESSIONS'])
    expect(refused.headers['retry-after']).toMatch(/^[1-9]\d*$/)
    expect(problemOf(await post(a, '/v1/sessions/continue', { cwd: '/elsewhere' }))).toEqual({ status: 429, code: 'SS_TOO_MANY_UNSAVED_SESSIONS' })
    // Saving one frees its place.
    await post(a, '/v1/sessions/u1/entries', { entries: [message(user('q')), message(assistant('a'))] })
    expect((await post(a, '/v1/sessions', { cwd: '/w', id: 'u3' })).statusCode).toBe(201)
    // Deleting one frees its place too.
    expect((await a.inject({ method: 'DELETE', url: '/v1/sessions/u2' })).statusCode).toBe(204)
    expect((await post(a, '/v1/sessions', { cwd: '/w', id: 'u4' })).statusCode).toBe(201)
    // A fork of an unsaved session is itself unsaved: it counts.
    expect(problemOf(await post(a, '/v1/sessions/u3/fork', {}))).toEqual({ status: 429, code: 'SS_TOO_MANY_UNSAVED_SESSIONS' })
  })
})

describe('open-session cache byte budget (MAX_OPEN_SESSION_BYTES)', () => {
  /** A registry on memory storage whose open sessions may hold 100 KiB. */
  const budgetRegistry = (dataDir: string): SessionRegistry => {
    const stack = storeStack({ dataDir, blobs: new MemoryBlobStore(), maxOpenSessions: 1000, limits: { maxOpenSessionBytes: 100 * 1024 } })
    onTestFinished(stack.close)
    return stack.registry
  }

  it('evicts saved sessions once their bytes exceed the budget, even under the count limit', async () => {
    const registry = budgetRegistry('/ss-budget')
    const text = 'y'.repeat(30 * 1024)
    for (let i = 0; i < 10; i++) {
      await registry.create({ cwd: '/w', id: `s${i}` })
      await registry.append(`s${i}`, { entries: [message(user(text)), message(assistant('ok'))] }, {})
    }
    const stats = registry.openStats()
    expect(stats.bytes).toBeLessThanOrEqual(100 * 1024)
    expect(stats.sessions).toBeLessThan(10)
    // Evicted sessions load again from storage with every entry.
    expect((await registry.get('s0')).entryCount).toBe(2)
    await registry.close()
  })

  it('keeps the session used last loaded even when it alone is over the budget, and evicts it when another is used', async () => {
    const registry = budgetRegistry('/ss-budget-big')
    const text = 'y'.repeat(30 * 1024)
    await registry.create({ cwd: '/w', id: 'big' })
    await registry.append('big', { entries: [message(user(text)), message(assistant('ok'))] }, {})
    for (let i = 0; i < 5; i++) {
      await registry.append('big', { entries: [message(user(text))] }, {})
      // Closing it would only load it again for the next request, the whole file each time.
      expect(registry.openStats()).toMatchObject({ sessions: 1 })
    }
    expect(registry.openStats().bytes).toBeGreaterThan(100 * 1024)
    await registry.create({ cwd: '/w', id: 'small' })
    await registry.append('small', { entries: [message(user('hi')), message(assistant('ok'))] }, {})
    expect(registry.openStats().sessions).toBe(1)
    expect(registry.openStats().bytes).toBeLessThanOrEqual(100 * 1024)
    expect((await registry.get('big')).entryCount).toBe(7)
    await registry.close()
  })
})
