/**
 * The OpenAPI 3.1 document generated from the route schemas (STYLE.md §5), served at
 * `GET /openapi.json`, and the human-readable reference at `GET /docs`. Registered before any
 * route so that every route is collected.
 */
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'

/** Version of the HTTP contract (API.md "v1"), not of the package. */
export const API_VERSION = '1.0.0'

const TAGS = [
  { name: 'sessions', description: 'Session lifecycle, listing and import/export' },
  { name: 'entries', description: 'Entries, leaf, tree and context of a session' },
  { name: 'events', description: 'Live Server-Sent Events streams' },
  { name: 'blobs', description: 'Content-addressed image bytes' },
  { name: 'health', description: 'Liveness and readiness' },
]

async function openapi (app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'session-store',
        version: API_VERSION,
        description: 'Hosted storage for coding-agent sessions: the JSONL session model behind ' +
          'HTTP, with live SSE and content-addressed blobs. Every error is application/problem+json.',
      },
      tags: TAGS,
    },
    refResolver: {
      // Components are named by `$id` (`Problem`), not `def-0` (STYLE.md §4).
      buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`),
    },
  })
  await app.register(swaggerUi, { routePrefix: '/docs' })
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger())
}

export default fp(openapi, { name: 'openapi', fastify: '5.x' })
