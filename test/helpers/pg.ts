/**
 * A database of its own for each PostgreSQL test file: `ss_test_<random>` is created through
 * the maintenance database of `TEST_DATABASE_URL` (default: the local server, user postgres)
 * and dropped afterwards, so parallel runs never meet. Without a reachable server the suites
 * are skipped with a message, except under CI, where .ci/run starts PostgreSQL and its
 * absence must fail the run.
 */
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { afterAll, beforeAll } from 'vitest'
import { migrate } from '../../src/storage/postgres/migrate.js'
import { createPool } from '../../src/storage/postgres/pool.js'

export const ADMIN_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'

async function reachable (): Promise<boolean> {
  const client = new pg.Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 3000 })
  try {
    await client.connect()
    await client.end()
    return true
  } catch {
    return false
  }
}

/** True when the suites can run; under CI an unreachable server throws instead. */
export const pgAvailable: boolean = await reachable()
if (!pgAvailable) {
  if (process.env.CI === 'true') throw new Error(`PostgreSQL is not reachable at ${ADMIN_URL}; .ci/run starts it`)
  process.stderr.write(`PostgreSQL is not reachable at ${ADMIN_URL}: its suites are skipped\n`)
}

export interface TestDatabase {
  url: string
  name: string
  drop: () => Promise<void>
}

/** Creates an empty database; `drop()` removes it (closing any connection left to it). */
export async function createTestDatabase (): Promise<TestDatabase> {
  const name = `ss_test_${randomBytes(6).toString('hex')}`
  const admin = new pg.Client({ connectionString: ADMIN_URL })
  await admin.connect()
  try {
    await admin.query(`CREATE DATABASE ${name}`)
  } finally {
    await admin.end()
  }
  const url = new URL(ADMIN_URL)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    name,
    drop: async () => {
      const c = new pg.Client({ connectionString: ADMIN_URL })
      await c.connect()
      try {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      } finally {
        await c.end()
      }
    },
  }
}

/**
 * A migrated database of the suite's own, with one pool of `max` connections: made before the
 * suite's tests and dropped after them. Read `db` and `pool` inside tests and hooks.
 */
export function useMigratedDatabase (max = 4): { readonly db: TestDatabase, readonly pool: pg.Pool } {
  let db: TestDatabase | undefined
  let pool: pg.Pool | undefined
  beforeAll(async () => {
    db = await createTestDatabase()
    pool = createPool(db.url, { max })
    await migrate(pool)
  })
  afterAll(async () => {
    await pool?.end()
    await db?.drop()
  })
  return {
    get db () { if (db === undefined) throw new Error('the database is made before the tests'); return db },
    get pool () { if (pool === undefined) throw new Error('the pool is made before the tests'); return pool },
  }
}
