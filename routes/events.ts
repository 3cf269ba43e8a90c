/**
 * Live streams (API.md "Live stream (SSE)"): one session's entries, and every session's
 * lifecycle. Streams end when the app closes (`preClose`, before the server waits for its
 * connections) or the registry shuts down.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { resumeAfter, streamGlobal, streamSession, type StreamSet } from '../src/http/event-streams.js'
import { GlobalEvents, SessionEvents } from './events.schema.js'

const events: FastifyPluginAsyncTypebox = async (app) => {
  const streams: StreamSet = new Set()
  app.addHook('preClose', async () => {
    for (const conn of [...streams]) conn.end()
  })

  // No HEAD twins: a stream has no headers-only form.
  // `stream`: `?access_token=` is accepted here (EventSource cannot send headers), and each
  // stream holds one of its token's MAX_SSE_PER_TOKEN slots (src/plugins/access.ts).
  app.get('/sessions/:id/events', { schema: SessionEvents, exposeHeadRoute: false, config: { stream: true } }, async (req, reply) => {
    const after = resumeAfter(req.headers['last-event-id'], req.query.after)
    await streamSession(req.tenant.registry, streams, req, reply, req.params.id, after, req.query.blobs)
    return reply
  })

  // The tenant's own registry: its lifecycle events only.
  app.get('/events', { schema: GlobalEvents, exposeHeadRoute: false, config: { stream: true } }, async (req, reply) => {
    streamGlobal(req.tenant.registry, streams, req, reply, req.headers['last-event-id'])
    return reply
  })
}

export default events
