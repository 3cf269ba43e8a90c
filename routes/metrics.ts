/**
 * `GET /metrics` (API.md "Health and docs"): the process's instruments in the Prometheus text
 * format. Counting requests is the metrics plugin's job (src/plugins/metrics.ts); this route
 * only renders. Public and never shed: a scraper must see an overloaded server too.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { renderMetrics } from '../src/metrics/instruments.js'
import { Metrics } from './metrics.schema.js'

const metrics: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/metrics', { schema: Metrics, config: { scope: 'public', shedLoad: false } }, async (_req, reply) => {
    const { contentType, body } = await renderMetrics()
    return await reply.type(contentType).send(body)
  })
}

export default metrics
