/**
 * The OpenAPI 3.1 document generated from the route schemas (STYLE.md §5), served at
 * `GET /openapi.json`, and the human-readable reference at `GET /docs`. Registered before any
 * route so that every route is collected; both routes are part of the document themselves.
 */
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { finishOpenapiDocument } from './openapi-transform.js'

/** Version of the HTTP contract (API.md "v1"), not of the package. */
export const API_VERSION = '1.0.0'

const TAGS = [
  { name: 'sessions', description: 'Session lifecycle, listing and import/export' },
  { name: 'entries', description: 'Entries, leaf, tree and context of a session' },
  { name: 'search', description: "Full-text search of the caller's sessions" },
  { name: 'events', description: 'Live Server-Sent Events streams' },
  { name: 'blobs', description: 'Content-addressed image bytes' },
  { name: 'tokens', description: "Access tokens of the caller's tenant (admin scope)" },
  { name: 'usage', description: "What the caller's tenant stores, against its quotas" },
  { name: 'health', description: 'Liveness and readiness' },
  { name: 'docs', description: 'This document and its rendering' },
]

/**
 * How clients authenticate: a bearer token, or on the two live streams `?access_token=`
 * (EventSource cannot send headers). Without AUTH_TOKENS_FILE no credentials are needed, so the
 * default requirement lists the anonymous alternative `{}` too; public routes say `security: []`.
 */
const SECURITY_SCHEMES = {
  bearerAuth: {
    type: 'http',
    scheme: 'bearer',
    description: 'A token secret (`sst_…`) as `Authorization: Bearer <secret>`. Tokens belong to one tenant and ' +
      'carry scopes: `read` lists, reads, exports and subscribes; `write` adds every mutation; `admin` manages tokens.',
  },
  accessToken: {
    type: 'apiKey',
    in: 'query',
    name: 'access_token',
    description: 'The same secret as a query parameter, accepted only by the two live streams; ignored elsewhere.',
  },
} as const

const OpenapiDocument = {
  operationId: 'getOpenapiDocument',
  tags: ['docs'],
  summary: 'This OpenAPI 3.1 document',
  description: 'Generated from the route schemas; `/docs` renders it.',
  response: {
    200: {
      description: 'The document',
      content: {
        'application/json': {
          schema: Type.Object({ openapi: Type.String({ pattern: '^3\\.1\\.' }) }, { additionalProperties: true }),
        },
      },
    },
  },
}

async function openapi (app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'session-store',
        version: API_VERSION,
        license: { name: 'MIT', identifier: 'MIT' },
        description: 'Hosted storage for coding-agent sessions: the JSONL session model behind ' +
          'HTTP, with live SSE and content-addressed blobs. Every error is application/problem+json.',
      },
      servers: [{ url: 'http://127.0.0.1:8787', description: 'The default address (HOST, PORT)' }],
      tags: TAGS,
      components: { securitySchemes: SECURITY_SCHEMES },
      // With tokens every non-public route needs one; in open mode none does.
      security: app.tokens === null ? [{ bearerAuth: [] }, {}] : [{ bearerAuth: [] }],
    },
    refResolver: {
      // Components are named by `$id` (`Problem`), not `def-0` (STYLE.md §4).
      buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`),
    },
    transformObject: (input) => 'openapiObject' in input
      ? finishOpenapiDocument(input.openapiObject, { authRequired: app.tokens !== null })
      : input.swaggerObject,
  })
  await app.register(swaggerUi, { routePrefix: '/docs' })
  // Sent as a string: the document is passed through as is, never re-serialized by a schema.
  app.get('/openapi.json', { schema: OpenapiDocument, config: { scope: 'public' } }, async (_req, reply) => {
    return reply.type('application/json; charset=utf-8').send(JSON.stringify(app.swagger()))
  })
}

export default fp(openapi, { name: 'openapi', fastify: '5.x' })
