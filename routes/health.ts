/** Liveness and readiness probes (API.md "Health and docs"). */
import { join } from 'node:path'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { NotReady } from '../src/errors.js'
import type { SessionStorage } from '../src/storage/types.js'
import { Healthz, Readyz } from './health.schema.js'

export interface HealthOptions {
  /** The session storage whose writability `/readyz` proves. */
  storage: SessionStorage
}

let probes = 0

/** Writes and removes a small file under `dataDir`; rejects when storage cannot write. */
async function probeWritable (storage: SessionStorage, dataDir: string): Promise<void> {
  const path = join(dataDir, `.readyz-${process.pid}-${++probes}`)
  try {
    await storage.writeText(path, 'ok\n')
  } catch (err) {
    await storage.unlink(path).catch(() => {})
    throw err
  }
  await storage.unlink(path)
}

const health: FastifyPluginAsyncTypebox<HealthOptions> = async (app, { storage }) => {
  app.get('/healthz', { schema: Healthz, config: { scope: 'public' } }, async () => ({ status: 'ok' as const }))

  // Public, but shed under load like the API: an overloaded server is not ready for more traffic.
  app.get('/readyz', { schema: Readyz, config: { scope: 'public', shedLoad: true } }, async () => {
    try {
      await probeWritable(storage, app.config.dataDir)
    } catch (err) {
      throw new NotReady('storage is not writable', { cause: err })
    }
    if (!await app.tenants.isReady()) throw new NotReady('session registry is not ready')
    return { status: 'ok' as const }
  })
}

export default health
