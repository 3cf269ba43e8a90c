/**
 * The backends the storage hygiene suites run on: the test app's own (memory, or PostgreSQL in
 * the postgres project) and the disk (JSONL files, their index and blob files in a temporary
 * DATA_DIR, removed when the app closes).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { App } from '../../src/app.js'
import { FileBlobStore } from '../../src/blobs/index.js'
import type { Config } from '../../src/config.js'
import { FileSessionStorage } from '../../src/storage/index.js'
import { buildTestApp } from '../helpers/app.js'

export const BACKENDS = ['the test storage', 'disk'] as const
export type Backend = typeof BACKENDS[number]

export async function buildOnBackend (backend: Backend, config: Partial<Config>): Promise<App> {
  if (backend !== 'disk') return await buildTestApp({ config })
  const dataDir = mkdtempSync(join(tmpdir(), 'ss-hygiene-'))
  const app = await buildTestApp({
    config: { ...config, dataDir, storage: 'disk' }, storage: new FileSessionStorage(), blobs: new FileBlobStore(join(dataDir, 'blobs')),
  })
  app.addHook('onClose', async () => { rmSync(dataDir, { recursive: true, force: true }) })
  return app
}
