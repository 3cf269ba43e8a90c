/**
 * Caps on the sockets one server holds: MAX_CONNECTIONS in total (Node's `maxConnections`:
 * beyond it a new socket is closed at once) and MAX_CONNECTIONS_PER_CLIENT from one remote
 * address (beyond it the new socket is destroyed before any byte is read). Live streams are
 * exempt from the idle timeout (CONNECTION_TIMEOUT_MS): they are meant to stay open, and their
 * heartbeats are not requests. The request, header and keep-alive timeouts are Fastify's own
 * options (src/app.ts).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify'
import fp from 'fastify-plugin'
import type { Socket } from 'node:net'

async function connections (app: FastifyInstance): Promise<void> {
  const { maxConnections, maxConnectionsPerClient } = app.config
  if (maxConnections > 0) app.server.maxConnections = maxConnections
  if (maxConnectionsPerClient > 0) {
    const open = new Map<string, number>()
    let refused = 0
    app.server.on('connection', (socket: Socket) => {
      const address = socket.remoteAddress ?? ''
      const held = open.get(address) ?? 0
      if (held >= maxConnectionsPerClient) {
        // One log line per 100 refusals: a flood must not flood the log too.
        if (refused++ % 100 === 0) app.log.warn({ address, limit: maxConnectionsPerClient, refused }, 'connection refused: too many from one address')
        socket.destroy()
        return
      }
      open.set(address, held + 1)
      socket.once('close', () => {
        const left = (open.get(address) ?? 1) - 1
        if (left > 0) open.set(address, left)
        else open.delete(address)
      })
    })
  }
  // Only live streams get the hook (route-access marks them before this runs): no other request pays for it.
  app.addHook('onRoute', (route: RouteOptions) => {
    if (route.config?.stream !== true) return
    const hooks = route.onRequest === undefined ? [] : Array.isArray(route.onRequest) ? route.onRequest : [route.onRequest]
    route.onRequest = [...hooks, keepStreamOpen]
  })
}

/** Lifts the idle timeout of a live stream's socket. Callback style, like every per-request hook. */
function keepStreamOpen (req: FastifyRequest, _reply: FastifyReply, done: () => void): void {
  // (`inject`ed requests have a socket without timeouts.)
  const socket = req.raw.socket as Socket | undefined
  if (typeof socket?.setTimeout === 'function') socket.setTimeout(0)
  done()
}

export default fp(connections, { name: 'connections', fastify: '5.x', dependencies: ['route-access'] })
