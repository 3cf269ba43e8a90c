/**
 * Entries of a session (API.md "Entries"): paging, single reads, batch appends, the leaf,
 * branch summaries, tree, branch and context. Each handler is one registry call; every answer
 * carries the session's `ETag` as of that read or change.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { BatchTooLarge } from '../src/errors.js'
import { jsonStream } from '../src/http/json-stream.js'
import type { Tagged } from '../src/registry/session-registry.js'
import {
  AppendEntries, BranchSummary, GetBranch, GetContext, GetEntries, GetEntry, GetTree, PutLeaf,
} from './entries.schema.js'
import { AppendRecords } from './records.schema.js'

/** The content type of every JSON answer. */
const JSON_TYPE = 'application/json; charset=utf-8'

/**
 * The append body one NewEntry alone (API.md "Entries": `{entries, parentId?}` or one NewEntry)
 * becomes a batch of one, its `parentId` the batch's, so that one schema validates both forms.
 * Callback style, like `checkBatchSize`.
 */
export function singleEntryAsBatch (req: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void): void {
  const body = req.body
  if (typeof body === 'object' && body !== null && !Array.isArray(body) && Object.hasOwn(body, 'type') && !Object.hasOwn(body, 'entries')) {
    // Without a parentId the body is the entry as it is (the append copies its fields anyway).
    if (!Object.hasOwn(body, 'parentId')) {
      req.body = { entries: [body] }
    } else {
      const { parentId, ...entry } = body as Record<string, unknown>
      req.body = { entries: [entry], parentId }
    }
  }
  done()
}

/** Sets the `ETag` header and returns the value to send. */
function tagged<T> (reply: FastifyReply, { value, etag }: Tagged<T>): T {
  reply.header('etag', etag)
  return value
}

/** The request body's length for the memory bounds, when the client declared it. */
function bodyLength (header: string | undefined): { bytes?: number } {
  const bytes = header === undefined ? Number.NaN : Number(header)
  return Number.isSafeInteger(bytes) ? { bytes } : {}
}

const entries: FastifyPluginAsyncTypebox = async (app) => {
  /**
   * MAX_BATCH_ENTRIES (0 = no cap), checked before the batch's entries are validated one by one. Callback
   * style: an async hook would cost a promise and a microtask on every append.
   */
  const checkBatchSize = (req: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void): void => {
    const batch = (req.body as { entries?: unknown } | undefined)?.entries
    const max = app.config.maxBatchEntries
    done(max > 0 && Array.isArray(batch) && batch.length > max ? new BatchTooLarge(batch.length, max) : undefined)
  }

  const checkRecordsSize = (req: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void): void => {
    const batch = (req.body as { records?: unknown } | undefined)?.records
    const max = app.config.maxBatchEntries
    done(max > 0 && Array.isArray(batch) && batch.length > max ? new BatchTooLarge(batch.length, max) : undefined)
  }

  app.get('/:id/entries', { schema: GetEntries }, async (req, reply) => {
    const { after = 0, limit = 100, blobs } = req.query
    return tagged(reply, await req.tenant.registry.entries(req.params.id, after, limit, blobs))
  })

  app.get('/:id/entries/:entryId', { schema: GetEntry }, async (req, reply) => {
    return tagged(reply, await req.tenant.registry.entry(req.params.id, req.params.entryId, req.query.blobs))
  })

  app.post('/:id/entries', { schema: AppendEntries, config: { quota: 'data' }, preValidation: [singleEntryAsBatch, checkBatchSize] }, async (req, reply) => {
    const { result, etag, replayed, json } = await req.tenant.registry.append(req.params.id, req.body, {
      ifMatch: req.headers['if-match'],
      idempotencyKey: req.headers['idempotency-key'],
      blobs: req.query.blobs,
      ...bodyLength(req.headers['content-length']),
    })
    if (replayed) reply.header('idempotent-replayed', 'true')
    reply.code(201).header('etag', etag)
    // The answer's text is made already (of the entries' texts): sent as it is.
    if (json !== undefined) return reply.type(JSON_TYPE).send(json as unknown as typeof result)
    return reply.send(result)
  })

  app.post('/:id/records', { schema: AppendRecords, config: { quota: 'data' }, preValidation: checkRecordsSize }, async (req, reply) => {
    const { result, etag, replayed } = await req.tenant.registry.appendRecords(req.params.id, req.body, {
      ifMatch: req.headers['if-match'],
      idempotencyKey: req.headers['idempotency-key'],
      ...bodyLength(req.headers['content-length']),
    })
    if (replayed) reply.header('idempotent-replayed', 'true')
    return reply.code(result.appended > 0 || replayed ? 201 : 200).header('etag', etag).send(result)
  })

  app.put('/:id/leaf', { schema: PutLeaf }, async (req, reply) => {
    const moved = await req.tenant.registry.setLeaf(req.params.id, req.body.leafId, req.headers['if-match'], req.body.durable)
    return reply.header('etag', moved.etag).send(moved)
  })

  app.post('/:id/branch-summary', { schema: BranchSummary, config: { quota: 'data' } }, async (req, reply) => {
    const { id } = req.params
    const created = await req.tenant.registry.branchSummary(id, req.body, req.headers['if-match'], req.query.blobs)
    return reply.code(201).send(tagged(reply, created))
  })

  app.get('/:id/tree', { schema: GetTree }, async (req, reply) => tagged(reply, await req.tenant.registry.tree(req.params.id)))

  app.get('/:id/branch', { schema: GetBranch }, async (req, reply) => {
    const { value, etag } = await req.tenant.registry.branch(req.params.id, req.query.leafId, req.query.blobs)
    return tagged(reply, { value: { entries: value }, etag })
  })

  // Sent as it is serialized (a long session's context runs to tens of MB).
  app.get('/:id/context', { schema: GetContext }, async (req, reply) => {
    const context = tagged(reply, await req.tenant.registry.context(req.params.id, req.query.leafId, req.query.blobs))
    // The schema documents the streamed JSON; the type provider only knows objects.
    const body = jsonStream(context, 'messages') as unknown as typeof context
    return reply.type('application/json; charset=utf-8').send(body)
  })
}

export default entries
