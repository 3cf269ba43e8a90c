/**
 * Load shedding with @fastify/under-pressure: while the event loop's mean delay is above
 * MAX_EVENT_LOOP_DELAY_MS, routes that shed load (src/plugins/route-access.ts: every route that
 * is not public, and /readyz) answer 503 `SS_OVERLOADED` with `Retry-After` instead of queueing
 * more work; liveness and the documentation keep answering. No status route: /readyz exists.
 * The first samples after start-up measure the start-up itself (module loading, schema
 * compilation), not load, so shedding starts `GRACE_SAMPLES` samples after the app is ready.
 */
import underPressure from '@fastify/under-pressure'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { Overloaded } from '../errors.js'

/** How often the event-loop delay is sampled, in ms (under-pressure's default). */
export const SAMPLE_INTERVAL_MS = 1000
/** Samples ignored after the app is ready. */
const GRACE_SAMPLES = 2
/** Seconds a shed client should wait: about two samples of the event-loop delay. */
export const OVERLOAD_RETRY_AFTER_S = 2

async function overload (app: FastifyInstance): Promise<void> {
  const maxEventLoopDelay = app.config.maxEventLoopDelayMs
  if (maxEventLoopDelay === 0) return
  let armedAt = Number.POSITIVE_INFINITY
  app.addHook('onReady', async () => { armedAt = Date.now() + GRACE_SAMPLES * SAMPLE_INTERVAL_MS })

  const refuse = async (req: FastifyRequest, reply: FastifyReply, type: string, value: number | undefined): Promise<void> => {
    if (req.routeOptions.config.shedLoad !== true || Date.now() < armedAt) return
    req.log.debug({ type, value }, 'request shed under load')
    reply.header('retry-after', String(OVERLOAD_RETRY_AFTER_S))
    throw new Overloaded()
  }
  await app.register(underPressure, {
    maxEventLoopDelay, sampleInterval: SAMPLE_INTERVAL_MS, pressureHandler: refuse, exposeStatusRoute: false,
  })
}

export default fp(overload, { name: 'overload', fastify: '5.x', dependencies: ['route-access'] })
