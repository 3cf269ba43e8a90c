/**
 * Storage hygiene of the caller's tenant: `POST /v1/blobs/gc` runs a collection of its
 * unreferenced blobs now (admin scope; src/hygiene/blob-gc.ts), `GET /v1/usage` counts what it
 * stores against its quotas (src/plugins/quotas.ts).
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { Socket } from 'node:net'
import { CollectBlobs, GetUsage } from './hygiene.schema.js'

const orNull = (n: number): number | null => n > 0 ? n : null

const hygiene: FastifyPluginAsyncTypebox = async (app) => {
  app.post('/blobs/gc', { schema: CollectBlobs, config: { scope: 'admin' } }, async (req) => {
    // A large tenant's collection may keep the socket silent longer than CONNECTION_TIMEOUT_MS;
    // Node sets the keep-alive timeout again once the answer is sent.
    const socket = req.raw.socket as Socket | undefined
    if (typeof socket?.setTimeout === 'function') socket.setTimeout(0)
    return await app.hygiene.collect(req.tenant.name, req.query.dryRun === true)
  })

  app.get('/usage', { schema: GetUsage }, async (req) => {
    const { name, blobs } = req.tenant
    const usage = await app.hygiene.usage.of(name, blobs, true)
    const { quota, retention } = app.hygiene.policy(name)
    return {
      tenant: name,
      ...usage,
      quota: { bytes: orNull(quota.bytes), sessions: orNull(quota.sessions) },
      retention: { days: orNull(retention.days), keepLabelled: retention.keepLabelled },
    }
  })
}

export default hygiene
