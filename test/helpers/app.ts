/**
 * The app every HTTP test builds: memory storage, memory blobs and the real session registry.
 * With TEST_STORAGE=postgres the sessions are kept in PostgreSQL instead (test/helpers/pg-storage.ts),
 * each app in a schema of its own. Close it with `app.close()`; that also closes the registry
 * (and the database storage).
 */
import { join } from 'node:path'
import { buildApp, type App, type AppDeps } from '../../src/app.js'
import { DEFAULT_TENANT } from '../../src/auth/tokens.js'
import { FileBlobStore, MemoryBlobStore } from '../../src/blobs/index.js'
import { loadConfig, registryLimits, type Config } from '../../src/config.js'
import { createRegistry } from '../../src/registry/session-registry.js'
import { FileSessionStorage, MemorySessionStorage } from '../../src/storage/index.js'
import { onPostgres, openTestPgStorage } from './pg-storage.js'

export interface TestAppOverrides extends Partial<Omit<AppDeps, 'config'>> {
  config?: Partial<Config>
}

/** Defaults for tests: memory storage under a fixed, never-touched path. */
export function testConfig (overrides: Partial<Config> = {}): Config {
  return { ...loadConfig({ STORAGE: 'memory', DATA_DIR: '/session-store-test' }), ...overrides }
}

export async function buildTestApp (overrides: TestAppOverrides = {}): Promise<App> {
  const config = testConfig(overrides.config)
  const pgStorage = overrides.storage === undefined && onPostgres ? await openTestPgStorage(config.dataDir) : undefined
  const storage = overrides.storage ?? pgStorage?.storage ?? new MemorySessionStorage()
  // On PostgreSQL the blobs are rows too, unless the test brings its own store.
  const blobs = overrides.blobs ?? pgStorage?.blobs(config.dataDir, DEFAULT_TENANT) ?? new MemoryBlobStore()
  try {
    const registry = overrides.registry ?? createRegistry({
      dataDir: config.dataDir, storage, blobs, maxOpenSessions: config.maxOpenSessions, limits: registryLimits(config),
    })
    const app = await buildApp({
      config,
      storage,
      blobs,
      ...(overrides.blobs === undefined && pgStorage !== undefined ? { blobStores: pgStorage.blobs } : {}),
      registry,
      logger: overrides.logger ?? false,
      ...(overrides.tokens === undefined ? {} : { tokens: overrides.tokens }),
      ...(overrides.tenants === undefined ? {} : { tenants: overrides.tenants }),
    })
    app.addHook('onClose', async () => {
      await registry.close()
      await pgStorage?.close()
    })
    return app
  } catch (err) {
    await pgStorage?.close()
    throw err
  }
}

/** The same app on the disk storage under `dataDir` (sessions and blobs written for real). */
export async function buildDiskTestApp (dataDir: string): Promise<App> {
  return await buildTestApp({ config: { dataDir, storage: 'disk' }, storage: new FileSessionStorage(), blobs: new FileBlobStore(join(dataDir, 'blobs')) })
}
