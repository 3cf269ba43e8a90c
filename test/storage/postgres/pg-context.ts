/**
 * Set-up shared by the PostgreSQL storage suites: a database of the file's own, migrated, and
 * "instances" (each its own pool, session log and notifier, as a server process would have).
 */
import type pg from 'pg'
import { migrate } from '../../../src/storage/postgres/migrate.js'
import { PgNotifier } from '../../../src/storage/postgres/notifier.js'
import { createPool } from '../../../src/storage/postgres/pool.js'
import { PgSessionLog } from '../../../src/storage/postgres/session-log.js'
import { createTestDatabase, type TestDatabase } from '../../helpers/pg.js'

export interface Instance {
  pool: pg.Pool
  log: PgSessionLog
  notifier: PgNotifier
}

export class PgContext {
  db!: TestDatabase
  readonly #instances: Instance[] = []

  async setUp (): Promise<void> {
    this.db = await createTestDatabase()
    const pool = createPool(this.db.url, { max: 1 })
    await migrate(pool)
    await pool.end()
  }

  /** A new instance on the database; its notifier is started. */
  async instance (options: { tailCheckMs?: number, poolMax?: number } = {}): Promise<Instance> {
    const pool = createPool(this.db.url, { max: options.poolMax ?? 5 })
    const notifier = new PgNotifier(this.db.url, pool, { tailCheckMs: options.tailCheckMs ?? 1000, reconnectMs: 50 })
    await notifier.start()
    const instance = { pool, log: new PgSessionLog(pool), notifier }
    this.#instances.push(instance)
    return instance
  }

  async tearDown (): Promise<void> {
    for (const i of this.#instances) {
      await i.notifier.close()
      await i.pool.end()
    }
    await this.db?.drop()
  }
}

let sessions = 0
/** A fresh session id for a test. */
export const sessionId = (): string => `s${++sessions}-${Date.now().toString(36)}`

export const header = (id: string, cwd = '/w'): string =>
  JSON.stringify({ type: 'session', version: 3, id, timestamp: '2026-01-01T00:00:00.000Z', cwd })

export const line = (id: string, text = id): string =>
  JSON.stringify({ type: 'message', id, parentId: null, timestamp: '2026-01-01T00:00:00.000Z', message: { role: 'user', content: [{ type: 'text', text }] } })

/** Resolves once `check` holds, polling every 10 ms; rejects after `ms`. */
export async function until (check: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms
  while (!check()) {
    if (Date.now() > end) throw new Error('condition not met in time')
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}
