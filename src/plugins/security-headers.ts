/**
 * Headers every answer carries: `X-Content-Type-Options: nosniff`, so that a browser never
 * second-guesses a declared content type (a blob served as octet-stream stays bytes). Live
 * streams write their own head with the same header (src/http/sse.ts).
 */
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'

async function securityHeaders (app: FastifyInstance): Promise<void> {
  // Callback style: an async hook would cost a promise and a microtask on every answer.
  app.addHook('onSend', (_req, reply, payload, done) => {
    reply.header('x-content-type-options', 'nosniff')
    done(null, payload)
  })
}

export default fp(securityHeaders, { name: 'security-headers', fastify: '5.x' })
