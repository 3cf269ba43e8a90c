/**
 * Feeds the process's Prometheus instruments (src/metrics/instruments.ts) from the HTTP layer:
 * every answered request by method, route pattern and status; append latency; and, read at
 * scrape time, the live streams and loaded sessions of every tenant of this app.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { addGaugeSource, appendDuration, countRequest, storageInfo } from '../metrics/instruments.js'

/** The route pattern of the entries append, whose latency is its own histogram. */
const APPEND_ROUTE = '/v1/sessions/:id/entries'

async function metrics (app: FastifyInstance): Promise<void> {
  const each = (read: (r: { streamCount: number, openSessionCount: number }) => number) => (): number => {
    let total = 0
    for (const name of app.tenants.names) total += read(app.tenants.get(name).registry)
    return total
  }
  const removers = [
    addGaugeSource('ss_open_streams', each((r) => r.streamCount)),
    addGaugeSource('ss_open_sessions', each((r) => r.openSessionCount)),
  ]
  storageInfo.set({ kind: app.config.storage }, 1)
  app.addHook('onClose', async () => { for (const remove of removers) remove() })

  app.addHook('onResponse', (req: FastifyRequest, reply: FastifyReply, done: () => void) => {
    // Unmatched URLs share one label: a label per raw path would grow without bound.
    const route = req.routeOptions.url ?? 'unmatched'
    countRequest(req.method, route, reply.statusCode)
    if (route === APPEND_ROUTE && req.method === 'POST') appendDuration.observe(reply.elapsedTime / 1000)
    done()
  })
}

export default fp(metrics, { name: 'metrics', fastify: '5.x' })
