/**
 * Load shedding per tenant: while the event loop's mean delay is above MAX_EVENT_LOOP_DELAY_MS,
 * routes that shed load (src/plugins/route-access.ts: every route that is not public, and
 * /readyz) answer 503 `SS_OVERLOADED` with `Retry-After`, but only for the tenants that took at
 * least an equal share of the server's recent time (src/http/tenant-load.ts): the tenant that
 * causes the lag is refused, the others go on. Public routes that shed are refused for
 * everyone; liveness and the documentation keep answering.
 *
 * The delay is sampled with `perf_hooks.monitorEventLoopDelay`, which needs no file descriptor.
 * (@fastify/under-pressure is not used: its timer calls `process.memoryUsage()` on every sample,
 * and that throws EMFILE from a timer, killing the process, once descriptors run out.)
 * The first samples after start-up measure the start-up itself (module loading, schema
 * compilation), not load, so shedding starts `GRACE_SAMPLES` samples after the app is ready.
 * The hook runs after authentication (src/plugins/access.ts), when the tenant is known.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import type { Tenant } from '../auth/tenants.js'
import { Overloaded } from '../errors.js'
import { TenantLoad } from '../http/tenant-load.js'

/** How often the event-loop delay is sampled, in ms. */
export const SAMPLE_INTERVAL_MS = 1000
/** The histogram's resolution in ms; its own timer adds this much to every sample. */
const RESOLUTION_MS = 10
/** Samples ignored after the app is ready. */
const GRACE_SAMPLES = 2
/** Seconds a shed client should wait: about two samples of the event-loop delay. */
export const OVERLOAD_RETRY_AFTER_S = 2

/** The request's tenant, or undefined on a public route. */
const tenantOf = (req: FastifyRequest): string | undefined => (req.tenant as Tenant | null)?.name

async function overload (app: FastifyInstance): Promise<void> {
  const maxEventLoopDelay = app.config.maxEventLoopDelayMs
  if (maxEventLoopDelay === 0) return
  let armedAt = Number.POSITIVE_INFINITY
  let delay = 0
  const histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS })
  histogram.enable()
  const sampler = setInterval(() => {
    // No sample at all in an interval means the loop never got round to one: as bad as it gets.
    delay = Number.isNaN(histogram.mean) ? Number.POSITIVE_INFINITY : Math.max(0, histogram.mean / 1e6 - RESOLUTION_MS)
    histogram.reset()
  }, SAMPLE_INTERVAL_MS).unref()
  app.addHook('onReady', async () => { armedAt = Date.now() + GRACE_SAMPLES * SAMPLE_INTERVAL_MS })
  app.addHook('onClose', async () => {
    clearInterval(sampler)
    histogram.disable()
  })

  const load = new TenantLoad()
  app.addHook('onResponse', async (req: FastifyRequest, reply: FastifyReply) => {
    const tenant = tenantOf(req)
    if (tenant !== undefined && req.routeOptions.config.stream !== true) load.record(tenant, reply.elapsedTime)
  })
  app.addHook('onRequest', async (req: FastifyRequest, reply: FastifyReply) => {
    if (delay <= maxEventLoopDelay || req.routeOptions.config.shedLoad !== true || Date.now() < armedAt) return
    const tenant = tenantOf(req)
    if (tenant !== undefined && !load.isHeavy(tenant)) return
    req.log.debug({ delay, tenant }, 'request shed under load')
    reply.header('retry-after', String(OVERLOAD_RETRY_AFTER_S))
    throw new Overloaded()
  })
}

export default fp(overload, { name: 'overload', fastify: '5.x', dependencies: ['route-access', 'access'] })
