/**
 * Opens the session store a server runs on (`STORAGE`), the one place that knows the backends:
 * - `disk`: the JSONL files under `DATA_DIR` with their index in `DATA_DIR/.session-store/`;
 * - `memory`: the same store over a map (nothing survives a restart);
 * - `postgres`: the instance lock held shared with other servers (only a store migration is kept
 *   out), the process's one pool on `DATABASE_URL`, the schema migrated, the rows of an earlier
 *   layout moved forward, and the expiry of unsaved sessions running.
 * `close()` releases all of it, after everything using the store closed.
 */
import { createBlobStore, type BlobStoreFactory } from '../blobs/index.js'
import type { Config } from '../config.js'
import { InvalidConfig } from '../errors.js'
import { silentLogger, type Logger } from '../session/logger.js'
import { FileSessionStorage } from './file-session-storage.js'
import { JsonlStore } from './jsonl/jsonl-store.js'
import { acquireInstanceLock } from './postgres/instance-lock.js'
import { migrate } from './postgres/migrate.js'
import { PgBlobStore } from './postgres/pg-blob-store.js'
import { DEFAULT_UNSAVED_MAX_AGE_MS, startPurging } from './postgres/pg-purge.js'
import { PgStore } from './postgres/pg-store.js'
import { upgradeLegacy } from './postgres/pg-upgrade.js'
import { createPool, DEFAULT_DATABASE_TIMEOUT_MS } from './postgres/pool.js'
import type { SessionStore } from './store.js'

export interface OpenedStore {
  store: SessionStore
  /** Each tenant's blob store: files or memory beside the sessions, rows of `ss_blobs` with `postgres`. */
  blobs: BlobStoreFactory
  /** Releases what the store holds (the index, the database pool); idempotent. */
  close(): Promise<void>
}

type StoreConfig = Pick<Config, 'storage' | 'dataDir' | 'databaseUrl'> & Partial<Pick<Config, 'unsavedSessionMaxAgeMs' | 'databaseTimeoutMs' | 'searchIndex'>>

export async function openStore (config: StoreConfig, logger: Logger = silentLogger): Promise<OpenedStore> {
  const kind = config.storage
  if (kind !== 'postgres') {
    const store = kind === 'disk'
      ? JsonlStore.open({ dataDir: config.dataDir, storage: new FileSessionStorage(), logger, searchIndex: config.searchIndex })
      : JsonlStore.inMemory(config.dataDir, undefined, logger, config.searchIndex)
    let closed: Promise<void> | undefined
    return { store, blobs: (root) => createBlobStore(kind, root), close: async () => { closed ??= store.close(); await closed } }
  }
  if (config.databaseUrl === undefined) throw new InvalidConfig('DATABASE_URL', 'required with STORAGE=postgres')
  const lock = await acquireInstanceLock(config.databaseUrl, 'server')
  const timeoutMs = config.databaseTimeoutMs ?? DEFAULT_DATABASE_TIMEOUT_MS
  const pool = createPool(config.databaseUrl, { logger, connectTimeoutMs: timeoutMs, statementTimeoutMs: timeoutMs })
  let store: PgStore | undefined
  let stopPurging: (() => void) | undefined
  let closed: Promise<void> | undefined
  const close = async (): Promise<void> => {
    try {
      stopPurging?.()
      await store?.close()
      await pool.end()
    } finally {
      await lock.release()
    }
  }
  try {
    // Migrations and the move of an older database's rows may run long: a pool of their own, with no statement timeout.
    const maintenance = createPool(config.databaseUrl, { max: 2, connectTimeoutMs: timeoutMs, statementTimeoutMs: 0, logger })
    try {
      await migrate(maintenance, { logger })
      await upgradeLegacy(maintenance, config.dataDir, logger)
    } finally {
      await maintenance.end()
    }
    store = await PgStore.open(pool, { listenUrl: config.databaseUrl, logger, timeoutMs, searchIndex: config.searchIndex })
    stopPurging = await startPurging(pool, config.unsavedSessionMaxAgeMs ?? DEFAULT_UNSAVED_MAX_AGE_MS, logger)
    return { store, blobs: (_root, tenant) => new PgBlobStore(pool, tenant), close: async () => { closed ??= close(); await closed } }
  } catch (err) {
    await close()
    throw err
  }
}
