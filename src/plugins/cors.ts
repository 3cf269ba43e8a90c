/**
 * Cross-origin access for browser clients, off unless CORS_ORIGINS names origins. The listed
 * origins may send credentials; `*` allows any origin, without credentials. Preflights are
 * answered before authentication (a browser sends them without the Authorization header); the
 * headers clients need to read (ETag, Location, Idempotent-Replayed, Retry-After) are exposed.
 */
import cors from '@fastify/cors'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'

/** Request headers a cross-origin client may send. */
export const CORS_ALLOWED_HEADERS = ['Authorization', 'Content-Type', 'If-Match', 'If-None-Match', 'Idempotency-Key', 'Last-Event-ID']
/** Response headers a cross-origin client may read. */
export const CORS_EXPOSED_HEADERS = ['ETag', 'Location', 'Idempotent-Replayed', 'Retry-After', 'WWW-Authenticate']

async function corsPlugin (app: FastifyInstance): Promise<void> {
  const origins = app.config.corsOrigins
  if (origins.length === 0) return
  const any = origins.length === 1 && origins[0] === '*'
  await app.register(cors, {
    origin: any ? '*' : origins,
    credentials: !any,
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    allowedHeaders: CORS_ALLOWED_HEADERS,
    exposedHeaders: CORS_EXPOSED_HEADERS,
    maxAge: 600,
  })
}

export default fp(corsPlugin, { name: 'cors', fastify: '5.x' })
