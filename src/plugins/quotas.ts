/**
 * Quotas per tenant (src/hygiene/policy.ts): before a route marked `config.quota` reads its body,
 * a tenant that stores its quota of bytes (sessions and blobs together), or would with this body,
 * is refused with 507 `SS_QUOTA_EXCEEDED` and its usage and limit; a body larger than the whole
 * byte quota is 413 with the same code; a route that creates a session (`PUT file` when the
 * session does not exist) is refused at the quota of sessions. Reads, exports and deletes are never checked, so a full tenant can always make room.
 * What a write accepted adds (its `Content-Length`) is charged to the figures held until they are
 * counted again; a delete drops them. Registered after access (it needs `req.tenant`).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify'
import fp from 'fastify-plugin'
import { problemResponses, QuotaBodyTooLarge, QuotaExceeded, type QuotaFacts } from '../errors.js'

const withQuota = <E extends Error>(err: E, quota: QuotaFacts): E => Object.assign(err, { quota })

/** The session id of the route's path (`:id`), `''` when it has none. */
const idOf = (req: FastifyRequest): string => (req.params as { id?: string }).id ?? ''

/** The body's declared length; 0 when it has none (a chunked body is charged once counted again). */
function bodyBytes (req: FastifyRequest): number {
  const length = Number(req.headers['content-length'])
  return Number.isSafeInteger(length) && length > 0 ? length : 0
}

async function quotas (app: FastifyInstance): Promise<void> {
  app.addHook('onRoute', (route: RouteOptions) => {
    const schema = route.schema as { hide?: boolean, response?: Record<number, unknown> } | undefined
    if (route.config?.quota === undefined || schema === undefined || schema.hide === true) return
    route.schema = { ...schema, response: { ...schema.response, ...problemResponses(413, 507) } }
  })

  /** The refusal of a request whose tenant stores its quota, or would with this body; undefined to go on. */
  const refusal = async (req: FastifyRequest, kind: string, byteLimit: number, sessionLimit: number): Promise<Error | undefined> => {
    const tenant = req.tenant
    const countsSessions = sessionLimit > 0 && (kind === 'session' || (kind === 'file' && !await app.hygiene.exists(tenant.name, idOf(req))))
    if (byteLimit === 0 && !countsSessions) return undefined
    const usage = await app.hygiene.usage.of(tenant.name, tenant.blobs)
    const incoming = bodyBytes(req)
    if (byteLimit > 0) {
      const facts: QuotaFacts = { resource: 'bytes', usage: usage.bytes, limit: byteLimit }
      if (incoming > byteLimit) return withQuota(new QuotaBodyTooLarge(incoming, byteLimit), facts)
      if (usage.bytes + incoming > byteLimit) return withQuota(new QuotaExceeded('byte', usage.bytes, byteLimit), facts)
    }
    if (countsSessions && usage.sessions >= sessionLimit) {
      return withQuota(new QuotaExceeded('session', usage.sessions, sessionLimit), { resource: 'sessions', usage: usage.sessions, limit: sessionLimit })
    }
    return undefined
  }

  // Callback style: both hooks run on every write, and a tenant without quotas needs no promise.
  app.addHook('onRequest', (req: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void) => {
    const kind = req.routeOptions.config.quota
    if (kind === undefined || req.tenant === null) return done()
    const { bytes, sessions } = app.hygiene.policy(req.tenant.name).quota
    if (bytes === 0 && sessions === 0) return done()
    refusal(req, kind, bytes, sessions).then((err) => { done(err) }, done)
  })

  app.addHook('onSend', (req: FastifyRequest, reply: FastifyReply, payload: unknown, done: (err: null, payload: unknown) => void) => {
    if (req.tenant !== null && reply.statusCode < 300) {
      const kind = req.routeOptions.config.quota
      if (kind !== undefined) app.hygiene.usage.charge(req.tenant.name, bodyBytes(req), kind !== 'data' && reply.statusCode === 201 ? 1 : 0)
      else if (req.method === 'DELETE') app.hygiene.usage.forget(req.tenant.name)
    }
    done(null, payload)
  })
}

export default fp(quotas, { name: 'quotas', fastify: '5.x', dependencies: ['access'] })
