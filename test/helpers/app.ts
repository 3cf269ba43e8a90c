/**
 * The app every HTTP test builds: memory storage, memory blobs and the real session registry.
 * Close it with `app.close()`; that also closes the registry.
 */
import { join } from 'node:path'
import { buildApp, type App, type AppDeps } from '../../src/app.js'
import { FileBlobStore, MemoryBlobStore } from '../../src/blobs/index.js'
import { loadConfig, registryLimits, type Config } from '../../src/config.js'
import { createRegistry } from '../../src/registry/session-registry.js'
import { FileSessionStorage, MemorySessionStorage } from '../../src/storage/index.js'

export interface TestAppOverrides extends Partial<Omit<AppDeps, 'config'>> {
  config?: Partial<Config>
}

/** Defaults for tests: memory storage under a fixed, never-touched path. */
export function testConfig (overrides: Partial<Config> = {}): Config {
  return { ...loadConfig({ STORAGE: 'memory', DATA_DIR: '/session-store-test' }), ...overrides }
}

export async function buildTestApp (overrides: TestAppOverrides = {}): Promise<App> {
  const config = testConfig(overrides.config)
  const storage = overrides.storage ?? new MemorySessionStorage()
  const blobs = overrides.blobs ?? new MemoryBlobStore()
  const registry = overrides.registry ?? createRegistry({
    dataDir: config.dataDir, storage, blobs, maxOpenSessions: config.maxOpenSessions, limits: registryLimits(config),
  })
  const app = await buildApp({
    config,
    storage,
    blobs,
    registry,
    logger: overrides.logger ?? false,
    ...(overrides.tokens === undefined ? {} : { tokens: overrides.tokens }),
    ...(overrides.tenants === undefined ? {} : { tenants: overrides.tenants }),
  })
  app.addHook('onClose', async () => { await registry.close() })
  return app
}

/** The same app on the disk storage under `dataDir` (sessions and blobs written for real). */
export async function buildDiskTestApp (dataDir: string): Promise<App> {
  return await buildTestApp({ config: { dataDir, storage: 'disk' }, storage: new FileSessionStorage(), blobs: new FileBlobStore(join(dataDir, 'blobs')) })
}
