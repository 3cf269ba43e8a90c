/**
 * Opens the session storage a server runs on (`STORAGE`): `disk` and `memory` at once; for
 * `postgres` the process's one pool on `DATABASE_URL`, the schema migrations applied, then the
 * storage with its catalog loaded. `close()` ends the pool after everything using it closed.
 */
import type { Config } from '../config.js'
import { InvalidConfig } from '../errors.js'
import { silentLogger, type Logger } from '../session/logger.js'
import { createStorage } from './index.js'
import { migrate } from './postgres/migrate.js'
import { PgSessionStorage } from './postgres/pg-session-storage.js'
import { createPool } from './postgres/pool.js'
import type { SessionStorage } from './types.js'

export interface OpenedStorage {
  storage: SessionStorage
  /** Releases what the storage holds (the database pool); idempotent. */
  close(): Promise<void>
}

export async function openStorage (config: Pick<Config, 'storage' | 'dataDir' | 'databaseUrl'>, logger: Logger = silentLogger): Promise<OpenedStorage> {
  if (config.storage !== 'postgres') return { storage: createStorage(config.storage), close: async () => {} }
  if (config.databaseUrl === undefined) throw new InvalidConfig('DATABASE_URL', 'required with STORAGE=postgres')
  const pool = createPool(config.databaseUrl, { logger })
  try {
    await migrate(pool, { logger })
    const storage = await PgSessionStorage.open(pool, { dataDir: config.dataDir })
    return { storage, close: async () => { await pool.end() } }
  } catch (err) {
    await pool.end()
    throw err
  }
}
