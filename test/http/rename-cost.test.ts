/**
 * A title change must rewrite the whole session file (SPEC.md §6.7, §12.49), so its cost is
 * bounded instead: a PATCH that changes nothing rewrites nothing, and the bytes that title
 * changes may rewrite per tenant per window are capped (MAX_REWRITE_BYTES, 429 beyond).
 */
import { afterEach, describe, expect, it } from 'vitest'
import type { App } from '../../src/app.js'
import type { Config } from '../../src/config.js'
import { MemorySessionStorage } from '../../src/storage/index.js'
import { buildTestApp } from '../helpers/app.js'
import { append, assistant, createSession, message, user } from './session-helpers.js'

/** Memory storage that counts atomic renames (the last step of every full rewrite). */
class CountingStorage extends MemorySessionStorage {
  renames = 0
  override async rename (from: string, to: string): Promise<void> {
    this.renames++
    await super.rename(from, to)
  }
}

let app: App
let storage: CountingStorage
afterEach(async () => { await app.close() })

async function bigSession (config: Partial<Config>): Promise<string> {
  storage = new CountingStorage()
  app = await buildTestApp({ storage, config })
  const s = await createSession(app)
  await append(app, s.header.id, message(user('x'.repeat(100_000))))
  await append(app, s.header.id, message(assistant()))
  return s.header.id
}

const patch = async (id: string, title: string) => await app.inject({ method: 'PATCH', url: `/v1/sessions/${id}`, payload: { title } })
const renames = (): number => storage.renames

describe('PATCH /v1/sessions/{id} cost', () => {
  it('a title that does not change rewrites nothing and keeps the etag', async () => {
    const id = await bigSession({})
    const first = await patch(id, 'T')
    expect(first.statusCode).toBe(200)
    const before = renames()
    const again = await patch(id, 'T')
    expect(again.statusCode).toBe(200)
    expect(renames()).toBe(before)
    expect(again.json().etag).toBe(first.json().etag)
  })

  it('past MAX_REWRITE_BYTES in the window the tenant gets 429 SS_REWRITE_BUDGET_SPENT with Retry-After, and the file stays', async () => {
    const id = await bigSession({ maxRewriteBytes: 250_000 })
    expect((await patch(id, 'one')).statusCode).toBe(200)
    expect((await patch(id, 'two')).statusCode).toBe(200)
    const before = renames()
    const third = await patch(id, 'three')
    expect([third.statusCode, third.json().code]).toEqual([429, 'SS_REWRITE_BUDGET_SPENT'])
    expect(Number(third.headers['retry-after'])).toBeGreaterThan(0)
    expect(renames()).toBe(before)
    expect((await app.inject({ method: 'GET', url: `/v1/sessions/${id}` })).json().header.title).toBe('two')
    // Appends are not title changes: they go on.
    expect((await append(app, id, message(user('more')))).persisted).toBe(true)
  })

  it('a deferred session (no file yet) costs nothing', async () => {
    storage = new CountingStorage()
    app = await buildTestApp({ storage, config: { maxRewriteBytes: 1 } })
    const s = await createSession(app)
    for (const title of ['a', 'b', 'c']) expect((await patch(s.header.id, title)).statusCode).toBe(200)
  })
})
