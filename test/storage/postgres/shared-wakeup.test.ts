/**
 * Two registries on one database, as two servers are: what the server holding a session open
 * asks the database when another server appends to it, before its listeners are woken.
 */
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { MemoryBlobStore } from '../../../src/blobs/index.js'
import { createRegistry, type SessionRegistry } from '../../../src/registry/session-registry.js'
import { migrate } from '../../../src/storage/postgres/migrate.js'
import { PgSessionStorage } from '../../../src/storage/postgres/pg-session-storage.js'
import { createPool } from '../../../src/storage/postgres/pool.js'
import { assistant, message, user } from '../../http/session-helpers.js'
import { createTestDatabase, pgAvailable, type TestDatabase } from '../../helpers/pg.js'
import { until } from './pg-context.js'

interface Server { pool: pg.Pool, storage: PgSessionStorage, registry: SessionRegistry, clients: Set<pg.Client> }

describe.runIf(pgAvailable)('a server woken by another server\'s append', () => {
  let db: TestDatabase
  const servers: Server[] = []

  async function server (dataDir: string): Promise<Server> {
    const pool = createPool(db.url, { max: 4 })
    const clients = new Set<pg.Client>()
    pool.on('acquire', (client) => { clients.add(client) })
    // No periodic comparison during the test: only notifications move the catalog.
    const storage = await PgSessionStorage.open(pool, { dataDir, listenUrl: db.url, resyncMs: 600_000 })
    const registry = createRegistry({ dataDir, storage, blobs: new MemoryBlobStore(), maxOpenSessions: 100 })
    const s = { pool, storage, registry, clients }
    servers.push(s)
    return s
  }

  beforeAll(async () => {
    db = await createTestDatabase()
    const pool = createPool(db.url, { max: 1 })
    await migrate(pool)
    await pool.end()
  })

  afterAll(async () => {
    for (const s of servers) {
      await s.registry.close()
      await s.storage.close()
      await s.pool.end()
    }
    await db?.drop()
  })

  it('reads only the entries after those it holds, in one statement after one catalog re-read, then wakes the listeners', async () => {
    const a = await server('/wake-a')
    const b = await server('/wake-b')
    const id = (await a.registry.create({ cwd: '/w' })).header.id
    await a.registry.append(id, { entries: [message(user('hello')), message(assistant('hi'))] })
    await b.storage.sync()
    expect((await b.registry.get(id)).header.id).toBe(id)
    let wakes = 0
    const stop = await b.registry.subscribe(id, () => { wakes++ })
    const statements = vi.spyOn(pg.Client.prototype, 'query')
    try {
      const { result } = await a.registry.append(id, message(user('again')))
      expect(result.persisted).toBe(true)
      await until(() => wakes > 0 && b.registry.readVisibleNow(id, 2, 10)?.length === 1)
      const ofB = statements.mock.calls.filter((_, i) => b.clients.has(statements.mock.contexts[i] as pg.Client))
        .map(([q]) => typeof q === 'string' ? q : (q as { text: string }).text)
      expect(ofB).toHaveLength(2)
      expect(ofB[0]).toMatch(/FROM ss_sessions s WHERE s\.path = \$1/)
      expect(ofB[1]).toMatch(/e\.seq > \$2/)
    } finally {
      statements.mockRestore()
      stop()
    }
    expect(b.registry.readVisibleNow(id, 0, 10)?.map((e) => (e as { message?: { content?: unknown } }).message?.content))
      .toEqual((await a.registry.readVisible(id, 0, 10)).map((e) => (e as { message?: { content?: unknown } }).message?.content))
  })
})
