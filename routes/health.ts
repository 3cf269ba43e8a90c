/** Liveness and readiness probes (API.md "Health and docs"). */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { NotReady } from '../src/errors.js'
import type { SessionStore } from '../src/storage/store.js'
import { Healthz, Readyz } from './health.schema.js'

export interface HealthOptions {
  /** The session store whose writability `/readyz` proves. */
  store: SessionStore
}

/**
 * How long, in ms, a /readyz storage probe answers for: within it every probe shares the last
 * result (and concurrent ones the probe in flight), so that a flood of probes costs no file
 * creations and removals (or database round trips).
 */
export const READY_PROBE_TTL_MS = 1000

/** `check`, run at most once per READY_PROBE_TTL_MS; its result (or failure) is shared. */
function cached (check: () => Promise<void>): () => Promise<void> {
  let last: { at: number, result: Promise<void> } | undefined
  return async () => {
    const now = Date.now()
    if (last === undefined || now - last.at >= READY_PROBE_TTL_MS) {
      const result = check()
      result.catch(() => {}) // a failure is answered by whoever awaits it
      last = { at: now, result }
    }
    await last.result
  }
}

const health: FastifyPluginAsyncTypebox<HealthOptions> = async (app, { store }) => {
  app.get('/healthz', { schema: Healthz, config: { scope: 'public' } }, async () => ({ status: 'ok' as const }))

  const ready = cached(async () => {
    if (!await store.writable()) throw new NotReady('storage is not writable')
    if (!app.tenants.isReady()) throw new NotReady('session registry is not ready')
  })
  // Public, but shed under load like the API: an overloaded server is not ready for more traffic.
  app.get('/readyz', { schema: Readyz, config: { scope: 'public', shedLoad: true } }, async () => {
    await ready()
    return { status: 'ok' as const }
  })
}

export default health
