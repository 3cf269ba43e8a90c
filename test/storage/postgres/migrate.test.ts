import type pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { migrate } from '../../../src/storage/postgres/migrate.js'
import { upgradeLegacy } from '../../../src/storage/postgres/pg-upgrade.js'
import { createPool } from '../../../src/storage/postgres/pool.js'
import { silentLogger } from '../../../src/session/logger.js'
import { MIGRATIONS } from '../../../src/storage/postgres/schema.js'
import { createTestDatabase, pgAvailable, type TestDatabase } from '../../helpers/pg.js'

/** The newest version of this build (versions are increasing, not necessarily contiguous). */
const NEWEST = Math.max(...MIGRATIONS.map((m) => m.version))

describe.runIf(pgAvailable)('PostgreSQL schema migrations', () => {
  let db: TestDatabase
  const pools: pg.Pool[] = []
  const pool = (): pg.Pool => { const p = createPool(db.url, { max: 2 }); pools.push(p); return p }

  beforeAll(async () => { db = await createTestDatabase() })
  afterAll(async () => {
    await Promise.all(pools.map(async (p) => await p.end()))
    await db?.drop()
  })

  it('applies every migration once, even when two servers start at the same moment', async () => {
    const [a, b] = await Promise.all([migrate(pool()), migrate(pool())])
    expect([...a.applied, ...b.applied].sort((x, y) => x - y)).toEqual(MIGRATIONS.map((m) => m.version))
    // The rows of the earlier layout wait in two tables until a server moves them over (pg-upgrade.ts).
    const tables = async (): Promise<string[]> => (await pool().query("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1"))
      .rows.map((r: { table_name: string }) => r.table_name)
    expect(await tables()).toEqual([
      'ss_answers', 'ss_blobs', 'ss_breadcrumbs', 'ss_legacy_files', 'ss_legacy_sessions', 'ss_lines', 'ss_schema_migrations', 'ss_search', 'ss_search_queue', 'ss_sessions',
    ])
    await upgradeLegacy(pool(), '/data', silentLogger)
    expect(await tables()).toEqual(['ss_answers', 'ss_blobs', 'ss_breadcrumbs', 'ss_lines', 'ss_schema_migrations', 'ss_search', 'ss_search_queue', 'ss_sessions'])
  })

  it('is idempotent: a later start applies nothing', async () => {
    const again = await migrate(pool())
    expect(again).toEqual({ applied: [], version: NEWEST })
  })

  it('refuses a database whose applied migration differs from this build', async () => {
    const changed = MIGRATIONS.map((m) => m.version === 1 ? { ...m, sql: m.sql + '\n-- changed' } : m)
    await expect(migrate(pool(), { migrations: changed })).rejects.toMatchObject({ code: 'SS_INVALID_CONFIG', message: expect.stringContaining('migration 1') })
  })

  it('refuses a database with a schema newer than this build, and applies a new migration in order', async () => {
    const version = NEWEST + 1
    const next = [...MIGRATIONS, { version, name: 'probe', sql: 'CREATE TABLE ss_probe (x int)' }]
    expect((await migrate(pool(), { migrations: next })).applied).toEqual([version])
    await expect(migrate(pool())).rejects.toMatchObject({ code: 'SS_INVALID_CONFIG', message: expect.stringContaining('newer') })
  })
})
