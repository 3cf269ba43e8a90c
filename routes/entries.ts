/**
 * Entries of a session (API.md "Entries"): paging, single reads, batch appends, the leaf,
 * branch summaries, tree, branch and context. Each handler is one registry call.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import {
  AppendEntries, BranchSummary, GetBranch, GetContext, GetEntries, GetEntry, GetTree, PutLeaf,
} from './entries.schema.js'

const entries: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/:id/entries', { schema: GetEntries }, async (req) => {
    const { after = 0, limit = 100, blobs } = req.query
    return await app.registry.entries(req.params.id, after, limit, blobs)
  })

  app.get('/:id/entries/:entryId', { schema: GetEntry }, async (req) => {
    return await app.registry.entry(req.params.id, req.params.entryId, req.query.blobs)
  })

  app.post('/:id/entries', { schema: AppendEntries }, async (req, reply) => {
    const { result, replayed } = await app.registry.append(req.params.id, req.body, {
      ifMatch: req.headers['if-match'], idempotencyKey: req.headers['idempotency-key'], blobs: req.query.blobs,
    })
    if (replayed) reply.header('idempotent-replayed', 'true')
    return reply.code(201).send(result)
  })

  app.put('/:id/leaf', { schema: PutLeaf }, async (req, reply) => {
    const moved = await app.registry.setLeaf(req.params.id, req.body.leafId, req.headers['if-match'])
    return reply.header('etag', moved.etag).send(moved)
  })

  app.post('/:id/branch-summary', { schema: BranchSummary }, async (req, reply) => {
    const { id } = req.params
    const created = await app.registry.branchSummary(id, req.body, req.headers['if-match'], req.query.blobs)
    return reply.code(201).send(created)
  })

  app.get('/:id/tree', { schema: GetTree }, async (req) => await app.registry.tree(req.params.id))

  app.get('/:id/branch', { schema: GetBranch }, async (req) => {
    return { entries: await app.registry.branch(req.params.id, req.query.leafId, req.query.blobs) }
  })

  app.get('/:id/context', { schema: GetContext }, async (req) => {
    return await app.registry.context(req.params.id, req.query.leafId, req.query.blobs)
  })
}

export default entries
