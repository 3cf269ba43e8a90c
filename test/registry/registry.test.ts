/**
 * The registry without HTTP: group commit, LRU eviction, one load per session, the start-up
 * index, etags across eviction and restart.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it, vi, type MockInstance } from 'vitest'
import { MemoryBlobStore } from '../../src/blobs/index.js'
import type { SessionRegistry } from '../../src/registry/session-registry.js'
import { encodeCwd } from '../../src/session/cwd.js'
import type { JsonlStore } from '../../src/storage/jsonl/jsonl-store.js'
import { storeStack, type Stack } from '../helpers/stack.js'
import { FileSessionStorage, MemorySessionStorage, type SessionStorage } from '../../src/storage/index.js'
import { assistant, message, user } from '../http/session-helpers.js'
import { countingStorage } from './counting-storage.js'

const DATA = '/registry-test'
const registries: Stack[] = []
const dirs: string[] = []

const stores = new WeakMap<SessionRegistry, JsonlStore>()

function registry (storage: SessionStorage = new MemorySessionStorage(), maxOpenSessions = 1000, dataDir = DATA): SessionRegistry {
  const stack = storeStack({ dataDir, storage, blobs: new MemoryBlobStore(), maxOpenSessions })
  registries.push(stack)
  stores.set(stack.registry, stack.store)
  return stack.registry
}

/** Counts the loads of `r`'s store from now on. */
const loads = (r: SessionRegistry): MockInstance => vi.spyOn(stores.get(r) as JsonlStore, 'load')

afterEach(async () => {
  vi.restoreAllMocks()
  await Promise.all(registries.splice(0).map(async (r) => { await r.close() }))
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

/** A session with a user and an assistant message, i.e. flushed. */
async function persisted (r: SessionRegistry, cwd = '/w'): Promise<string> {
  const id = (await r.create({ cwd })).header.id
  const { result } = await r.append(id, { entries: [message(user()), message(assistant())] })
  expect(result.persisted).toBe(true)
  return id
}

describe('group commit', () => {
  it('coalesces 20 concurrent appends into a few writes and fsyncs, each durable when answered', async () => {
    const counting = countingStorage(new MemorySessionStorage())
    const r = registry(counting.storage)
    const id = await persisted(r)
    const file = (await r.get(id)).header.id
    counting.writes = 0
    counting.fsyncs = 0
    const results = await Promise.all(Array.from({ length: 20 }, async (_, i) => {
      const { result } = await r.append(id, message(user(`c${i}`)))
      const path = [...counting.synced.keys()].find((p) => p.includes(file)) as string
      const durable = (await counting.storage.readText(path)).slice(0, counting.synced.get(path))
      expect(durable).toContain(`"id":"${result.entries[0]?.id}"`)
      return result
    }))
    expect(results.every((r) => r.persisted)).toBe(true)
    expect(counting.fsyncs).toBeGreaterThanOrEqual(1)
    expect(counting.fsyncs).toBeLessThanOrEqual(3)
    expect(counting.writes).toBeLessThanOrEqual(3)
  })

  it('pays one fsync per append when appends come one after another', async () => {
    const counting = countingStorage(new MemorySessionStorage(), 0)
    const r = registry(counting.storage)
    const id = await persisted(r)
    counting.fsyncs = 0
    for (let i = 0; i < 5; i++) await r.append(id, message(user(`s${i}`)))
    expect(counting.fsyncs).toBe(5)
  })
})

describe('open sessions', () => {
  it('evicts the least recently used session and reopens it on demand', async () => {
    const r = registry(new MemorySessionStorage(), 2)
    const a = await persisted(r)
    const b = await persisted(r)
    const open = loads(r)
    await persisted(r) // a is the least recently used: evicted
    await r.get(b)
    expect(open).not.toHaveBeenCalled()
    expect((await r.get(a)).entryCount).toBe(2)
    expect(open).toHaveBeenCalledTimes(1)
  })

  it('never evicts a deferred session (it lives only in memory)', async () => {
    const r = registry(new MemorySessionStorage(), 1)
    const ids: string[] = []
    for (let i = 0; i < 3; i++) {
      const id = (await r.create({ cwd: '/d' })).header.id
      await r.append(id, message(user(`only ${i}`)))
      ids.push(id)
    }
    for (const id of ids) expect(await r.get(id)).toMatchObject({ entryCount: 1, persisted: false })
  })

  it('shares one open between concurrent requests for an evicted session', async () => {
    const r = registry(new MemorySessionStorage(), 1)
    const a = await persisted(r)
    await persisted(r)
    const open = loads(r)
    const views = await Promise.all(Array.from({ length: 10 }, async () => await r.get(a)))
    expect(open).toHaveBeenCalledTimes(1)
    expect(new Set(views.map((v) => v.etag)).size).toBe(1)
  })

  it('keeps the etag across eviction while nothing changed, including after a rename', async () => {
    const r = registry(new MemorySessionStorage(), 1)
    const a = await persisted(r)
    const renamed = await r.rename(a, 'Title')
    await persisted(r) // evicts a
    expect((await r.get(a)).etag).toBe(renamed.etag)
  })
})

describe('start-up index and restart', () => {
  it('indexes 10,000 session files at start and opens them by id (bench/scale.ts times it)', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'ss-index-'))
    dirs.push(dataDir)
    const ids: string[] = []
    for (let d = 0; d < 100; d++) {
      const dir = join(dataDir, 'sessions', encodeCwd(`/p${d}`))
      mkdirSync(dir, { recursive: true })
      for (let f = 0; f < 100; f++) {
        const id = `s-${d}-${f}`
        ids.push(id)
        const header = { type: 'session', version: 3, id, timestamp: '2026-03-14T15:04:07.123Z', cwd: `/p${d}` }
        writeFileSync(join(dir, `2026-03-14T15-04-07-123Z_x${f}.jsonl`), JSON.stringify(header) + '\n')
      }
    }
    const r = registry(new FileSessionStorage(), 1000, dataDir)
    await stores.get(r)?.ready()
    expect(r.isReady()).toBe(true)
    expect((await r.get('s-99-99')).header.cwd).toBe('/p99')
    const listed = await r.list({ includeEmpty: true, limit: 1000 })
    expect(listed.sessions).toHaveLength(1000)
    expect(listed.nextCursor).not.toBeNull()
  }, 60_000)

  it('serves sessions written before a restart, keeps an unchanged etag and rejects it after a change', async () => {
    const storage = new MemorySessionStorage()
    const first = registry(storage)
    const id = await persisted(first)
    const before = (await first.get(id)).etag
    await first.close()
    await stores.get(first)?.close()
    const second = registry(storage)
    const after = await second.get(id)
    expect(after).toMatchObject({ entryCount: 2, persisted: true, etag: before })
    await second.append(id, message(user('later')))
    await expect(second.rename(id, 'x', before)).rejects.toMatchObject({ statusCode: 412 })
  })

  it('answers 422 for a session file newer than version 3', async () => {
    const storage = new MemorySessionStorage()
    const header = { type: 'session', version: 4, id: 'future', timestamp: '2026-03-14T15:04:07.123Z', cwd: '/f' }
    storage.writeTextSync(join(DATA, 'sessions', encodeCwd('/f'), 'future.jsonl'), JSON.stringify(header) + '\n')
    const r = registry(storage)
    await expect(r.get('future')).rejects.toMatchObject({ statusCode: 422, code: 'SS_SESSION_VERSION_TOO_NEW' })
  })
})
