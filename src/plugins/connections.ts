/**
 * Caps on the sockets one server holds (src/http/connection-table.ts): MAX_CONNECTIONS in total
 * and MAX_CONNECTIONS_PER_CLIENT from one remote address, both lowered to what the process's
 * descriptor limit allows, read once at start (src/http/descriptor-limit.ts). A socket beyond a
 * cap is destroyed before any byte is read; at the total cap a newcomer from a less busy address
 * takes the place of one of the busiest address's sockets, preferably one that serves no request.
 * Running out of descriptors on `accept` is logged, never thrown: libuv closes the connections it
 * cannot take and goes on accepting once descriptors are free. Live streams are exempt from the idle timeout (CONNECTION_TIMEOUT_MS):
 * they are meant to stay open, and their heartbeats are not requests. The request, header and
 * keep-alive timeouts are Fastify's own options (src/app.ts); stalled bodies are cut by
 * src/plugins/request-bodies.ts.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify'
import fp from 'fastify-plugin'
import type { Socket } from 'node:net'
import { ConnectionTable } from '../http/connection-table.js'
import { connectionCaps, readDescriptorLimit } from '../http/descriptor-limit.js'

export interface ConnectionsOptions {
  /** The soft descriptor limit; default: this process's, read now. */
  descriptorLimit?: number
}

/** One log line per this many refusals: a flood must not flood the log too. */
const LOG_EVERY = 100

async function connections (app: FastifyInstance, options: ConnectionsOptions): Promise<void> {
  const descriptorLimit = options.descriptorLimit ?? readDescriptorLimit()
  const caps = connectionCaps({ total: app.config.maxConnections, perClient: app.config.maxConnectionsPerClient }, descriptorLimit)
  app.log.info({ descriptorLimit, maxConnections: caps.total, maxConnectionsPerClient: caps.perClient }, 'connection caps')
  if (caps.total > 0 || caps.perClient > 0) {
    const table = new ConnectionTable<Socket>(caps, servesNoRequest)
    let refused = 0
    let evicted = 0
    app.server.on('connection', (socket: Socket) => {
      const address = socket.remoteAddress ?? ''
      const admission = table.admit(address, socket)
      if (!admission.admitted) {
        if (refused++ % LOG_EVERY === 0) app.log.warn({ address, reason: admission.reason, caps, refused }, 'connection refused: connection cap reached')
        socket.destroy()
        return
      }
      socket.once('close', () => { table.remove(address, socket) })
      if (admission.evicted !== undefined) {
        if (evicted++ % LOG_EVERY === 0) app.log.warn({ address, caps, evicted }, 'connection closed to make room for another address')
        admission.evicted.destroy()
      }
    })
  }
  let acceptErrors = 0
  // After listening, so that Fastify's own handling of listen errors (EADDRINUSE) is untouched.
  app.server.once('listening', () => {
    app.server.on('error', (err: NodeJS.ErrnoException) => {
      if (acceptErrors++ % LOG_EVERY === 0) app.log.error({ err, acceptErrors }, 'accepting a connection failed')
    })
  })
  // Only live streams get the hook (route-access marks them before this runs): no other request pays for it.
  app.addHook('onRoute', (route: RouteOptions) => {
    if (route.config?.stream !== true) return
    const hooks = route.onRequest === undefined ? [] : Array.isArray(route.onRequest) ? route.onRequest : [route.onRequest]
    route.onRequest = [...hooks, keepStreamOpen]
  })
}

/**
 * True when `socket` serves no request now: it waits for one, or for the rest of one (headers or
 * body still arriving). Node keeps the response in progress on the socket.
 */
function servesNoRequest (socket: Socket): boolean {
  const res = (socket as Socket & { _httpMessage?: { req?: { complete?: boolean } } | null })._httpMessage
  return res === undefined || res === null || res.req?.complete === false
}

/** Lifts the idle timeout of a live stream's socket. Callback style, like every per-request hook. */
function keepStreamOpen (req: FastifyRequest, _reply: FastifyReply, done: () => void): void {
  // (`inject`ed requests have a socket without timeouts.)
  const socket = req.raw.socket as Socket | undefined
  if (typeof socket?.setTimeout === 'function') socket.setTimeout(0)
  done()
}

export default fp(connections, { name: 'connections', fastify: '5.x', dependencies: ['route-access'] })
