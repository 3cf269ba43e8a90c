/**
 * Search (README "Search", in API.md's terms): one registry call over the caller's tenant.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { SearchSessions } from './search.schema.js'

const search: FastifyPluginAsyncTypebox = async (app) => {
  app.get('', { schema: SearchSessions }, async (req) => await req.tenant.registry.search(req.query))
}

export default search
