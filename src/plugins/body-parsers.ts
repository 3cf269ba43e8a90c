/**
 * Request bodies at the root scope. JSON is Fastify's own parser. JSONL bodies (session import,
 * API.md "Sessions") arrive as `application/x-ndjson`, `application/jsonl` or `text/plain` and
 * are parsed as one UTF-8 string, but only for a route that opts in, either with
 * `config: { textBody: true }` or with a string body schema. Any other route answers these types
 * 415, like every other non-JSON type. Blob routes replace all parsers in their own scope.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { UnsupportedMediaType } from '../errors.js'

export const TEXT_BODY_TYPES = ['application/x-ndjson', 'application/jsonl', 'text/plain'] as const

/** True when the matched route takes a text body. */
function acceptsText (req: FastifyRequest): boolean {
  const { config, schema } = req.routeOptions
  if (config.textBody === true) return true
  const body = schema?.body as { type?: unknown } | undefined
  return body?.type === 'string'
}

async function bodyParsers (app: FastifyInstance): Promise<void> {
  app.addContentTypeParser([...TEXT_BODY_TYPES], { parseAs: 'string' }, (req, body, done) => {
    if (acceptsText(req)) done(null, body)
    else done(new UnsupportedMediaType(String(req.headers['content-type'])), undefined)
  })
}

export default fp(bodyParsers, { name: 'body-parsers', fastify: '5.x' })
