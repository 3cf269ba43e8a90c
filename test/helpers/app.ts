/**
 * The app every HTTP test builds: the memory store, memory blobs and the real session registry.
 * With TEST_STORAGE=postgres the sessions are kept in PostgreSQL instead (test/helpers/pg-storage.ts),
 * each app in a schema of its own. Close it with `app.close()`; that also closes the registry
 * and the store the helper opened.
 */
import { join } from 'node:path'
import { buildApp, type App, type AppDeps } from '../../src/app.js'
import { DEFAULT_TENANT } from '../../src/auth/tokens.js'
import { FileBlobStore, MemoryBlobStore } from '../../src/blobs/index.js'
import { loadConfig, registryLimits, type Config } from '../../src/config.js'
import { createRegistry } from '../../src/registry/session-registry.js'
import { FileSessionStorage, type SessionStorage } from '../../src/storage/index.js'
import { JsonlStore } from '../../src/storage/jsonl/jsonl-store.js'
import type { SessionStore } from '../../src/storage/store.js'
import { onPostgres, openTestPgStore } from './pg-storage.js'

export interface TestAppOverrides extends Partial<Omit<AppDeps, 'config'>> {
  config?: Partial<Config>
  /** The files the app's store keeps its sessions in (a memory store over them, or the disk store with `config.storage: 'disk'`). */
  storage?: SessionStorage
}

/** Defaults for tests: memory storage under a fixed, never-touched path. */
export function testConfig (overrides: Partial<Config> = {}): Config {
  return { ...loadConfig({ STORAGE: 'memory', DATA_DIR: '/session-store-test' }), ...overrides }
}

/** The JSONL store over `storage` (on disk with its index file when `config.storage` is `disk`). */
export function jsonlStoreOf (config: Config, storage: SessionStorage): JsonlStore {
  return config.storage === 'disk' ? JsonlStore.open({ dataDir: config.dataDir, storage }) : JsonlStore.inMemory(config.dataDir, storage)
}

export async function buildTestApp (overrides: TestAppOverrides = {}): Promise<App> {
  const config = testConfig(overrides.config)
  const given = overrides.store !== undefined || overrides.storage !== undefined
  const pg = !given && onPostgres ? await openTestPgStore(config.dataDir) : undefined
  const own: SessionStore | undefined = overrides.store === undefined && pg === undefined
    ? (overrides.storage === undefined ? JsonlStore.inMemory(config.dataDir) : jsonlStoreOf(config, overrides.storage))
    : undefined
  const store = overrides.store ?? pg?.store ?? own as SessionStore
  // On PostgreSQL the blobs are rows too, unless the test brings its own store.
  const blobs = overrides.blobs ?? pg?.blobs(config.dataDir, DEFAULT_TENANT) ?? new MemoryBlobStore()
  try {
    const registry = overrides.registry ?? createRegistry({
      tenant: DEFAULT_TENANT, dataDir: config.dataDir, store, blobs, maxOpenSessions: config.maxOpenSessions, limits: registryLimits(config),
    })
    const app = await buildApp({
      config,
      store,
      blobs,
      ...(overrides.blobs === undefined && pg !== undefined ? { blobStores: pg.blobs } : {}),
      registry,
      logger: overrides.logger ?? false,
      ...(overrides.tokens === undefined ? {} : { tokens: overrides.tokens }),
      ...(overrides.tenants === undefined ? {} : { tenants: overrides.tenants }),
    })
    app.addHook('onClose', async () => {
      await registry.close()
      await own?.close()
      await pg?.close()
    })
    return app
  } catch (err) {
    await own?.close()
    await pg?.close()
    throw err
  }
}

/** The same app on the disk storage under `dataDir` (sessions and blobs written for real). */
export async function buildDiskTestApp (dataDir: string): Promise<App> {
  return await buildTestApp({ config: { dataDir, storage: 'disk' }, storage: new FileSessionStorage(), blobs: new FileBlobStore(join(dataDir, 'blobs')) })
}
