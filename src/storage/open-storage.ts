/**
 * Opens the session storage a server runs on (`STORAGE`): `disk` and `memory` at once; for
 * `postgres` the instance lock (instance-lock.ts), the process's one pool on `DATABASE_URL`, the
 * schema migrations applied, then the storage with its catalog loaded. `close()` ends the pool
 * and drops the lock, after everything using them closed.
 */
import type { Config } from '../config.js'
import { InvalidConfig } from '../errors.js'
import { silentLogger, type Logger } from '../session/logger.js'
import { createStorage } from './index.js'
import { acquireInstanceLock } from './postgres/instance-lock.js'
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
  const lock = await acquireInstanceLock(config.databaseUrl)
  const pool = createPool(config.databaseUrl, { logger })
  const close = async (): Promise<void> => {
    try {
      await pool.end()
    } finally {
      await lock.release()
    }
  }
  try {
    await migrate(pool, { logger })
    const storage = await PgSessionStorage.open(pool, { dataDir: config.dataDir })
    return { storage, close }
  } catch (err) {
    await close()
    throw err
  }
}
