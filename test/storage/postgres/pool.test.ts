/**
 * The process's pool (src/storage/postgres/pool.ts) when a connection is lost while it is held:
 * the loss is an error of the statement that meets it, never an unhandled `error` event that
 * ends the process, and the pool serves on with a new connection.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPool, transaction } from '../../../src/storage/postgres/pool.js'
import { createTestDatabase, pgAvailable, type TestDatabase } from '../../helpers/pg.js'

describe.runIf(pgAvailable)('a held database connection that is lost', () => {
  let db: TestDatabase
  beforeAll(async () => { db = await createTestDatabase() })
  afterAll(async () => { await db?.drop() })

  it('fails the statement that meets the loss, emits no unhandled error, and the pool goes on', async () => {
    const pool = createPool(db.url, { max: 2 })
    const admin = createPool(db.url, { max: 1 })
    try {
      const held = await pool.connect()
      const { rows } = await held.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')
      // Terminated while held between two statements: the client emits `error` now, with no query running.
      await admin.query('SELECT pg_terminate_backend($1)', [rows[0]?.pid])
      await new Promise((resolve) => setTimeout(resolve, 200))
      await expect(held.query('SELECT 1')).rejects.toThrow()
      held.release(true)
      // A transaction whose connection is lost in the middle fails; the next one runs.
      await expect(transaction(pool, async (client) => {
        const pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid
        await admin.query('SELECT pg_terminate_backend($1)', [pid])
        await new Promise((resolve) => setTimeout(resolve, 200))
        await client.query('SELECT 1')
      })).rejects.toThrow()
      expect(await transaction(pool, async (client) => (await client.query<{ n: number }>('SELECT 1 AS n')).rows[0]?.n)).toBe(1)
    } finally {
      await pool.end()
      await admin.end()
    }
  })
})
