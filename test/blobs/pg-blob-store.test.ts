import { randomBytes } from 'node:crypto'
import { describe, expect, it, vi } from 'vitest'
import { sha256Hex } from '../../src/blobs/hash.js'
import { PgBlobStore } from '../../src/storage/postgres/pg-blob-store.js'
import { createPool } from '../../src/storage/postgres/pool.js'
import { pgAvailable, useMigratedDatabase } from '../helpers/pg.js'
import { ABC_HASH, blobContract } from './contract.js'

describe.runIf(pgAvailable)('PgBlobStore', () => {
  const database = useMigratedDatabase(12)

  /** A tenant no other test uses, so each test starts with an empty store. */
  const freshTenant = (): string => `t${randomBytes(5).toString('hex')}`

  const countOf = async (tenant: string): Promise<number> =>
    Number((await database.pool.query('SELECT count(*) AS n FROM ss_blobs WHERE tenant = $1', [tenant])).rows[0].n)

  blobContract('PgBlobStore', async () => {
    const tenant = freshTenant()
    return { store: new PgBlobStore(database.pool, tenant, { chunkBytes: 64 * 1024, listPage: 2 }), count: async () => await countOf(tenant), cleanup: async () => {} }
  })

  it('keeps tenants apart: a blob of one tenant is absent for another', async () => {
    const a = new PgBlobStore(database.pool, freshTenant())
    const b = new PgBlobStore(database.pool, freshTenant())
    await a.put(Buffer.from('abc'))
    expect(await b.has(ABC_HASH)).toBe(false)
    expect(await b.get(ABC_HASH)).toBeNull()
    expect(await b.open(ABC_HASH)).toBeNull()
    expect((await b.put(Buffer.from('abc'))).created).toBe(true)
  })

  it('records the sniffed media type and the size of each blob', async () => {
    const tenant = freshTenant()
    const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), randomBytes(100)])
    await new PgBlobStore(database.pool, tenant).put(png)
    const { rows } = await database.pool.query('SELECT media_type, size FROM ss_blobs WHERE tenant = $1', [tenant])
    expect(rows).toEqual([{ media_type: 'image/png', size: '108' }])
  })

  it('streams a blob one slice per statement, never selecting the whole value', async () => {
    const store = new PgBlobStore(database.pool, freshTenant(), { chunkBytes: 100_000 })
    const bytes = randomBytes(450_000)
    const { hash } = await store.put(bytes)
    const queries = vi.spyOn(database.pool, 'query')
    const reader = await store.open(hash)
    const chunks: Buffer[] = []
    for await (const chunk of reader?.stream() ?? []) chunks.push(chunk as Buffer)
    const texts = queries.mock.calls.map((call) => String(call[0]))
    queries.mockRestore()
    expect(chunks.map((c) => c.length)).toEqual([100_000, 100_000, 100_000, 100_000, 50_000])
    expect(sha256Hex(Buffer.concat(chunks))).toBe(hash)
    expect(texts).toHaveLength(6)
    expect(texts.every((t) => t.includes('substring(data FROM'))).toBe(true)
  })

  it('a large put of bytes already stored marks them put first and sends nothing again', async () => {
    const store = new PgBlobStore(database.pool, freshTenant())
    const bytes = randomBytes(200_000)
    expect((await store.put(bytes)).created).toBe(true)
    const queries = vi.spyOn(database.pool, 'query')
    expect((await store.put(bytes)).created).toBe(false)
    const texts = queries.mock.calls.map((call) => String(call[0]))
    queries.mockRestore()
    expect(texts).toEqual([expect.stringMatching(/^UPDATE ss_blobs SET touched_at = now\(\)/)])
  })

  it('a put is committed on return: another database.pool sees it at once', async () => {
    const tenant = freshTenant()
    const { hash } = await new PgBlobStore(database.pool, tenant).put(Buffer.from('durable'))
    const other = createPool(database.db.url, { max: 1 })
    try {
      expect((await new PgBlobStore(other, tenant).get(hash))?.toString()).toBe('durable')
    } finally {
      await other.end()
    }
  })

  it('an unreachable database gives 503 SS_DATABASE_UNAVAILABLE on every operation', async () => {
    const down = createPool('postgres://postgres@127.0.0.1:1/none', { max: 1, connectTimeoutMs: 500 })
    const store = new PgBlobStore(down, 'default')
    const unavailable = { code: 'SS_DATABASE_UNAVAILABLE', statusCode: 503 }
    try {
      await expect(store.put(Buffer.from('abc'))).rejects.toMatchObject(unavailable)
      await expect(store.get(ABC_HASH)).rejects.toMatchObject(unavailable)
      await expect(store.has(ABC_HASH)).rejects.toMatchObject(unavailable)
      await expect(store.open(ABC_HASH)).rejects.toMatchObject(unavailable)
      await expect(store.list()[Symbol.asyncIterator]().next()).rejects.toMatchObject(unavailable)
    } finally {
      await down.end()
    }
  })
})
