/**
 * Responses are serialized with `JSON.stringify`, never by their schema. Route schemas document
 * the answers (and test/contract checks real answers against them), but serialization must not
 * coerce or drop what the session holds (API.md: a Session's `header` is the stored header object
 * verbatim) nor fail on a record of an odd but valid file (SPEC.md §5.4), which a schema-driven
 * serializer does for a missing required key. Entries of any depth serialize (src/session/json-text.ts).
 */
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { stringifyJson } from '../session/json-text.js'

async function serialization (app: FastifyInstance): Promise<void> {
  app.setSerializerCompiler(() => (data) => stringifyJson(data) ?? '')
}

export default fp(serialization, { name: 'serialization', fastify: '5.x' })
