/**
 * Opens the session storage a server runs on (`STORAGE`): `disk` and `memory` at once; for
 * `postgres` the instance lock held shared with other servers (instance-lock.ts: only a store
 * migration is kept out), the process's one pool on `DATABASE_URL`, the schema migrations
 * applied, then the storage with its catalog loaded and following the changes of the other
 * servers on the database. `close()` stops that, ends the pool and drops the lock, after
 * everything using them closed.
 */
import { createBlobStore, type BlobStoreFactory } from '../blobs/index.js'
import type { Config } from '../config.js'
import { InvalidConfig } from '../errors.js'
import { silentLogger, type Logger } from '../session/logger.js'
import { createStorage } from './index.js'
import { acquireInstanceLock } from './postgres/instance-lock.js'
import { migrate } from './postgres/migrate.js'
import { PgBlobStore } from './postgres/pg-blob-store.js'
import { PgSessionStorage } from './postgres/pg-session-storage.js'
import { createPool } from './postgres/pool.js'
import { DEFAULT_UNSAVED_MAX_AGE_MS, startPurging } from './postgres/unsaved-sessions.js'
import type { SessionStorage } from './types.js'

export interface OpenedStorage {
  storage: SessionStorage
  /** Each tenant's blob store: files or memory beside the sessions, rows of `ss_blobs` with `postgres`. */
  blobs: BlobStoreFactory
  /** Releases what the storage holds (the database pool); idempotent. */
  close(): Promise<void>
}

export async function openStorage (config: Pick<Config, 'storage' | 'dataDir' | 'databaseUrl'> & Partial<Pick<Config, 'unsavedSessionMaxAgeMs'>>, logger: Logger = silentLogger): Promise<OpenedStorage> {
  const kind = config.storage
  if (kind !== 'postgres') {
    return { storage: createStorage(kind), blobs: (root) => createBlobStore(kind, root), close: async () => {} }
  }
  if (config.databaseUrl === undefined) throw new InvalidConfig('DATABASE_URL', 'required with STORAGE=postgres')
  const lock = await acquireInstanceLock(config.databaseUrl, 'server')
  const pool = createPool(config.databaseUrl, { logger })
  let storage: PgSessionStorage | undefined
  let stopPurging: (() => void) | undefined
  const close = async (): Promise<void> => {
    try {
      stopPurging?.()
      await storage?.close()
      await pool.end()
    } finally {
      await lock.release()
    }
  }
  try {
    await migrate(pool, { logger })
    storage = await PgSessionStorage.open(pool, { dataDir: config.dataDir, listenUrl: config.databaseUrl, logger })
    stopPurging = await startPurging(pool, config.unsavedSessionMaxAgeMs ?? DEFAULT_UNSAVED_MAX_AGE_MS, logger)
    return { storage, blobs: (_root, tenant) => new PgBlobStore(pool, tenant), close }
  } catch (err) {
    await close()
    throw err
  }
}
